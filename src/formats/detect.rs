//! Recognising a file's format from its content (and, as a hint, its name).

use super::{Format, ImportError, native};
use serde_json::Value;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

/// The format of a file, from its first record.
pub fn detect(path: &Path) -> Result<Format, ImportError> {
    let io = |source| ImportError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut reader = BufReader::new(File::open(path).map_err(io)?);
    let mut first_line = Vec::new();
    reader.read_until(b'\n', &mut first_line).map_err(io)?;
    let unrecognised = |reason: String| ImportError::Unrecognised {
        path: path.to_path_buf(),
        reason,
        known: Format::ALL.map(Format::name).join(", "),
    };
    let text = String::from_utf8_lossy(&first_line);
    let value: Value = serde_json::from_str(text.trim())
        .map_err(|_| unrecognised("the first line is not a JSON record".into()))?;
    if native::looks_like(&value) {
        return Ok(Format::Rollscope);
    }
    Err(unrecognised(
        "no known format has records like its first one".into(),
    ))
}
