//! The tokenizer (`tokenizer.json`) and the special tokens `tokenizer_config.json` names.

use super::error::{ModelError, Result};
use super::json_fields::{Fields, read_json};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Each token's byte range `(start, end)` in the encoded text.
pub type ByteOffsets = Vec<(usize, usize)>;

/// A Hugging Face tokenizer with its file remembered for error messages.
#[derive(Clone, Debug)]
pub struct ChatTokenizer {
    inner: tokenizers::Tokenizer,
    file: PathBuf,
}

impl ChatTokenizer {
    /// Reads `tokenizer.json`.
    pub fn from_file(path: &Path) -> Result<Self> {
        let inner =
            tokenizers::Tokenizer::from_file(path).map_err(|error| ModelError::Tokenizer {
                file: path.to_path_buf(),
                message: format!("cannot read tokenizer: {error}"),
            })?;
        Ok(Self::new(inner, path))
    }

    /// Wraps a tokenizer built in memory (named `file` in errors).
    pub fn new(inner: tokenizers::Tokenizer, file: &Path) -> Self {
        Self {
            inner,
            file: file.to_path_buf(),
        }
    }

    /// The tokenizers library object, for what this wrapper does not cover.
    pub fn inner(&self) -> &tokenizers::Tokenizer {
        &self.inner
    }

    /// The file it was read from.
    pub fn file(&self) -> &Path {
        &self.file
    }

    fn error(&self, message: String) -> ModelError {
        ModelError::Tokenizer {
            file: self.file.clone(),
            message,
        }
    }

    /// Token ids of `text` with no special tokens added (as chat templates are tokenized).
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        Ok(self.encode_with_offsets(text)?.0)
    }

    /// Token ids of `text` and each token's byte range in it.
    pub fn encode_with_offsets(&self, text: &str) -> Result<(Vec<u32>, ByteOffsets)> {
        let encoding = self
            .inner
            .encode(text, false)
            .map_err(|error| self.error(format!("cannot encode text: {error}")))?;
        Ok((encoding.get_ids().to_vec(), encoding.get_offsets().to_vec()))
    }

    /// The text of `ids`, special tokens included unless `skip_special_tokens`.
    pub fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String> {
        self.inner
            .decode(ids, skip_special_tokens)
            .map_err(|error| self.error(format!("cannot decode tokens: {error}")))
    }

    /// The id of a token given by its text, if the vocabulary has it as one token.
    pub fn token_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    /// The text of one token id.
    pub fn token_text(&self, id: u32) -> Option<String> {
        self.inner.id_to_token(id)
    }

    /// The id of `token`, or an error saying who needs it.
    pub fn require(&self, token: &str, needed_by: &str) -> Result<u32> {
        self.token_id(token)
            .ok_or_else(|| ModelError::MissingToken {
                file: self.file.clone(),
                token: token.to_string(),
                needed_by: needed_by.to_string(),
            })
    }

    /// Vocabulary size including added tokens.
    pub fn vocab_size(&self) -> usize {
        self.inner.get_vocab_size(true)
    }

    /// The added (special) tokens with their ids, sorted by id.
    pub fn added_tokens(&self) -> Vec<(u32, String)> {
        let mut tokens: Vec<(u32, String)> = self
            .inner
            .get_added_tokens_decoder()
            .into_iter()
            .map(|(id, token)| (id, token.content))
            .collect();
        tokens.sort();
        tokens
    }

    /// Writes `tokenizer.json`.
    pub fn save(&self, path: &Path) -> Result<()> {
        self.inner
            .save(path, true)
            .map_err(|error| ModelError::Tokenizer {
                file: path.to_path_buf(),
                message: format!("cannot write tokenizer: {error}"),
            })
    }
}

/// What `tokenizer_config.json` says about special tokens and the chat template.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TokenizerConfig {
    /// The end-of-sequence (for chat models: end-of-turn) token text.
    pub eos_token: Option<String>,
    /// The beginning-of-sequence token text.
    pub bos_token: Option<String>,
    /// The padding token text.
    pub pad_token: Option<String>,
    /// The chat template kept inside the file (transformers 4 layout).
    pub chat_template: Option<String>,
    /// The file as read, written back unchanged when the model is saved.
    pub raw: Value,
}

impl TokenizerConfig {
    /// Reads `tokenizer_config.json`.
    pub fn load(path: &Path) -> Result<Self> {
        Self::from_json(path, read_json(path)?)
    }

    /// Parses the contents of a tokenizer config read from `path` (named in errors).
    pub fn from_json(path: &Path, raw: Value) -> Result<Self> {
        let fields = Fields::new(path, &raw)?;
        let chat_template = match fields.get("chat_template") {
            None => None,
            Some(Value::String(text)) => Some(text.clone()),
            Some(Value::Array(named)) => Some(pick_default_template(&fields, named)?),
            Some(_) => {
                return Err(fields.error(
                    "chat_template",
                    "expected a string or a list of named templates",
                ));
            }
        };
        Ok(Self {
            eos_token: fields.token_text("eos_token")?.map(str::to_string),
            bos_token: fields.token_text("bos_token")?.map(str::to_string),
            pad_token: fields.token_text("pad_token")?.map(str::to_string),
            chat_template,
            raw: raw.clone(),
        })
    }
}

/// The `default` entry of a list of `{"name", "template"}` (else the first one).
fn pick_default_template(fields: &Fields<'_>, named: &[Value]) -> Result<String> {
    let template_of = |entry: &Value| {
        entry
            .get("template")
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    named
        .iter()
        .find(|entry| entry.get("name").and_then(Value::as_str) == Some("default"))
        .or_else(|| named.first())
        .and_then(template_of)
        .ok_or_else(|| {
            fields.error(
                "chat_template",
                "a list of templates needs entries with `name` and `template`",
            )
        })
}
