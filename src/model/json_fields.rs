//! Typed reads of JSON object fields whose errors name the file and the field.

use super::error::{ModelError, Result};
use serde_json::{Map, Value};
use std::path::Path;

/// A JSON object read from a file, with accessors that report the field on error.
pub struct Fields<'a> {
    file: &'a Path,
    object: &'a Map<String, Value>,
    prefix: String,
}

impl<'a> Fields<'a> {
    /// The top-level object of `value`, read from `file`.
    pub fn new(file: &'a Path, value: &'a Value) -> Result<Self> {
        let object = value
            .as_object()
            .ok_or_else(|| ModelError::field(file, "(top level)", "expected a JSON object"))?;
        Ok(Self {
            file,
            object,
            prefix: String::new(),
        })
    }

    fn name(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    /// An error about field `key`.
    pub fn error(&self, key: &str, problem: impl Into<String>) -> ModelError {
        ModelError::field(self.file, self.name(key), problem)
    }

    /// The raw value of `key`, treating JSON `null` as absent.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.object.get(key).filter(|value| !value.is_null())
    }

    /// A nested object, if present.
    pub fn object(&self, key: &str) -> Result<Option<Fields<'a>>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Object(object)) => Ok(Some(Fields {
                file: self.file,
                object,
                prefix: format!("{}.", self.name(key)),
            })),
            Some(_) => Err(self.error(key, "expected an object")),
        }
    }

    /// A non-negative integer, if present.
    pub fn opt_usize(&self, key: &str) -> Result<Option<usize>> {
        match self.get(key) {
            None => Ok(None),
            Some(value) => value
                .as_u64()
                .and_then(|number| usize::try_from(number).ok())
                .map(Some)
                .ok_or_else(|| {
                    self.error(
                        key,
                        format!("expected a non-negative integer, found {value}"),
                    )
                }),
        }
    }

    /// A positive integer that must be present.
    pub fn positive(&self, key: &str) -> Result<usize> {
        match self.opt_usize(key)? {
            Some(0) => Err(self.error(key, "must be greater than 0")),
            Some(number) => Ok(number),
            None => Err(self.error(key, "missing")),
        }
    }

    /// A number, if present.
    pub fn opt_f64(&self, key: &str) -> Result<Option<f64>> {
        match self.get(key) {
            None => Ok(None),
            Some(value) => value
                .as_f64()
                .map(Some)
                .ok_or_else(|| self.error(key, format!("expected a number, found {value}"))),
        }
    }

    /// A boolean, or `default` when absent.
    pub fn bool_or(&self, key: &str, default: bool) -> Result<bool> {
        match self.get(key) {
            None => Ok(default),
            Some(Value::Bool(flag)) => Ok(*flag),
            Some(value) => Err(self.error(key, format!("expected true or false, found {value}"))),
        }
    }

    /// A string, if present.
    pub fn opt_str(&self, key: &str) -> Result<Option<&'a str>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(value) => Err(self.error(key, format!("expected a string, found {value}"))),
        }
    }

    /// Token ids given as one integer or a list of integers (`eos_token_id`).
    pub fn token_ids(&self, key: &str) -> Result<Vec<u32>> {
        let as_id = |value: &Value| value.as_u64().and_then(|id| u32::try_from(id).ok());
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| {
                    as_id(item)
                        .ok_or_else(|| self.error(key, format!("expected token ids, found {item}")))
                })
                .collect(),
            Some(value) => as_id(value)
                .map(|id| vec![id])
                .ok_or_else(|| self.error(key, format!("expected a token id, found {value}"))),
        }
    }

    /// A token's text given as a string or as `{"content": "..."}` (tokenizer_config.json).
    pub fn token_text(&self, key: &str) -> Result<Option<&'a str>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(Value::Object(object)) => match object.get("content") {
                Some(Value::String(text)) => Ok(Some(text)),
                _ => Err(self.error(
                    key,
                    "expected a string or an object with a `content` string",
                )),
            },
            Some(value) => Err(self.error(key, format!("expected a token string, found {value}"))),
        }
    }
}

/// Reads and parses a JSON file.
pub fn read_json(path: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(path).map_err(|source| ModelError::io(path, source))?;
    serde_json::from_str(&text).map_err(|error| {
        ModelError::field(
            path,
            "(file)",
            format!(
                "not valid JSON at line {} column {}: {error}",
                error.line(),
                error.column()
            ),
        )
    })
}
