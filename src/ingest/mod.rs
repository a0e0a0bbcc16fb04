//! Importing files into a store: records are parsed on the calling thread and written in
//! batches on another (`writer`), so parsing and storing overlap. A run's output folder imports as a
//! run of its own (kind `import`): its records point at it and its metrics rows are its
//! (`folder`); a growing run is followed as it is written (`follow`).

mod folder;
mod follow;
mod writer;

pub use folder::{FolderImport, import_folder};
pub use follow::{FollowPoll, Follower, followed_paths, followed_roots, run_following};

use crate::formats::{self, ImportOptions, ImportReport, Item};
use crate::store::Store;
use crate::trajectory::Trajectory;
use std::path::Path;

/// Imports one file into the store. `on_record` is called for each record read (for
/// progress). Every record counted in the report is durable when this returns `Ok`; a
/// trajectory the store already holds (the same content, imported before) is not stored
/// again, and the report counts it as `already_stored`.
pub fn import_into(
    store: &Store,
    path: &Path,
    options: ImportOptions,
    on_record: &mut dyn FnMut(),
) -> anyhow::Result<ImportReport> {
    import_file_into(store, path, options, &mut |_| true, on_record)
}

/// `import_into`, with `admit` shown each item before it is stored: it may change the item,
/// and it drops the item by returning `false`. The report counts what the file held.
fn import_file_into(
    store: &Store,
    path: &Path,
    options: ImportOptions,
    admit: &mut dyn FnMut(&mut Item) -> bool,
    on_record: &mut dyn FnMut(),
) -> anyhow::Result<ImportReport> {
    let (report, already) = writer::with_writer(store, |writer| {
        read_into(writer, 0, path, options, admit, on_record)
    })?;
    let mut report = report?;
    report.already_stored = already.get(&0).copied().unwrap_or(0);
    Ok(report)
}

/// Reads file number `file` into the writer, each item shown to `admit` first. A file that
/// cannot be read is the inner error; a store that fails, the outer one.
fn read_into(
    writer: &mut writer::Writer,
    file: usize,
    path: &Path,
    options: ImportOptions,
    admit: &mut dyn FnMut(&mut Item) -> bool,
    on_record: &mut dyn FnMut(),
) -> anyhow::Result<anyhow::Result<ImportReport>> {
    let mut failed = None;
    let result = formats::import_file(path, options, &mut |mut item| {
        on_record();
        if !admit(&mut item) {
            return Ok(());
        }
        writer.push(item, file).inspect_err(|error| {
            failed = Some(format!("{error:#}"));
        })
    });
    match (result, failed) {
        (_, Some(error)) => Err(anyhow::anyhow!(error)),
        (result, None) => Ok(result.map_err(anyhow::Error::from)),
    }
}

/// The name an import run of `path` asks for: a folder's name, or a file's folder's name
/// (the store makes it a unique id).
fn run_name_of(path: &Path) -> String {
    let folder = if path.is_dir() {
        Some(path)
    } else {
        path.parent()
    };
    folder
        .and_then(Path::file_name)
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Gives a trajectory that names no run the import run `run`; returns its policy version.
fn claim(trajectory: &mut Trajectory, run: &str) -> u64 {
    if trajectory.run.is_none() {
        trajectory.run = Some(run.to_string());
    }
    trajectory.policy_version.unwrap_or(0)
}
