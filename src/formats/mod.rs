//! Reading and writing the formats the field uses, one file per format.
//!
//! Importers stream records to a sink and report bad records as `file:line: problem` without
//! stopping; with `strict`, a file with any problem imports nothing. Nothing here panics on
//! bad input, and nothing else in the crate parses JSON from the wild.

mod accounting;
mod atif;
mod atif_tokens;
mod atif_write;
mod chat;
pub mod chat_api;
pub mod chat_stream;
mod context;
mod detect;
mod document;
mod fields;
mod folder;
mod follow;
mod format;
pub mod gsm8k;
mod harbor;
mod inspect;
mod inspect_eval;
mod intake;
mod json_text;
mod jsonl;
mod math_shepherd;
mod messages;
mod metrics;
mod mini_swe_agent;
mod native;
mod omega_prm;
mod openai;
mod openhands;
mod openhands_events;
mod options;
mod otel;
mod otel_genai;
mod otel_span;
mod parquet;
mod parquet_write;
mod prm800k;
mod responses;
mod rl;
mod sharegpt;
mod steps;
mod swe_agent;
mod tau_bench;
mod trl;
mod trl_stepwise;
mod verifiers;
mod verl;

pub use accounting::{LEFT_OUT, LeftOut, TEXT_KEYS};
pub use detect::detect;
pub use folder::{FolderContents, folder_contents, is_metrics_file};
pub use follow::{MetricsFollower, MetricsUpdate};
pub use format::Format;
pub use json_text::json_lines;
pub use metrics::{MetricsRead, MetricsSource, parse_metrics, read_metrics};
pub use options::{ExportOptions, ToolArguments};
pub use parquet_write::write_parquet;

use crate::trajectory::{Task, Trajectory};
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

/// One record read from a file.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// A trajectory.
    Trajectory(Box<Trajectory>),
    /// A task (GSM8K rows, verl task rows, tasks that imported trajectories refer to).
    Task(Box<Task>),
}

/// A bad record: where it is and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The file.
    pub path: PathBuf,
    /// The 1-based line (JSONL) or record number (JSON arrays, archive members), if known.
    pub line: Option<u64>,
    /// What is wrong, naming the field.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.path.display(), self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

/// What an import read from one file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// The format used (detected or forced).
    pub format: Option<Format>,
    /// Trajectories handed to the sink.
    pub trajectories: usize,
    /// Tasks handed to the sink.
    pub tasks: usize,
    /// Of those trajectories, how many the store held already (the same content imported
    /// before): set by `ingest` when it stores them, 0 from `formats` alone.
    pub already_stored: usize,
    /// Records skipped, with why.
    pub problems: Vec<Problem>,
}

impl ImportReport {
    /// Notes a bad record (or a bad file, without a line).
    pub fn problem(&mut self, path: &Path, line: Option<u64>, message: String) {
        self.problems.push(Problem {
            path: path.to_path_buf(),
            line,
            message,
        });
    }
}

/// How to import.
#[derive(Clone, Copy, Debug, Default)]
pub struct ImportOptions {
    /// Use this format instead of detecting one.
    pub format: Option<Format>,
    /// Import nothing from a file that has any problem.
    pub strict: bool,
    /// The file may still be written (a follow): records that are not complete yet (an
    /// OpenTelemetry trace whose root span has not arrived) are left for the next read.
    pub growing: bool,
}

/// A file that cannot be imported at all.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file could not be read.
    #[error("{path}: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The file is empty.
    #[error("{path}: the file is empty; there is nothing to import")]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// No known format matches its content.
    #[error("{path}: {reason}; name the format with --format (one of: {known})")]
    Unrecognised {
        /// The file.
        path: PathBuf,
        /// What was seen.
        reason: String,
        /// The known format names.
        known: String,
    },
    /// The sink refused a record (e.g. the store failed); nothing more was read.
    #[error("{0}")]
    Sink(anyhow::Error),
}

impl ImportError {
    /// Wraps an I/O error on `path`.
    pub fn io(path: &Path) -> impl Fn(std::io::Error) -> Self + Copy + '_ {
        move |error| Self::Io {
            path: path.to_path_buf(),
            error,
        }
    }
}

/// Receives imported records.
pub type Sink<'a> = dyn FnMut(Item) -> anyhow::Result<()> + 'a;

/// Reads one file, detecting its format unless one is forced, and hands each good record to
/// `sink`. Bad records are reported in the returned report and skipped.
pub fn import_file(
    path: &Path,
    options: ImportOptions,
    sink: &mut Sink<'_>,
) -> Result<ImportReport, ImportError> {
    let metadata = std::fs::metadata(path).map_err(ImportError::io(path))?;
    if metadata.is_dir() {
        let error = std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "is a folder; import the files in it (e.g. FOLDER/*.jsonl)",
        );
        return Err(ImportError::io(path)(error));
    }
    if metadata.len() == 0 {
        return Err(ImportError::Empty {
            path: path.to_path_buf(),
        });
    }
    let format = match options.format {
        Some(format) => format,
        None => detect(path)?,
    };
    if options.strict {
        let mut dry_run = |_item: Item| Ok(());
        let report = read_format(format, path, options.growing, &mut dry_run)?;
        if !report.problems.is_empty() {
            return Ok(ImportReport {
                format: Some(format),
                problems: report.problems,
                ..ImportReport::default()
            });
        }
    }
    let mut report = read_format(format, path, options.growing, sink)?;
    report.format = Some(format);
    Ok(report)
}

fn read_format(
    format: Format,
    path: &Path,
    growing: bool,
    sink: &mut Sink<'_>,
) -> Result<ImportReport, ImportError> {
    let context = &mut context::Context::new(path, format);
    let sink = &mut intake::Intake::new(sink, format);
    match format {
        Format::Rollscope => native::read(path, sink),
        Format::OpenaiMessages => openai::read(context, sink),
        Format::Sharegpt => sharegpt::read(context, sink),
        Format::SweAgent => swe_agent::read(context, sink),
        Format::MiniSweAgent => mini_swe_agent::read(context, sink),
        Format::Inspect => inspect::read(context, sink),
        Format::InspectEval => inspect_eval::read(context, sink),
        Format::VerlRollouts => verl::read_rollouts(context, sink),
        Format::VerlTasks => verl::read_tasks(context, sink),
        Format::Responses => responses::read(context, sink),
        Format::TauBench => tau_bench::read(context, sink),
        Format::OpenHands => openhands::read(context, sink),
        Format::Messages => messages::read(context, sink),
        Format::Gsm8k => gsm8k::read(context, sink),
        Format::Prm800k => prm800k::read(context, sink),
        Format::MathShepherd => math_shepherd::read(context, sink),
        Format::OmegaPrm => omega_prm::read(context, sink),
        Format::TrlPromptCompletion => trl::read(context, sink),
        Format::TrlStepwise => trl_stepwise::read(context, sink),
        Format::Rl => rl::read(context, sink),
        Format::Atif => atif::read(context, sink),
        Format::Otel => otel::read(context, sink, growing),
        Format::Verifiers => verifiers::read(context, sink),
    }
}

/// A trajectory to export, with its task when the store has it.
pub struct ExportItem {
    /// The trajectory.
    pub trajectory: Trajectory,
    /// Its task.
    pub task: Option<Task>,
}

/// Writes trajectories in an export format with default options; returns how many were
/// written (an exporter leaves out those its format cannot hold, see each format's
/// documentation).
pub fn export(
    format: Format,
    items: &mut dyn Iterator<Item = anyhow::Result<ExportItem>>,
    out: &mut dyn Write,
) -> anyhow::Result<usize> {
    export_with(format, &ExportOptions::default(), items, out)
}

/// Writes trajectories in an export format; returns how many trajectories were written.
pub fn export_with(
    format: Format,
    options: &ExportOptions,
    items: &mut dyn Iterator<Item = anyhow::Result<ExportItem>>,
    out: &mut dyn Write,
) -> anyhow::Result<usize> {
    let arguments = options.tool_arguments;
    let sft = !matches!(format, Format::Rollscope | Format::Atif);
    let mut without_copied = items.map(|item| {
        item.map(|mut item| {
            if sft {
                item.trajectory
                    .messages
                    .retain(|message| !atif::is_copied_context(message));
            }
            item
        })
    });
    let items: &mut dyn Iterator<Item = anyhow::Result<ExportItem>> = &mut without_copied;
    match format {
        Format::Rollscope => native::write(items, out),
        Format::OpenaiMessages => openai::write(items, out, arguments),
        Format::Sharegpt => sharegpt::write(items, out),
        Format::TrlPromptCompletion => trl::write(items, out, arguments),
        Format::TrlStepwise => trl_stepwise::write(items, out),
        Format::Rl => rl::write(items, out),
        Format::Atif => atif_write::write(items, out),
        other => anyhow::bail!(
            "{other} cannot be exported; export formats: {}",
            Format::export_names()
        ),
    }
}
