//! What can go wrong in training, named so callers can match.

use crate::model::ModelError;
use std::path::{Path, PathBuf};

/// An error of the train module.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    /// The model could not be loaded, run or saved.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A tensor operation failed.
    #[error(transparent)]
    Candle(#[from] candle_core::Error),
    /// A training input is malformed: which sample or field, and what to do.
    #[error("{0}")]
    Input(String),
    /// The loss or its gradient is not finite; no step was taken.
    #[error(
        "the gradient norm is {grad_norm}; the step was skipped (lower the learning rate or \
         check the batch for empty masks and extreme log-probs)"
    )]
    NonFiniteGradient {
        /// The norm found.
        grad_norm: f64,
    },
    /// A setting cannot be used.
    #[error("config: `{field}`: {problem}")]
    Config {
        /// The setting.
        field: String,
        /// What is wrong and what to do.
        problem: String,
    },
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A checkpoint or adapter file is missing something or holds a value we cannot use.
    #[error("{}: {problem}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong and what to do.
        problem: String,
    },
}

impl TrainError {
    /// An I/O error on `path`.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// A problem with the contents of `path`.
    pub fn file(path: &Path, problem: impl Into<String>) -> Self {
        Self::File {
            path: path.to_path_buf(),
            problem: problem.into(),
        }
    }

    /// A setting that cannot be used.
    pub fn config(field: &str, problem: impl Into<String>) -> Self {
        Self::Config {
            field: field.to_string(),
            problem: problem.into(),
        }
    }
}

/// The train module's result.
pub type Result<T> = std::result::Result<T, TrainError>;
