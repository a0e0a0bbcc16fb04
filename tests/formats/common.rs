//! Helpers: the test files, importing into memory, exporting to text.

use rollscope::formats::{
    self, ExportItem, Format, ImportError, ImportOptions, ImportReport, Item,
};
use rollscope::trajectory::{Task, Trajectory};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A file of `tests/data/formats`.
pub fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/formats")
        .join(name)
}

/// Every file of `tests/data/formats` (not its folders, such as `trl/`), sorted by name.
pub fn data_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(data(""))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    files
}

/// What one import produced.
#[derive(Debug, Default)]
pub struct Imported {
    /// The report.
    pub report: ImportReport,
    /// The trajectories, in file order.
    pub trajectories: Vec<Trajectory>,
    /// The tasks, in file order.
    pub tasks: Vec<Task>,
}

impl Imported {
    /// The task a trajectory refers to.
    pub fn task_of(&self, trajectory: &Trajectory) -> &Task {
        let id = trajectory.task_id.as_deref().expect("a task id");
        self.tasks
            .iter()
            .find(|task| task.id == id)
            .expect("the task was imported")
    }

    /// The items to export: each trajectory with its task.
    pub fn export_items(&self) -> Vec<ExportItem> {
        let tasks: HashMap<&str, &Task> = self
            .tasks
            .iter()
            .map(|task| (task.id.as_str(), task))
            .collect();
        self.trajectories
            .iter()
            .map(|trajectory| ExportItem {
                trajectory: trajectory.clone(),
                task: trajectory
                    .task_id
                    .as_deref()
                    .and_then(|id| tasks.get(id))
                    .map(|task| (*task).clone()),
            })
            .collect()
    }
}

/// Imports a file with options, collecting what it yields.
pub fn import_with(path: &Path, options: ImportOptions) -> Result<Imported, ImportError> {
    let mut trajectories = Vec::new();
    let mut tasks = Vec::new();
    let report = formats::import_file(path, options, &mut |item| {
        match item {
            Item::Trajectory(trajectory) => trajectories.push(*trajectory),
            Item::Task(task) => tasks.push(*task),
        }
        Ok(())
    })?;
    Ok(Imported {
        report,
        trajectories,
        tasks,
    })
}

/// The options tests use: the format when one is forced.
pub fn options(format: Option<Format>) -> ImportOptions {
    ImportOptions {
        format,
        strict: false,
        growing: false,
    }
}

/// Imports a test file (format detected) and requires it to have no problems.
pub fn import(name: &str) -> Imported {
    let imported = import_with(&data(name), options(None)).unwrap();
    assert!(
        imported.report.problems.is_empty(),
        "{name}: {:?}",
        imported.report.problems
    );
    imported
}

/// Exports items in a format, returning the text and how many were written.
pub fn export(format: Format, items: Vec<ExportItem>) -> (String, usize) {
    let mut out = Vec::new();
    let written = formats::export(format, &mut items.into_iter().map(Ok), &mut out).unwrap();
    (String::from_utf8(out).unwrap(), written)
}

/// Exports items in a format with options.
pub fn export_with(
    format: Format,
    options: &formats::ExportOptions,
    items: Vec<ExportItem>,
) -> (String, usize) {
    let mut out = Vec::new();
    let written =
        formats::export_with(format, options, &mut items.into_iter().map(Ok), &mut out).unwrap();
    (String::from_utf8(out).unwrap(), written)
}

/// A temporary file holding `bytes`, named with `suffix`.
pub fn temp_file(bytes: &[u8], suffix: &str) -> tempfile::NamedTempFile {
    let mut file = tempfile::Builder::new().suffix(suffix).tempfile().unwrap();
    file.write_all(bytes).unwrap();
    file.flush().unwrap();
    file
}

/// The bytes of a test file.
pub fn read(name: &str) -> Vec<u8> {
    std::fs::read(data(name)).unwrap()
}
