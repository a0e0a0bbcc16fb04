//! `Store`, the handle every command works through: a store opened in this process, or the
//! session server's store reached over its socket. Each method is one `Request`, so both
//! kinds answer the same way.

use super::apply::apply;
use super::client::{RemoteStore, ServerLauncher};
use super::labels::LabelEdit;
use super::local::LocalStore;
use super::wire::{Reply, Request};
use super::{
    ChangeStamp, CompactionReport, Filter, Query, StoreError, StoreOptions, StoreResult, Summary,
    TextHits,
};
use crate::trajectory::{ErrorKind, Label, MetricsRow, RunInfo, Task, Trajectory, TrajectoryId};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// How often `rewrite_labels` reads again after losing to another writer.
const REWRITE_ATTEMPTS: usize = 16;

/// An open session store: this process's own, or the session server's.
pub struct Store {
    path: PathBuf,
    backend: Backend,
}

enum Backend {
    Local(Box<LocalStore>),
    Remote(RemoteStore),
}

impl Store {
    /// Opens (or creates) the store in `dir` in this process, holding it exclusively.
    pub fn open(dir: &Path) -> StoreResult<Self> {
        Self::open_with(dir, StoreOptions::default())
    }

    /// Opens the store in `dir` in this process with these options.
    pub fn open_with(dir: &Path, options: StoreOptions) -> StoreResult<Self> {
        Ok(Self::from_local(LocalStore::open_with(dir, options)?))
    }

    /// Wraps a store this process holds.
    pub fn from_local(local: LocalStore) -> Self {
        Self {
            path: local.path().to_path_buf(),
            backend: Backend::Local(Box::new(local)),
        }
    }

    /// Reaches the store in `dir` through its session server, starting one with `launcher`
    /// when none answers; any number of processes can do this at once.
    pub fn connect(dir: &Path, launcher: ServerLauncher) -> StoreResult<Self> {
        Ok(Self {
            path: dir.to_path_buf(),
            backend: Backend::Remote(RemoteStore::connect(dir, launcher)?),
        })
    }

    /// The store's folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Closes this process's store as a session server does on exit (a checkpoint after
    /// many writes, so the next open is quick); a server's handle just disconnects.
    pub fn close(self) -> StoreResult<()> {
        match self.backend {
            Backend::Local(local) => local.close(),
            Backend::Remote(_) => Ok(()),
        }
    }

    /// The process id of the session server this handle talks to (`None`: this process).
    pub fn server_pid(&self) -> Option<u32> {
        match &self.backend {
            Backend::Local(_) => None,
            Backend::Remote(remote) => Some(remote.server_pid()),
        }
    }

    pub(super) fn call(&self, request: Request<'_>) -> StoreResult<Reply> {
        match &self.backend {
            Backend::Local(local) => apply(local, request),
            Backend::Remote(remote) => remote.call(&request),
        }
    }

    pub(super) fn done(&self, request: Request<'_>) -> StoreResult<()> {
        match self.call(request)? {
            Reply::Done => Ok(()),
            other => Err(unexpected(&other)),
        }
    }

    fn number(&self, request: Request<'_>) -> StoreResult<u64> {
        match self.call(request)? {
            Reply::Number(number) => Ok(number),
            other => Err(unexpected(&other)),
        }
    }

    fn trajectory(&self, request: Request<'_>) -> StoreResult<Option<Trajectory>> {
        match self.call(request)? {
            Reply::Trajectory(trajectory) => Ok(trajectory.map(|boxed| *boxed)),
            other => Err(unexpected(&other)),
        }
    }

    fn ids_of(&self, request: Request<'_>) -> StoreResult<Vec<TrajectoryId>> {
        match self.call(request)? {
            Reply::Ids(ids) => Ok(ids),
            other => Err(unexpected(&other)),
        }
    }

    /// Writes everything pending to disk; returns when it is durable.
    pub fn flush(&self) -> StoreResult<()> {
        self.done(Request::Flush)
    }

    /// Number of trajectories stored; an error, not 0, when the server cannot be reached.
    pub fn trajectory_count(&self) -> StoreResult<usize> {
        Ok(self.number(Request::TrajectoryCount)? as usize)
    }

    /// A trajectory with its token trace.
    pub fn get(&self, id: TrajectoryId) -> StoreResult<Option<Trajectory>> {
        self.trajectory(Request::Get { id, trace: true })
    }

    /// A trajectory without its token trace (cheaper for views that do not show it).
    pub fn get_without_trace(&self, id: TrajectoryId) -> StoreResult<Option<Trajectory>> {
        self.trajectory(Request::Get { id, trace: false })
    }

    /// Whether a trajectory has a token trace stored.
    pub fn has_trace(&self, id: TrajectoryId) -> StoreResult<bool> {
        match self.call(Request::HasTrace(id))? {
            Reply::Flag(flag) => Ok(flag),
            other => Err(unexpected(&other)),
        }
    }

    /// The trajectory whose id starts with the hex digits typed.
    pub fn resolve(&self, prefix: &str) -> StoreResult<TrajectoryId> {
        match self.call(Request::Resolve(Cow::Borrowed(prefix)))? {
            Reply::Id(id) => Ok(id),
            other => Err(unexpected(&other)),
        }
    }

    /// Size of the store's files on disk, in bytes (the search index included).
    pub fn size_on_disk(&self) -> StoreResult<u64> {
        self.number(Request::SizeOnDisk)
    }

    /// Stores trajectories in one atomic batch (replacing any with the same id); durable
    /// when it returns.
    pub fn put_trajectories(&self, trajectories: &[Trajectory]) -> StoreResult<()> {
        self.done(Request::PutTrajectories(Cow::Borrowed(trajectories)))
    }

    /// Stores the trajectories whose ids are not stored yet (an import read again stores
    /// nothing twice); returns the ids it left out because the store held them already.
    pub fn add_trajectories(&self, trajectories: &[Trajectory]) -> StoreResult<Vec<TrajectoryId>> {
        self.ids_of(Request::AddTrajectories(Cow::Borrowed(trajectories)))
    }

    /// Changes a trajectory's labels; returns the trajectory as saved. Durable when it
    /// returns.
    pub fn edit_labels(&self, id: TrajectoryId, edit: LabelEdit) -> StoreResult<Trajectory> {
        self.trajectory(Request::EditLabels { id, edit })?
            .ok_or_else(|| StoreError::NotFound(id.to_string()))
    }

    /// Adds a label in place of its author's label of that step and kind (`LabelEdit::Add`).
    pub fn add_label(&self, id: TrajectoryId, label: Label) -> StoreResult<Trajectory> {
        self.edit_labels(id, LabelEdit::Add(label))
    }

    /// Removes an author's labels of a kind (every kind when `None`) from a step, and the
    /// suggestions there (`LabelEdit::Remove`).
    pub fn remove_labels(
        &self,
        id: TrajectoryId,
        step: u32,
        kind: Option<ErrorKind>,
        author: Option<&str>,
    ) -> StoreResult<Trajectory> {
        let author = author.map(str::to_string);
        self.edit_labels(id, LabelEdit::Remove { step, kind, author })
    }

    /// Replaces a trajectory's labels with `change` of the stored ones, atomically: when
    /// another writer came first, reads them again and recomputes. `None`: no such
    /// trajectory. Durable when it returns.
    pub fn rewrite_labels(
        &self,
        id: TrajectoryId,
        mut change: impl FnMut(&[Label]) -> Vec<Label>,
    ) -> StoreResult<Option<Trajectory>> {
        for _ in 0..REWRITE_ATTEMPTS {
            let Some(current) = self.get_without_trace(id)? else {
                return Ok(None);
            };
            let labels = change(&current.labels);
            let expected = current.labels;
            match self.edit_labels(id, LabelEdit::Swap { expected, labels }) {
                Err(StoreError::Conflict(_)) => continue,
                result => return result.map(Some),
            }
        }
        Err(StoreError::Conflict(format!(
            "the labels of {id} kept changing while they were rewritten; try again"
        )))
    }

    /// Removes trajectories and everything indexed about them; returns how many existed.
    pub fn delete_trajectories(&self, ids: &[TrajectoryId]) -> StoreResult<usize> {
        Ok(self.number(Request::DeleteTrajectories(Cow::Borrowed(ids)))? as usize)
    }

    /// A trajectory's summary, as lists show it.
    pub fn summary_of(&self, id: TrajectoryId) -> StoreResult<Option<Summary>> {
        match self.call(Request::SummaryOf(id))? {
            Reply::Summary(summary) => Ok(summary.map(|boxed| *boxed)),
            other => Err(unexpected(&other)),
        }
    }

    /// Stores tasks (replacing any with the same id); durable when it returns.
    pub fn put_tasks(&self, tasks: &[Task]) -> StoreResult<()> {
        self.done(Request::PutTasks(Cow::Borrowed(tasks)))
    }

    /// A task by id.
    pub fn get_task(&self, id: &str) -> StoreResult<Option<Task>> {
        match self.call(Request::GetTask(Cow::Borrowed(id)))? {
            Reply::Task(task) => Ok(task.map(|boxed| *boxed)),
            other => Err(unexpected(&other)),
        }
    }

    /// Every task, by id.
    pub fn tasks(&self) -> StoreResult<Vec<Task>> {
        match self.call(Request::Tasks)? {
            Reply::Tasks(tasks) => Ok(tasks),
            other => Err(unexpected(&other)),
        }
    }

    /// Number of tasks stored; an error, not 0, when the server cannot be reached.
    pub fn task_count(&self) -> StoreResult<usize> {
        Ok(self.number(Request::TaskCount)? as usize)
    }

    /// Stores a run's record; durable when it returns.
    pub fn put_run(&self, run: &RunInfo) -> StoreResult<()> {
        self.done(Request::PutRun(Cow::Borrowed(run)))
    }

    /// A run's record.
    pub fn get_run(&self, id: &str) -> StoreResult<Option<RunInfo>> {
        match self.call(Request::GetRun(Cow::Borrowed(id)))? {
            Reply::Run(run) => Ok(run.map(|boxed| *boxed)),
            other => Err(unexpected(&other)),
        }
    }

    /// Every run's record, oldest first.
    pub fn runs(&self) -> StoreResult<Vec<RunInfo>> {
        match self.call(Request::Runs)? {
            Reply::Runs(runs) => Ok(runs),
            other => Err(unexpected(&other)),
        }
    }

    /// Stores a metrics row (replacing the row of its run and step); durable when it
    /// returns.
    pub fn put_metrics(&self, row: &MetricsRow) -> StoreResult<()> {
        self.done(Request::PutMetrics(Cow::Borrowed(row)))
    }

    /// A run's metrics rows, by step.
    pub fn metrics(&self, run: &str) -> StoreResult<Vec<MetricsRow>> {
        match self.call(Request::Metrics(Cow::Borrowed(run)))? {
            Reply::Metrics(rows) => Ok(rows),
            other => Err(unexpected(&other)),
        }
    }

    /// Removes a run's metrics rows after `after_step`; returns how many went.
    pub fn truncate_metrics(&self, run: &str, after_step: u64) -> StoreResult<usize> {
        let run = Cow::Borrowed(run);
        Ok(self.number(Request::TruncateMetrics { run, after_step })? as usize)
    }

    /// The ids of the trajectories a filter matches, in stored order.
    pub fn ids(&self, filter: &Filter) -> StoreResult<Vec<TrajectoryId>> {
        self.ids_of(Request::Ids(Cow::Borrowed(filter)))
    }

    /// The summaries a query selects, in its order and window.
    pub fn query(&self, query: &Query) -> StoreResult<Vec<Summary>> {
        match self.call(Request::Query(Cow::Borrowed(query)))? {
            Reply::Summaries(summaries) => Ok(summaries),
            other => Err(unexpected(&other)),
        }
    }

    /// Number of trajectories a filter selects.
    pub fn count(&self, filter: &Filter) -> StoreResult<usize> {
        Ok(self.number(Request::Count(Cow::Borrowed(filter)))? as usize)
    }

    /// The trajectories a full-text query matches.
    pub fn search_text(&self, query: &str) -> StoreResult<Vec<TrajectoryId>> {
        self.ids_of(Request::SearchText(Cow::Borrowed(query)))
    }

    /// Which messages of one trajectory a full-text query matches, and its words.
    pub fn text_hits(&self, query: &str, id: TrajectoryId) -> StoreResult<TextHits> {
        let query = Cow::Borrowed(query);
        match self.call(Request::TextHits { query, id })? {
            Reply::Hits(hits) => Ok(hits),
            other => Err(unexpected(&other)),
        }
    }

    /// Bytes of the full-text index on disk.
    pub fn text_index_size(&self) -> StoreResult<u64> {
        self.number(Request::TextIndexSize)
    }

    /// Rebuilds the full-text index from the records.
    pub fn rebuild_text_index(&self) -> StoreResult<()> {
        self.done(Request::RebuildTextIndex)
    }

    /// How many writes the full-text index has yet to take in (0 when in step); it catches
    /// up once writes pause, and before any search.
    pub fn text_index_behind(&self) -> StoreResult<u64> {
        self.number(Request::TextIndexBehind)
    }

    /// The schema version on disk.
    pub fn schema_version(&self) -> StoreResult<u32> {
        Ok(self.number(Request::SchemaVersion)? as u32)
    }

    /// What has been written since the store (or its server) was opened: compare two
    /// stamps to see what changed.
    pub fn changes(&self) -> StoreResult<ChangeStamp> {
        match self.call(Request::Changes)? {
            Reply::Changes(stamp) => Ok(stamp),
            other => Err(unexpected(&other)),
        }
    }

    /// Rewrites the store into fresh files keeping only live records (the server does it
    /// between other clients' requests).
    pub fn compact(self) -> StoreResult<(Store, CompactionReport)> {
        match self.backend {
            Backend::Local(local) => {
                let (local, report) = (*local).compact()?;
                Ok((Self::from_local(local), report))
            }
            Backend::Remote(remote) => match remote.call(&Request::Compact)? {
                Reply::Compacted(report) => Ok((
                    Self {
                        path: self.path,
                        backend: Backend::Remote(remote),
                    },
                    report,
                )),
                other => Err(unexpected(&other)),
            },
        }
    }
}

/// A reply of the wrong type: a server of another build.
pub(super) fn unexpected(reply: &Reply) -> StoreError {
    let shown = format!("{reply:?}");
    let shown: String = shown.chars().take(80).collect();
    StoreError::Server(format!("unexpected reply {shown}"))
}
