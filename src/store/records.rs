//! Tasks, runs and metrics rows.

use super::{LocalStore, StoreError, StoreResult, keys};
use crate::trajectory::{MetricsRow, RunInfo, RunKind, Task};
use serde::de::DeserializeOwned;

fn decode<T: DeserializeOwned>(bytes: &[u8], what: impl FnOnce() -> String) -> StoreResult<T> {
    serde_json::from_slice(bytes).map_err(|error| StoreError::Corrupt {
        what: what(),
        reason: error.to_string(),
    })
}

fn encode<T: serde::Serialize>(value: &T) -> StoreResult<Vec<u8>> {
    serde_json::to_vec(value).map_err(|error| StoreError::Invalid(error.to_string()))
}

impl LocalStore {
    /// Stores tasks (replacing any with the same id) in one batch and flushes.
    pub fn put_tasks(&self, tasks: &[Task]) -> StoreResult<()> {
        let mut batch = sled::Batch::default();
        for task in tasks {
            batch.insert(keys::text_prefix(keys::TASK, &task.id), encode(task)?);
        }
        self.db.apply_batch(batch)?;
        self.db.flush()?;
        Ok(())
    }

    /// A task by id.
    pub fn get_task(&self, id: &str) -> StoreResult<Option<Task>> {
        self.db
            .get(keys::text_prefix(keys::TASK, id))?
            .map(|bytes| decode(&bytes, || format!("task {id}")))
            .transpose()
    }

    /// Every task, ordered by id.
    pub fn tasks(&self) -> StoreResult<Vec<Task>> {
        self.db
            .scan_prefix([keys::TASK])
            .values()
            .map(|value| decode(&value?, || "a task".to_string()))
            .collect()
    }

    /// Number of tasks stored.
    pub fn task_count(&self) -> usize {
        self.db.scan_prefix([keys::TASK]).count()
    }

    /// Stores a run's record and flushes.
    pub fn put_run(&self, run: &RunInfo) -> StoreResult<()> {
        let _guard = self.write_guard();
        self.insert_run(run)
    }

    /// Stores a run's record and flushes, the caller holding the write guard.
    pub(super) fn insert_run(&self, run: &RunInfo) -> StoreResult<()> {
        self.db
            .insert(keys::text_prefix(keys::RUN, &run.id), encode(run)?)?;
        self.db.flush()?;
        Ok(())
    }

    /// A run by id.
    pub fn get_run(&self, id: &str) -> StoreResult<Option<RunInfo>> {
        self.db
            .get(keys::text_prefix(keys::RUN, id))?
            .map(|bytes| decode(&bytes, || format!("run {id}")))
            .transpose()
    }

    /// Every run, oldest first.
    pub fn runs(&self) -> StoreResult<Vec<RunInfo>> {
        let mut runs: Vec<RunInfo> = self
            .db
            .scan_prefix([keys::RUN])
            .values()
            .map(|value| decode(&value?, || "a run".to_string()))
            .collect::<StoreResult<_>>()?;
        runs.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        Ok(runs)
    }

    /// A fresh run id: `wanted` as a folder name may hold it (letters, digits, `-`, `_` and
    /// `.`, others as `-`, at most 48 characters) if no run has it, else with `-2`, `-3`, …
    /// after it; without a usable name, the next free id of the kind (`grpo-0007` when six
    /// runs exist). Only `create_run` takes one, under the write guard, so no two runs get
    /// the same id.
    pub(super) fn fresh_run_id(&self, wanted: &str, kind: RunKind) -> StoreResult<String> {
        let runs = self.runs()?;
        let free = |id: &str| runs.iter().all(|run| run.id != id);
        if let Some(name) = run_name(wanted) {
            return Ok(std::iter::once(name.clone())
                .chain((2..).map(|n| format!("{name}-{n}")))
                .find(|id| free(id))
                .expect("an unbounded series has a free id"));
        }
        Ok((runs.len() + 1..)
            .map(|number| format!("{}-{number:04}", kind.as_str()))
            .find(|id| free(id))
            .expect("an unbounded series has a free id"))
    }

    /// Appends (or replaces) a metrics row and flushes.
    pub fn put_metrics(&self, row: &MetricsRow) -> StoreResult<()> {
        self.db
            .insert(keys::metrics_key(&row.run, row.step), encode(row)?)?;
        self.db.flush()?;
        Ok(())
    }

    /// A run's metrics rows, by step.
    pub fn metrics(&self, run: &str) -> StoreResult<Vec<MetricsRow>> {
        self.db
            .scan_prefix(keys::text_prefix(keys::METRICS, run))
            .values()
            .map(|value| decode(&value?, || format!("metrics of run {run}")))
            .collect()
    }

    /// Removes a run's metrics rows after a step (used when a run resumes from a checkpoint).
    pub fn truncate_metrics(&self, run: &str, after_step: u64) -> StoreResult<usize> {
        let start = keys::metrics_key(run, after_step.saturating_add(1));
        let end = keys::text_prefix(keys::METRICS, run);
        let mut end = end;
        end.extend_from_slice(&[0xff; 9]);
        let mut batch = sled::Batch::default();
        let mut removed = 0;
        for key in self.db.range(start..end).keys() {
            batch.remove(key?);
            removed += 1;
        }
        self.db.apply_batch(batch)?;
        self.db.flush()?;
        Ok(removed)
    }
}

/// Most characters of a run id made from a name.
const RUN_NAME_CHARS: usize = 48;

/// `wanted` as a run id a folder may be named by: ASCII letters, digits, `-`, `_` and `.`
/// (anything else as `-`), no leading `.` or `-`, at most [`RUN_NAME_CHARS`]; `None` when
/// nothing is left.
fn run_name(wanted: &str) -> Option<String> {
    let name: String = wanted
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' | '.' => c,
            _ => '-',
        })
        .take(RUN_NAME_CHARS)
        .collect();
    let name = name.trim_start_matches(['.', '-']).trim_end_matches('-');
    (!name.is_empty()).then(|| name.to_string())
}
