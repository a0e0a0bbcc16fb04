//! Line-by-line reading of JSONL files that survives anything: invalid UTF-8, blank lines,
//! malformed JSON, huge lines. Each bad line becomes a `Problem`; good lines go on.

use super::{ImportError, ImportReport, Item, Problem, Sink};
use serde_json::Value;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

/// Reads `path` line by line, turns each JSON line into items with `parse` (which names the
/// field that is wrong when it fails), and hands them to `sink`.
pub fn read(
    path: &Path,
    sink: &mut Sink<'_>,
    mut parse: impl FnMut(u64, Value) -> Result<Vec<Item>, String>,
) -> Result<ImportReport, ImportError> {
    let file = File::open(path).map_err(|source| ImportError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut report = ImportReport::default();
    let mut buffer = Vec::new();
    let mut line_number = 0u64;
    loop {
        buffer.clear();
        let read = reader
            .read_until(b'\n', &mut buffer)
            .map_err(|source| ImportError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        if read == 0 {
            break;
        }
        line_number += 1;
        let problem = |message: String| Problem {
            path: path.to_path_buf(),
            line: Some(line_number),
            message,
        };
        let text = match std::str::from_utf8(&buffer) {
            Ok(text) => text.trim(),
            Err(error) => {
                report.problems.push(problem(format!(
                    "invalid UTF-8 at byte {} of the line",
                    error.valid_up_to()
                )));
                continue;
            }
        };
        if text.is_empty() {
            continue;
        }
        let value: Value = match serde_json::from_str(text) {
            Ok(value) => value,
            Err(error) => {
                report
                    .problems
                    .push(problem(format!("not valid JSON: {error}")));
                continue;
            }
        };
        match parse(line_number, value) {
            Ok(items) => deliver(items, sink, &mut report)?,
            Err(message) => report.problems.push(problem(message)),
        }
    }
    Ok(report)
}

/// Hands items to the sink and counts them.
pub fn deliver(
    items: Vec<Item>,
    sink: &mut Sink<'_>,
    report: &mut ImportReport,
) -> Result<(), ImportError> {
    for item in items {
        match &item {
            Item::Trajectory(_) => report.trajectories += 1,
            Item::Task(_) => report.tasks += 1,
        }
        sink(item).map_err(ImportError::Sink)?;
    }
    Ok(())
}
