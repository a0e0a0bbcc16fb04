//! Following a run as another stack writes it: files and run folders are polled (so NFS and
//! sshfs mounts work, where change events do not arrive), and what is new since the last
//! poll is stored under one run of kind `import`. Ids come from each record's content, so
//! reading a file again never duplicates a record, and following the same paths again
//! resumes the same run. A file
//! that changed in the last two seconds is still being written: a record that does not
//! parse yet (a half-written last line, a parquet file without its footer) is retried at the
//! next poll and reported only once the file has settled. The followed files are only read.

use super::folder::{is_unrecognised, merged_by_step};
use super::{claim, import_file_into};
use crate::formats::{self, Format, ImportOptions, Item, Problem};
use crate::run::{observed, this_process};
use crate::store::{Filter, Store};
use crate::trajectory::RunSettings;
use crate::trajectory::{MetricsRow, RunInfo, RunKind, RunStatus, TrajectoryId};
use anyhow::Context;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How long after its last change a file counts as written.
const SETTLED: Duration = Duration::from_secs(2);

/// A file's length and modification time: when both are unchanged, it is not read again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
}

impl Stamp {
    fn of(path: &Path) -> std::io::Result<Self> {
        let metadata = std::fs::metadata(path)?;
        Ok(Self {
            len: metadata.len(),
            modified: metadata.modified().ok(),
        })
    }

    /// Whether the file has not changed for `SETTLED`.
    fn settled(&self) -> bool {
        self.modified
            .and_then(|modified| modified.elapsed().ok())
            .is_some_and(|age| age >= SETTLED)
    }
}

/// What one poll stored or found.
#[derive(Debug, Default)]
pub struct FollowPoll {
    /// New trajectories stored.
    pub trajectories: usize,
    /// New tasks stored.
    pub tasks: usize,
    /// Metrics rows stored (new steps, or steps whose values changed).
    pub metrics_rows: usize,
    /// Bad records of settled files, each reported once.
    pub problems: Vec<Problem>,
    /// Settled files that cannot be read, each reported once.
    pub unreadable: Vec<(PathBuf, String)>,
    /// Files still being written, to be read again.
    pub waiting: usize,
}

impl FollowPoll {
    /// Whether the poll stored anything.
    pub fn stored(&self) -> bool {
        self.trajectories + self.tasks + self.metrics_rows > 0
    }
}

/// Follows files and run folders into one import run.
pub struct Follower {
    run: RunInfo,
    roots: Vec<PathBuf>,
    options: ImportOptions,
    seen: HashMap<PathBuf, Stamp>,
    known: HashSet<TrajectoryId>,
    tasks: HashSet<String>,
    metrics: BTreeMap<u64, MetricsRow>,
    /// The newest policy version (training step) of the records read.
    newest_version: u64,
}

impl Follower {
    /// Starts following `roots` (files or run output folders) as a run of kind `import`: the
    /// run that followed the same paths before, resumed, or a new one. `format` forces the
    /// format of every file of records.
    pub fn start(store: &Store, roots: &[PathBuf], format: Option<Format>) -> anyhow::Result<Self> {
        let canonical = followed_roots(roots)?;
        let previous = run_following(store, &canonical)?;
        let run = match previous {
            Some(mut run) => {
                run.status = RunStatus::Running;
                run.process = Some(this_process());
                store.put_run(&run)?;
                run
            }
            None => {
                let names: Vec<String> = canonical
                    .iter()
                    .map(|path| path.display().to_string())
                    .collect();
                let name = canonical
                    .first()
                    .map(|root| super::run_name_of(root))
                    .unwrap_or_default();
                let mut run = RunInfo::new(name, RunKind::Import, 0, names.join(", "), 0);
                run.config = RunSettings::Follow(canonical.clone());
                run.note = Some(format!("following {}", names.join(", ")));
                run.process = Some(this_process());
                run.id = store.create_run(&run)?;
                run
            }
        };
        let known = store
            .ids(&Filter {
                run: Some(run.id.clone()),
                ..Filter::default()
            })?
            .into_iter()
            .collect();
        let metrics = store
            .metrics(&run.id)?
            .into_iter()
            .map(|row| (row.step, row))
            .collect();
        Ok(Self {
            options: ImportOptions {
                format,
                strict: false,
                growing: false,
            },
            run,
            roots: canonical,
            seen: HashMap::new(),
            known,
            tasks: HashSet::new(),
            metrics,
            newest_version: 0,
        })
    }

    /// The run the followed records and metrics are stored under.
    pub fn run(&self) -> &str {
        &self.run.id
    }

    /// The paths followed, made absolute.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Reads what changed since the last poll and stores what is new.
    pub fn poll(&mut self, store: &Store) -> anyhow::Result<FollowPoll> {
        let mut poll = FollowPoll::default();
        let (records, metrics) = self.files()?;
        for path in records {
            self.read_records(store, &path, &mut poll)?;
        }
        if let Some(path) = metrics {
            self.read_metrics(store, &path, &mut poll)?;
        }
        let logged = self.metrics.keys().next_back().copied().unwrap_or(0);
        let step = logged.max(self.newest_version);
        if step > self.run.step || poll.trajectories > 0 {
            self.run.step = self.run.step.max(step);
            self.run.total_steps = self.run.step;
            store.put_run(&self.run)?;
        }
        Ok(poll)
    }

    /// Ends the follow: the run's record says `status` (stopped on Ctrl-C, done otherwise).
    pub fn finish(mut self, store: &Store, status: RunStatus) -> anyhow::Result<()> {
        self.run.status = status;
        store.put_run(&self.run)?;
        Ok(())
    }

    /// The files of records and the metrics file the roots hold now.
    fn files(&self) -> anyhow::Result<(Vec<PathBuf>, Option<PathBuf>)> {
        let mut records = Vec::new();
        let mut metrics = None;
        for root in &self.roots {
            if root.is_dir() {
                let contents = formats::folder_contents(root)
                    .with_context(|| format!("cannot read the folder {}", root.display()))?;
                records.extend(contents.records);
                metrics = metrics.or(contents.metrics);
            } else if formats::is_metrics_file(root) {
                metrics = metrics.or(Some(root.clone()));
            } else {
                records.push(root.clone());
            }
        }
        Ok((records, metrics))
    }

    /// The file's stamp, when it exists and changed since it was last read whole.
    fn changed(&self, path: &Path) -> Option<Stamp> {
        let stamp = Stamp::of(path).ok()?;
        (self.seen.get(path) != Some(&stamp)).then_some(stamp)
    }

    /// Stores the new records of one file, if it changed.
    fn read_records(
        &mut self,
        store: &Store,
        path: &Path,
        poll: &mut FollowPoll,
    ) -> anyhow::Result<()> {
        let Some(stamp) = self.changed(path) else {
            return Ok(());
        };
        let run = self.run.id.clone();
        let (known, tasks) = (&mut self.known, &mut self.tasks);
        let (mut trajectories, mut new_tasks) = (0, 0);
        let newest = &mut self.newest_version;
        let mut admit = |item: &mut Item| match item {
            Item::Trajectory(trajectory) => {
                claim(trajectory, &run);
                let new = known.insert(trajectory.id);
                trajectories += usize::from(new);
                *newest = (*newest).max(trajectory.policy_version.unwrap_or(0));
                new
            }
            Item::Task(task) => {
                let new = tasks.insert(task.id.clone());
                new_tasks += usize::from(new);
                new
            }
        };
        let options = ImportOptions {
            growing: !stamp.settled(),
            ..self.options
        };
        let result = import_file_into(store, path, options, &mut admit, &mut || {});
        let stored_before = result.as_ref().map_or(0, |report| report.already_stored);
        poll.trajectories += trajectories.saturating_sub(stored_before);
        poll.tasks += new_tasks;
        let settled = stamp.settled();
        match result {
            Ok(report) if report.problems.is_empty() => {
                self.seen.insert(path.to_path_buf(), stamp);
            }
            Ok(report) if settled => {
                poll.problems.extend(report.problems);
                self.seen.insert(path.to_path_buf(), stamp);
            }
            Err(error) if settled => {
                if !is_unrecognised(&error) {
                    poll.unreadable
                        .push((path.to_path_buf(), format!("{error:#}")));
                }
                self.seen.insert(path.to_path_buf(), stamp);
            }
            Ok(_) | Err(_) => poll.waiting += 1,
        }
        Ok(())
    }

    /// Stores the metrics rows that are new or changed, if the metrics file changed.
    fn read_metrics(
        &mut self,
        store: &Store,
        path: &Path,
        poll: &mut FollowPoll,
    ) -> anyhow::Result<()> {
        let Some(stamp) = self.changed(path) else {
            return Ok(());
        };
        let read = match formats::read_metrics(path, &self.run.id) {
            Ok(read) => read,
            Err(_) if !stamp.settled() => {
                poll.waiting += 1;
                return Ok(());
            }
            Err(error) => {
                poll.unreadable
                    .push((path.to_path_buf(), error.to_string()));
                self.seen.insert(path.to_path_buf(), stamp);
                return Ok(());
            }
        };
        if !read.problems.is_empty() && !stamp.settled() {
            poll.waiting += 1;
            return Ok(());
        }
        for row in merged_by_step(read.rows) {
            if self.metrics.get(&row.step) != Some(&row) {
                store.put_metrics(&row)?;
                poll.metrics_rows += 1;
                self.metrics.insert(row.step, row);
            }
        }
        poll.problems.extend(read.problems);
        self.seen.insert(path.to_path_buf(), stamp);
        Ok(())
    }
}

/// The paths to follow made absolute, sorted and without repeats (the key of their run);
/// an error names a path that does not exist.
pub fn followed_roots(roots: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut canonical = Vec::new();
    for root in roots {
        let path = std::fs::canonicalize(root)
            .with_context(|| format!("cannot follow {}: no such file or folder", root.display()))?;
        canonical.push(path);
    }
    canonical.sort();
    canonical.dedup();
    Ok(canonical)
}

/// The import run that followed exactly these roots (from `followed_roots`) before, to
/// resume; an error when a process follows them now.
pub fn run_following(store: &Store, roots: &[PathBuf]) -> anyhow::Result<Option<RunInfo>> {
    let Some(run) = store
        .runs()?
        .into_iter()
        .find(|run| run.kind == RunKind::Import && run.config.followed() == Some(roots))
    else {
        return Ok(None);
    };
    let run = observed(run);
    if matches!(run.status, RunStatus::Running | RunStatus::Paused) {
        let pid = run.process.as_ref().map_or(0, |process| process.pid);
        anyhow::bail!(
            "run {} already follows these paths (process {pid}); `rollscope runs stop {}` ends it",
            run.id,
            run.id
        );
    }
    Ok(Some(run))
}

/// The paths an import run follows, when it is a follow.
pub fn followed_paths(run: &RunInfo) -> Option<Vec<PathBuf>> {
    run.config.followed().map(<[PathBuf]>::to_vec)
}
