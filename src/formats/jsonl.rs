//! Line-by-line reading of JSONL files that survives anything: invalid UTF-8, blank lines,
//! malformed JSON, huge lines. Each bad line becomes a `Problem`; good lines go on.

use super::intake::Intake;
use super::json_text::{MAX_RECORD_BYTES, json_error};
use super::{ImportError, ImportReport, Item};
use serde_json::Value;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

/// What a line becomes: `Ok(Err(why))` for a bad line, `Err` when the import must stop.
type LineOutcome = Result<Result<(), String>, ImportError>;

/// Reads `path` line by line, turns each JSON line into items with `parse` (which names the
/// field that is wrong when it fails), and hands them to `intake`.
pub fn read(
    path: &Path,
    intake: &mut Intake<'_, '_>,
    parse: impl FnMut(Value) -> Result<Vec<Item>, String>,
) -> Result<ImportReport, ImportError> {
    read_with_limit(path, intake, MAX_RECORD_BYTES, parse)
}

/// `read`, with lines longer than `limit` bytes skipped and reported.
fn read_with_limit(
    path: &Path,
    intake: &mut Intake<'_, '_>,
    limit: usize,
    mut parse: impl FnMut(Value) -> Result<Vec<Item>, String>,
) -> Result<ImportReport, ImportError> {
    read_text_with_limit(path, limit, |text, report| {
        let value: Value = match serde_json::from_str(text) {
            Ok(value) => value,
            Err(error) => return Ok(Err(json_error(&error))),
        };
        intake.record(value, &mut parse, report)
    })
}

/// Reads Rollscope's own JSONL: `parse` deserialises each line straight into typed records
/// (much faster than going through `Value` for large records), handed on as they are.
pub fn read_own_lines(
    path: &Path,
    intake: &mut Intake<'_, '_>,
    mut parse: impl FnMut(&str) -> Result<Vec<Item>, String>,
) -> Result<ImportReport, ImportError> {
    read_text_with_limit(path, MAX_RECORD_BYTES, |text, report| match parse(text) {
        Ok(items) => intake.own(items, report).map(Ok),
        Err(message) => Ok(Err(message)),
    })
}

fn read_text_with_limit(
    path: &Path,
    limit: usize,
    mut on_line: impl FnMut(&str, &mut ImportReport) -> LineOutcome,
) -> Result<ImportReport, ImportError> {
    let io = ImportError::io(path);
    let mut reader = BufReader::with_capacity(1 << 20, File::open(path).map_err(io)?);
    let mut report = ImportReport::default();
    let mut buffer = Vec::new();
    let mut line_number = 0u64;
    while let Some(complete) = read_line(&mut reader, &mut buffer, limit).map_err(io)? {
        line_number += 1;
        if !complete {
            report.problem(
                path,
                Some(line_number),
                format!("the line is longer than {} MiB; skipped", limit >> 20),
            );
            continue;
        }
        let text = match std::str::from_utf8(&buffer) {
            Ok(text) => text.trim_start_matches('\u{feff}').trim(),
            Err(error) => {
                let message = format!("invalid UTF-8 at byte {} of the line", error.valid_up_to());
                report.problem(path, Some(line_number), message);
                continue;
            }
        };
        if text.is_empty() {
            continue;
        }
        if let Err(message) = on_line(text, &mut report)? {
            report.problem(path, Some(line_number), message);
        }
    }
    Ok(report)
}

/// Writes one JSON line per item, as `record` makes it; returns how many.
pub fn write_records(
    items: &mut dyn Iterator<Item = anyhow::Result<super::ExportItem>>,
    out: &mut dyn std::io::Write,
    record: impl Fn(&super::ExportItem) -> Value,
) -> anyhow::Result<usize> {
    let mut written = 0;
    for item in items {
        serde_json::to_writer(&mut *out, &record(&item?))?;
        out.write_all(b"\n")?;
        written += 1;
    }
    Ok(written)
}

/// Reads one line into `buffer` (newline included). `None` at the end of the file; `Some(false)`
/// when the line was longer than `limit` (its bytes are consumed, the buffer left empty).
fn read_line(
    reader: &mut impl BufRead,
    buffer: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<Option<bool>> {
    buffer.clear();
    let mut read_any = false;
    let mut too_long = false;
    loop {
        let available = reader.fill_buf()?;
        if available.is_empty() {
            return Ok(read_any.then_some(!too_long));
        }
        read_any = true;
        let (length, ends_line) = match available.iter().position(|&byte| byte == b'\n') {
            Some(newline) => (newline + 1, true),
            None => (available.len(), false),
        };
        if !too_long {
            if buffer.len() + length > limit {
                too_long = true;
                buffer.clear();
                buffer.shrink_to_fit();
            } else {
                buffer.extend_from_slice(&available[..length]);
            }
        }
        reader.consume(length);
        if ends_line {
            return Ok(Some(!too_long));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::Task;
    use std::io::Write;

    #[test]
    fn lines_over_the_limit_are_reported_and_the_rest_goes_on() {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        writeln!(file, "{{\"id\": \"a\"}}").unwrap();
        writeln!(file, "\"{}\"", "x".repeat(4 << 20)).unwrap();
        writeln!(file, "{{\"id\": \"b\"}}").unwrap();
        let mut ids = Vec::new();
        let mut sink = |item: Item| {
            if let Item::Task(task) = item {
                ids.push(task.id);
            }
            Ok(())
        };
        let mut intake = Intake::new(&mut sink, super::super::Format::Gsm8k);
        let report = read_with_limit(file.path(), &mut intake, 1 << 20, |value| {
            let id = value["id"].as_str().unwrap_or_default().to_string();
            Ok(vec![Item::Task(Box::new(Task::new(id, "test", "q")))])
        })
        .unwrap();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(report.problems.len(), 1);
        assert_eq!(report.problems[0].line, Some(2));
        assert!(report.problems[0].message.contains("longer than 1 MiB"));
    }
}
