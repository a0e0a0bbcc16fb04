//! JSONL text as rows, the reading that every task file and shipped task set shares.

use serde_json::Value;

/// The non-blank lines of a JSONL text as JSON values with their 1-based line numbers.
pub fn read_lines(text: &str, origin: &str) -> anyhow::Result<Vec<(usize, Value)>> {
    let mut rows = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(line)
            .map_err(|error| anyhow::anyhow!("{origin}:{}: not valid JSON: {error}", index + 1))?;
        rows.push((index + 1, value));
    }
    Ok(rows)
}
