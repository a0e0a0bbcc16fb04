//! What every JSON reader of the formats shares: the size limit of one record, the
//! byte-order mark, serde_json's errors in words, and a small JSONL text as numbered values.

use serde_json::Value;

/// The largest JSON line, document or archive member read (512 MiB).
pub const MAX_RECORD_BYTES: usize = 512 << 20;

/// The bytes without a leading UTF-8 byte-order mark.
pub fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// A serde_json error in words, saying when the file looks cut off.
pub fn json_error(error: &serde_json::Error) -> String {
    if error.is_eof() {
        format!("the JSON ends too early (truncated file?): {error}")
    } else {
        format!("not valid JSON: {error}")
    }
}

/// The non-blank lines of a JSONL text (a task file, a shipped set) as JSON values with their
/// 1-based line numbers; the first bad line is an error naming `origin` and the line.
pub fn json_lines(text: &str, origin: &str) -> Result<Vec<(usize, Value)>, String> {
    let mut rows = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value = serde_json::from_str(line)
            .map_err(|error| format!("{origin}:{}: {}", index + 1, json_error(&error)))?;
        rows.push((index + 1, value));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_number_the_lines_skip_blanks_and_name_the_bad_one() {
        let rows = json_lines("{\"a\": 1}\n\n  \n[2]\n", "tasks.jsonl").unwrap();
        assert_eq!(
            rows,
            [
                (1, serde_json::json!({"a": 1})),
                (4, serde_json::json!([2]))
            ]
        );
        let error = json_lines("{}\n{\"a\": \n", "tasks.jsonl").unwrap_err();
        assert!(
            error.starts_with("tasks.jsonl:2: the JSON ends too early"),
            "{error}"
        );
    }
}
