//! What can go wrong when loading, building or running a model, named so callers can match.

use std::path::PathBuf;

/// An error of the model module: each names the file and field or the tensor at fault.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// A file the model folder must hold is missing.
    #[error("{}: missing {file} ({hint})", dir.display())]
    MissingFile {
        /// The model folder.
        dir: PathBuf,
        /// The file name that was looked for.
        file: String,
        /// What the file is for and where it comes from.
        hint: String,
    },
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A field of a JSON file is missing or has a value we cannot use.
    #[error("{}: field `{field}`: {problem}", file.display())]
    Field {
        /// The file.
        file: PathBuf,
        /// The field, dotted for nested ones.
        field: String,
        /// What is wrong and what to do.
        problem: String,
    },
    /// A weight file lacks a tensor the architecture needs.
    #[error("{}: no tensor `{name}` (the config's architecture needs it)", file.display())]
    MissingTensor {
        /// The weight file (or the index of a sharded checkpoint).
        file: PathBuf,
        /// The tensor name.
        name: String,
    },
    /// A tensor's shape disagrees with the config.
    #[error("{}: tensor `{name}` has shape {found:?}, but config.json implies {expected:?}", file.display())]
    TensorShape {
        /// The weight file.
        file: PathBuf,
        /// The tensor name.
        name: String,
        /// Its shape in the file.
        found: Vec<usize>,
        /// The shape the config implies.
        expected: Vec<usize>,
    },
    /// The tokenizer lacks a token the chat template or the model needs.
    #[error("{}: no single token `{token}` ({needed_by})", file.display())]
    MissingToken {
        /// The tokenizer file.
        file: PathBuf,
        /// The token text.
        token: String,
        /// Who needs it.
        needed_by: String,
    },
    /// The tokenizer file could not be read, or text could not be encoded or decoded.
    #[error("{}: {message}", file.display())]
    Tokenizer {
        /// The tokenizer file.
        file: PathBuf,
        /// What the tokenizers library said.
        message: String,
    },
    /// The chat template could not be compiled or rendered.
    #[error("chat template ({source_name}): {message}")]
    Template {
        /// Where the template came from (`chat_template.jinja`, `tokenizer_config.json`).
        source_name: String,
        /// What went wrong, with the template line when known.
        message: String,
    },
    /// A sequence would grow past the model's context window.
    #[error("{tokens} tokens do not fit the context of {limit} tokens (max_position_embeddings)")]
    ContextFull {
        /// How many tokens the sequence would hold.
        tokens: usize,
        /// The model's context window.
        limit: usize,
    },
    /// A generation request that cannot be served as asked.
    #[error("{0}")]
    Request(String),
    /// The compute backend failed.
    #[error("tensor computation failed: {0}")]
    Candle(#[from] candle_core::Error),
}

/// The result type of the model module.
pub type Result<T> = std::result::Result<T, ModelError>;

impl ModelError {
    /// A field error in `file`.
    pub fn field(
        file: impl Into<PathBuf>,
        field: impl Into<String>,
        problem: impl Into<String>,
    ) -> Self {
        Self::Field {
            file: file.into(),
            field: field.into(),
            problem: problem.into(),
        }
    }

    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}
