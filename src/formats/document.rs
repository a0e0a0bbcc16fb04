//! Whole-file JSON: one document (a SWE-agent `.traj`, an Inspect log) or an array of
//! records (ShareGPT, tau-bench). Arrays are split into elements before parsing, so a broken
//! or cut-off element is reported with its line and the others still import.

use super::intake::Intake;
use super::json_text::{MAX_RECORD_BYTES, json_error, strip_bom};
use super::{ImportError, ImportReport, Item, jsonl};
use serde_json::Value;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::ops::Range;
use std::path::Path;

/// Reads a whole file, refusing one larger than `MAX_RECORD_BYTES`.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, ImportError> {
    let io = ImportError::io(path);
    let file = File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(MAX_RECORD_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() > MAX_RECORD_BYTES {
        return Err(io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "a JSON document over {} MiB cannot be read whole; split it into JSONL",
                MAX_RECORD_BYTES >> 20
            ),
        )));
    }
    Ok(bytes)
}

/// Parses a whole file as one JSON value; a syntax error becomes a problem with its line.
pub fn read_document(path: &Path, report: &mut ImportReport) -> Result<Option<Value>, ImportError> {
    let bytes = read_bytes(path)?;
    match serde_json::from_slice(strip_bom(&bytes)) {
        Ok(value) => Ok(Some(value)),
        Err(error) => {
            let line = (error.line() > 0).then_some(error.line() as u64);
            report.problem(path, line, json_error(&error));
            Ok(None)
        }
    }
}

/// Reads a whole file as one record (a transcript, an event stream) with `parse`; a file
/// that does not parse, or a record `parse` refuses, is one problem.
pub fn read_single(
    path: &Path,
    intake: &mut Intake<'_, '_>,
    parse: impl FnOnce(Value) -> Result<Vec<Item>, String>,
) -> Result<ImportReport, ImportError> {
    let mut report = ImportReport::default();
    let Some(value) = read_document(path, &mut report)? else {
        return Ok(report);
    };
    if let Err(message) = intake.record(value, parse, &mut report)? {
        report.problem(path, None, message);
    }
    Ok(report)
}

/// Reads a file of records: a JSON array of them, JSONL (one per line), a single record
/// written over several lines, or the rows of a parquet file.
pub fn read_records(
    path: &Path,
    intake: &mut Intake<'_, '_>,
    parse: impl FnMut(Value) -> Result<Vec<Item>, String>,
) -> Result<ImportReport, ImportError> {
    if super::parquet::is_parquet(path)? {
        return super::parquet::read_records(path, intake, parse);
    }
    match first_byte(path)? {
        Some(b'[') => read_array(path, intake, parse),
        Some(b'{') if !first_line_is_json(path)? => match whole_value(path)? {
            Some(value) => {
                let mut report = ImportReport::default();
                if let Err(message) = intake.record(value, parse, &mut report)? {
                    report.problem(path, None, message);
                }
                Ok(report)
            }
            None => jsonl::read(path, intake, parse),
        },
        _ => jsonl::read(path, intake, parse),
    }
}

/// Reads the elements of a JSON array one by one.
fn read_array(
    path: &Path,
    intake: &mut Intake<'_, '_>,
    mut parse: impl FnMut(Value) -> Result<Vec<Item>, String>,
) -> Result<ImportReport, ImportError> {
    let bytes = read_bytes(path)?;
    let bytes = strip_bom(&bytes);
    let mut report = ImportReport::default();
    let mut lines = LineCounter::default();
    for (index, range) in array_elements(bytes).into_iter().enumerate() {
        let line = lines.line_at(bytes, range.start);
        let name = format!("record {}", index + 1);
        let value: Value = match serde_json::from_slice(&bytes[range]) {
            Ok(value) => value,
            Err(error) => {
                let at = line + error.line().saturating_sub(1) as u64;
                report.problem(path, Some(at), format!("{name}: {}", json_error(&error)));
                continue;
            }
        };
        if let Err(message) = intake.record(value, &mut parse, &mut report)? {
            report.problem(path, Some(line), format!("{name}: {message}"));
        }
    }
    Ok(report)
}

/// The whole file as one JSON value, when it is one and not over the size limit.
fn whole_value(path: &Path) -> Result<Option<Value>, ImportError> {
    let length = std::fs::metadata(path)
        .map_err(ImportError::io(path))?
        .len();
    if length > MAX_RECORD_BYTES as u64 {
        return Ok(None);
    }
    Ok(serde_json::from_slice(strip_bom(&read_bytes(path)?)).ok())
}

/// The first record of a file, for format detection: the first element of an array, the
/// first JSONL line, or `None` when neither parses (a pretty-printed single document).
pub fn first_record(path: &Path) -> Result<Option<Value>, ImportError> {
    Ok(serde_json::from_slice(&first_record_bytes(path)?).ok())
}

/// Whether the file's first line is a whole JSON value (JSONL, or a document on one line),
/// checked without building it.
fn first_line_is_json(path: &Path) -> Result<bool, ImportError> {
    let head = first_line(path)?;
    let parsed = serde_json::from_slice::<serde::de::IgnoredAny>(strip_bom(&head));
    Ok(parsed.is_ok())
}

/// The file's first line (all of it up to the record size limit).
fn first_line(path: &Path) -> Result<Vec<u8>, ImportError> {
    let io = ImportError::io(path);
    let mut head = Vec::new();
    BufReader::new(File::open(path).map_err(io)?)
        .take(MAX_RECORD_BYTES as u64)
        .read_until(b'\n', &mut head)
        .map_err(io)?;
    Ok(head)
}

/// The bytes of the file's first record, for format detection: the first element of an
/// array, or the first line.
pub fn first_record_bytes(path: &Path) -> Result<Vec<u8>, ImportError> {
    let io = ImportError::io(path);
    if first_byte(path)? == Some(b'[') {
        for limit in [16 << 20, MAX_RECORD_BYTES] {
            let mut head = Vec::new();
            let file = File::open(path).map_err(io)?;
            file.take(limit as u64).read_to_end(&mut head).map_err(io)?;
            let stripped = strip_bom(&head);
            let whole_file = head.len() < limit;
            match array_elements(stripped).into_iter().next() {
                Some(range) if range.end < stripped.len() || whole_file => {
                    return Ok(stripped[range].to_vec());
                }
                None if whole_file => return Ok(Vec::new()),
                _ => {}
            }
        }
        return Ok(Vec::new());
    }
    let head = first_line(path)?;
    Ok(strip_bom(&head).to_vec())
}

/// The first byte that is not white space (after a UTF-8 byte-order mark) within the first
/// 64 KiB, if any.
pub fn first_byte(path: &Path) -> Result<Option<u8>, ImportError> {
    let mut head = Vec::new();
    File::open(path)
        .and_then(|file| file.take(64 << 10).read_to_end(&mut head))
        .map_err(ImportError::io(path))?;
    Ok(strip_bom(&head)
        .iter()
        .copied()
        .find(|byte| !byte.is_ascii_whitespace()))
}

/// Counts lines forward through a byte slice without rescanning from the start.
#[derive(Default)]
struct LineCounter {
    offset: usize,
    line: u64,
}

impl LineCounter {
    /// The 1-based line of byte `offset` (offsets must not decrease).
    fn line_at(&mut self, bytes: &[u8], offset: usize) -> u64 {
        let newlines = bytes[self.offset..offset]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        self.line += newlines as u64;
        self.offset = offset;
        self.line + 1
    }
}

/// Byte ranges of the elements of the JSON array in `bytes`, found by tracking strings and
/// nesting without parsing. When the array is cut short, the last range runs to the end.
pub fn array_elements(bytes: &[u8]) -> Vec<Range<usize>> {
    let skip_space = |mut at: usize| {
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        at
    };
    let mut ranges = Vec::new();
    let mut at = skip_space(0);
    if bytes.get(at) != Some(&b'[') {
        return ranges;
    }
    at += 1;
    loop {
        at = skip_space(at);
        if at >= bytes.len() || bytes[at] == b']' {
            return ranges;
        }
        let start = at;
        let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
        while at < bytes.len() {
            let byte = bytes[at];
            if in_string {
                match byte {
                    _ if escaped => escaped = false,
                    b'\\' => escaped = true,
                    b'"' => in_string = false,
                    _ => {}
                }
            } else {
                match byte {
                    b'"' => in_string = true,
                    b'[' | b'{' => depth += 1,
                    b']' | b'}' if depth == 0 => break,
                    b']' | b'}' => depth -= 1,
                    b',' if depth == 0 => break,
                    _ => {}
                }
            }
            at += 1;
        }
        ranges.push(start..at);
        if bytes.get(at) != Some(&b',') {
            return ranges;
        }
        at += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_elements_survive_strings_nesting_and_truncation() {
        let text = br#" [ {"a": "x,]}"}, [1, [2]], "s\"]" , {"cut": [1, 2"#;
        let parts: Vec<&[u8]> = array_elements(text).into_iter().map(|r| &text[r]).collect();
        assert_eq!(
            parts,
            [
                &br#"{"a": "x,]}"}"#[..],
                &b"[1, [2]]"[..],
                &br#""s\"]" "#[..],
                &br#"{"cut": [1, 2"#[..]
            ]
        );
        assert!(array_elements(b"[]").is_empty());
        assert!(array_elements(b"{}").is_empty());
    }
}
