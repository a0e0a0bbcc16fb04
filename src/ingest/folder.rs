//! A run's output folder imported once, as a run of kind `import` with its metrics.

use crate::formats::{self, ImportError, ImportOptions, ImportReport, Item, Problem};
use crate::store::Store;
use crate::trajectory::RunSettings;
use crate::trajectory::{MetricsRow, RunInfo, RunKind, RunStatus};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What importing a run's output folder did.
#[derive(Debug)]
pub struct FolderImport {
    /// The run its records and metrics were stored under.
    pub run: String,
    /// Each file of records with what its import read, or why it could not be read.
    pub files: Vec<(PathBuf, anyhow::Result<ImportReport>)>,
    /// Files no format reads (left alone, not errors), with why.
    pub skipped: Vec<(PathBuf, String)>,
    /// The metrics file read, the rows stored from it and its bad lines.
    pub metrics: Option<(PathBuf, usize, Vec<Problem>)>,
}

/// Imports what a run's output folder holds (see [`formats::folder_contents`]) as a run of
/// kind `import`, finished when this returns: the run an earlier import of the same folder
/// made (what it stored already is not stored again), or a new one.
pub fn import_folder(
    store: &Store,
    dir: &Path,
    options: ImportOptions,
    on_record: &mut dyn FnMut(),
) -> anyhow::Result<FolderImport> {
    let contents = formats::folder_contents(dir)
        .map_err(|error| anyhow::anyhow!("cannot read the folder {}: {error}", dir.display()))?;
    anyhow::ensure!(
        !contents.is_empty(),
        "{}: no file Rollscope reads (records as .jsonl, .json, .parquet, .eval or .traj; \
         metrics as trainer_state.json or metrics.jsonl)",
        dir.display()
    );
    let folder = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let key = RunSettings::Folder(folder.clone());
    let earlier = store
        .runs()?
        .into_iter()
        .find(|run| run.kind == RunKind::Import && run.config == key);
    let mut record = match earlier {
        Some(run) => run,
        None => {
            let mut record = RunInfo::new(
                super::run_name_of(&folder),
                RunKind::Import,
                0,
                dir.display().to_string(),
                0,
            );
            record.config = key;
            record.note = Some(format!("imported from {}", dir.display()));
            record.id = store.create_run(&record)?;
            record
        }
    };
    let run = record.id.clone();
    let mut import = FolderImport {
        run: run.clone(),
        files: Vec::new(),
        skipped: Vec::new(),
        metrics: None,
    };
    let mut last_step = record.step;
    let mut stamp = |item: &mut Item| {
        if let Item::Trajectory(trajectory) = item {
            last_step = last_step.max(super::claim(trajectory, &run));
        }
        true
    };
    let (reads, already) = super::writer::with_writer(store, |writer| {
        let mut reads = Vec::new();
        for (file, path) in contents.records.into_iter().enumerate() {
            let read = super::read_into(writer, file, &path, options, &mut stamp, on_record)?;
            reads.push((path, read));
        }
        Ok(reads)
    })?;
    for (file, (path, read)) in reads.into_iter().enumerate() {
        match read {
            Err(error) if is_unrecognised(&error) => {
                import.skipped.push((path, format!("{error:#}")));
            }
            Ok(mut report) => {
                report.already_stored = already.get(&file).copied().unwrap_or(0);
                import.files.push((path, Ok(report)));
            }
            Err(error) => import.files.push((path, Err(error))),
        }
    }
    if let Some(path) = contents.metrics {
        let read = formats::read_metrics(&path, &run)
            .map_err(|error| anyhow::anyhow!("{}: {error}", path.display()))?;
        let rows = merged_by_step(read.rows);
        for row in &rows {
            store.put_metrics(row)?;
        }
        last_step = last_step.max(rows.last().map_or(0, |row| row.step));
        import.metrics = Some((path, rows.len(), read.problems));
    }
    record.step = last_step;
    record.total_steps = record.step;
    record.status = RunStatus::Done;
    store.put_run(&record)?;
    Ok(import)
}

/// Whether an import failed because no format reads the file.
pub(super) fn is_unrecognised(error: &anyhow::Error) -> bool {
    matches!(
        error.downcast_ref::<ImportError>(),
        Some(ImportError::Unrecognised { .. } | ImportError::Empty { .. })
    )
}

/// One row per step: rows of the same step (TRL logs evaluation rows at the step of a
/// training row) are merged, later values winning.
pub(super) fn merged_by_step(rows: Vec<MetricsRow>) -> Vec<MetricsRow> {
    let mut merged: BTreeMap<u64, MetricsRow> = BTreeMap::new();
    for row in rows {
        match merged.get_mut(&row.step) {
            Some(kept) => kept.values.extend(row.values),
            None => {
                merged.insert(row.step, row);
            }
        }
    }
    merged.into_values().collect()
}
