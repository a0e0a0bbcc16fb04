//! Inspect `.eval` logs: a zip archive with `header.json` (the eval's spec and results),
//! `_journal/start.json` (the spec, written first) and one `samples/<id>_epoch_<n>.json` per
//! sample. When the archive is cut short its directory (at the end) is gone, so the members
//! are then read one by one from the start and every complete sample still imports.

use super::context::Context;
use super::inspect::parse_sample;
use super::intake::Intake;
use super::json_text::{MAX_RECORD_BYTES, json_error};
use super::{ImportError, ImportReport};
use serde_json::Value;
use std::fs::File;
use std::io::{BufReader, Read};
use zip::ZipArchive;

/// Reads an Inspect `.eval` archive.
pub fn read(
    context: &mut Context<'_>,
    intake: &mut Intake<'_, '_>,
) -> Result<ImportReport, ImportError> {
    let path = context.path;
    let io = ImportError::io(path);
    let mut reader = Reader {
        report: ImportReport::default(),
        eval: None,
    };
    match ZipArchive::new(BufReader::new(File::open(path).map_err(io)?)) {
        Ok(mut archive) => {
            for name in ["header.json", "_journal/start.json"] {
                if reader.eval.is_none() && archive.index_for_name(name).is_some() {
                    let bytes = archive
                        .by_name(name)
                        .map_err(|e| e.to_string())
                        .and_then(read_member);
                    reader.member(context, intake, name, bytes)?;
                }
            }
            for index in 0..archive.len() {
                let (name, bytes) = match archive.by_index(index) {
                    Ok(file) if !is_sample(file.name()) => continue,
                    Ok(file) => (file.name().to_string(), read_member(file)),
                    Err(error) => (format!("member {}", index + 1), Err(error.to_string())),
                };
                reader.member(context, intake, &name, bytes)?;
            }
        }
        Err(error) => {
            let message = format!(
                "the zip archive's directory cannot be read ({error}); reading its complete members from the start"
            );
            reader.report.problem(path, None, message);
            let mut stream = BufReader::new(File::open(path).map_err(io)?);
            for index in 0u64.. {
                let (name, bytes) = match zip::read::read_zipfile_from_stream(&mut stream) {
                    Ok(Some(file)) => (file.name().to_string(), read_member(file)),
                    Ok(None) => break,
                    Err(error) => {
                        let message = format!(
                            "member {}: cannot be read ({error}); the archive ends here",
                            index + 1
                        );
                        reader.report.problem(path, None, message);
                        break;
                    }
                };
                let stop = bytes.is_err();
                reader.member(context, intake, &name, bytes)?;
                if stop {
                    break;
                }
            }
        }
    }
    Ok(reader.report)
}

/// What reading one archive has gathered so far.
struct Reader {
    report: ImportReport,
    eval: Option<Value>,
}

impl Reader {
    /// Handles one member: the eval spec from the header or journal, a sample as a trajectory.
    fn member(
        &mut self,
        context: &mut Context<'_>,
        intake: &mut Intake<'_, '_>,
        name: &str,
        bytes: Result<Vec<u8>, String>,
    ) -> Result<(), ImportError> {
        let path = context.path;
        let value = bytes.and_then(|bytes| {
            serde_json::from_slice::<Value>(&bytes).map_err(|error| json_error(&error))
        });
        let value = match value {
            Ok(value) => value,
            Err(message) => {
                self.report
                    .problem(path, None, format!("{name}: {message}"));
                return Ok(());
            }
        };
        if !is_sample(name) {
            if self.eval.is_none() {
                self.eval = value.get("eval").cloned();
            }
            return Ok(());
        }
        let eval = self.eval.as_ref();
        let parse = |value| parse_sample(context, eval, value);
        if let Err(message) = intake.record(value, parse, &mut self.report)? {
            self.report
                .problem(path, None, format!("{name}: {message}"));
        }
        Ok(())
    }
}

fn is_sample(name: &str) -> bool {
    name.starts_with("samples/") && name.ends_with(".json")
}

/// A member's bytes, refusing more than `MAX_RECORD_BYTES` (a zip bomb, or a broken size).
fn read_member(file: impl Read) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    file.take(MAX_RECORD_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| format!("cannot be read ({error}); truncated archive?"))?;
    if bytes.len() > MAX_RECORD_BYTES {
        return Err(format!(
            "larger than {} MiB when unpacked",
            MAX_RECORD_BYTES >> 20
        ));
    }
    Ok(bytes)
}
