//! Parquet files as records: every row becomes the JSON object its columns describe (nested
//! lists and structs included), so each record-based format reads parquet as it reads JSONL
//! (TRL's `completions_NNNNN.parquet`, verl's task rows, our RL rows). Read with the Apache
//! `parquet` crate's row API; a damaged file is reported, never half-trusted: a row that
//! cannot be decoded ends the file with a problem naming it, and a panic inside the decoder
//! becomes a problem too.

use super::intake::Intake;
use super::{ImportError, ImportReport, Item};
use parquet::file::reader::{FileReader, SerializedFileReader};
use serde_json::Value;
use std::io::Read;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

/// The four bytes that start (and end) every parquet file.
pub const MAGIC: &[u8; 4] = b"PAR1";

/// Whether the file starts with parquet's magic bytes.
pub fn is_parquet(path: &Path) -> Result<bool, ImportError> {
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(4).read_to_end(&mut head))
        .map_err(ImportError::io(path))?;
    Ok(head == MAGIC)
}

/// The names of the file's top-level columns (what detection reads as a record's keys).
pub fn column_names(path: &Path) -> Result<Vec<String>, ImportError> {
    let reader = open(path)?;
    let schema = reader.metadata().file_metadata().schema_descr();
    Ok(schema
        .root_schema()
        .get_fields()
        .iter()
        .map(|field| field.name().to_string())
        .collect())
}

/// Reads every row of a parquet file as a record (`Record::line` is the 1-based row).
pub fn read_records(
    path: &Path,
    intake: &mut Intake<'_, '_>,
    mut parse: impl FnMut(Value) -> Result<Vec<Item>, String>,
) -> Result<ImportReport, ImportError> {
    let mut report = ImportReport::default();
    rows(path, intake, &mut report, &mut parse, None)?;
    Ok(report)
}

/// Hands up to `limit` rows to `parse`, delivering what it makes to `intake`.
fn rows(
    path: &Path,
    intake: &mut Intake<'_, '_>,
    report: &mut ImportReport,
    parse: &mut dyn FnMut(Value) -> Result<Vec<Item>, String>,
    limit: Option<usize>,
) -> Result<(), ImportError> {
    let reader = open(path)?;
    let mut index = 0u64;
    let outcome = catch_unwind(AssertUnwindSafe(|| -> Result<(), ImportError> {
        let iter = reader
            .get_row_iter(None)
            .map_err(|error| damaged(path, error))?;
        for row in iter.take(limit.unwrap_or(usize::MAX)) {
            let line = index + 1;
            let row = match row {
                Ok(row) => row,
                Err(error) => {
                    let message = format!(
                        "row {line}: cannot be decoded ({error}); the rest of the file is skipped"
                    );
                    report.problem(path, Some(line), message);
                    return Ok(());
                }
            };
            let outcome = intake.record(row.to_json_value(), &mut *parse, report)?;
            if let Err(message) = outcome {
                report.problem(path, Some(line), format!("row {line}: {message}"));
            }
            index += 1;
        }
        Ok(())
    }));
    match outcome {
        Ok(result) => result,
        Err(_) => {
            let message = format!(
                "row {}: the parquet decoder failed on damaged data; the rest of the file is skipped",
                index + 1
            );
            report.problem(path, Some(index + 1), message);
            Ok(())
        }
    }
}

/// Opens a parquet file, reading its footer (schema and row groups).
fn open(path: &Path) -> Result<SerializedFileReader<std::fs::File>, ImportError> {
    let file = std::fs::File::open(path).map_err(ImportError::io(path))?;
    catch_unwind(AssertUnwindSafe(|| SerializedFileReader::new(file)))
        .map_err(|_| damaged(path, "its footer cannot be decoded"))?
        .map_err(|error| damaged(path, error))
}

/// A parquet file that cannot be read at all.
fn damaged(path: &Path, error: impl std::fmt::Display) -> ImportError {
    ImportError::io(path)(std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("not a readable parquet file ({error})"),
    ))
}
