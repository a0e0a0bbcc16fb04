//! The worker loop: takes commands in order, does the store work, sends updates.

use super::EngineConfig;
use super::command::{Command, GroupKey, LabelDraft, MOST_TASK_ATTEMPTS, Tag};
use super::jobs;
use super::launch::Start;
use super::overview::Overview;
use super::spelling::Spellers;
use super::steering::Steering;
use super::update::{EngineState, LoadedGroup, LoadedTrajectory, Update};
use crate::run::observed;
use crate::store::{ChangeStamp, Filter, LabelEdit, Query, Store, is_own};
use crate::trajectory::{Label, Trajectory, TrajectoryId, now_millis};
use anyhow::Context;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::time::Duration;

mod listing;

use listing::Held;

/// How often an idle engine looks for what other processes wrote.
const CHANGES_POLL: Duration = Duration::from_millis(250);

/// The engine's worker: owns the store handle and the current listing.
pub(super) struct Worker {
    store: Arc<Store>,
    config: EngineConfig,
    updates: Sender<Update>,
    held: Option<Held>,
    stored: Option<usize>,
    steering: Steering,
    spellers: Spellers,
    stamp: Option<ChangeStamp>,
}

impl Worker {
    pub(super) fn new(store: Arc<Store>, config: EngineConfig, updates: Sender<Update>) -> Self {
        let steering = Steering::new(
            config.launcher.clone(),
            config.session.clone(),
            config.device,
        );
        Self {
            store,
            config,
            updates,
            held: None,
            stored: None,
            steering,
            spellers: Spellers::default(),
            stamp: None,
        }
    }

    /// Handles commands until every sender is gone; says `Idle` whenever the queue empties.
    /// Runs it launched go on training in their own processes.
    pub(super) fn run(mut self, commands: Receiver<Command>) {
        let mut busy = false;
        loop {
            let command = match commands.try_recv() {
                Ok(command) => command,
                Err(TryRecvError::Disconnected) => break,
                Err(TryRecvError::Empty) => {
                    if busy {
                        self.send(Update::State(EngineState::Idle));
                        busy = false;
                    }
                    match commands.recv_timeout(CHANGES_POLL) {
                        Ok(command) => command,
                        Err(RecvTimeoutError::Timeout) => {
                            self.watch_changes();
                            continue;
                        }
                        Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
            };
            if !busy {
                self.send(Update::State(EngineState::Busy(command.activity())));
                busy = true;
            }
            let tag = command.tag();
            let during = command.activity();
            if let Err(error) = self.handle(command) {
                self.send(Update::Failed {
                    tag,
                    during,
                    message: format!("{error:#}"),
                });
            }
        }
    }

    /// Tells the UI what other writers changed in the store since the last look (another
    /// process's labels, a run training elsewhere, an import).
    fn watch_changes(&mut self) {
        self.steering.reap();
        let Ok(stamp) = self.store.changes() else {
            return;
        };
        if let Some(earlier) = self.stamp.replace(stamp) {
            let changed = stamp.since(&earlier);
            if changed.any() {
                if changed.trajectories {
                    self.stored = None;
                }
                self.send(Update::StoreChanged(changed));
            }
        }
    }

    fn send(&self, update: Update) {
        let _ = self.updates.send(update);
    }

    fn handle(&mut self, command: Command) -> anyhow::Result<()> {
        match command {
            Command::List {
                tag,
                listing,
                window,
            } => self.list(tag, &listing, window),
            Command::Page { tag, window } => self.page(tag, window),
            Command::Locate {
                tag,
                listing,
                prefix,
            } => self.locate(tag, listing, &prefix),
            Command::LoadTrajectory { tag, id } => self.load_trajectory(tag, id),
            Command::FindText { tag, id, query } => {
                let hits = self.store.text_hits(&query, id)?;
                self.send(Update::TextHits { tag, id, hits });
                Ok(())
            }
            Command::LoadGroup { tag, key } => self.load_group(tag, key),
            Command::SaveLabel { id, draft } => self.save_label(id, draft),
            Command::RemoveLabels { id, step, kind } => {
                let author = self.config.annotator.as_deref();
                let saved = self.store.remove_labels(id, step, kind, author)?;
                self.labels_saved(&saved)
            }
            Command::SetLabels { id, labels } => {
                let author = self.config.annotator.clone();
                let labels = labels
                    .into_iter()
                    .filter(|label| is_own(label, author.as_deref()))
                    .collect();
                let edit = LabelEdit::ReplaceOwn { author, labels };
                let saved = self.store.edit_labels(id, edit)?;
                self.labels_saved(&saved)
            }
            Command::LoadRuns => {
                let runs = self.store.runs()?;
                self.send(Update::Runs(runs.into_iter().map(observed).collect()));
                Ok(())
            }
            Command::LoadMetrics { run } => {
                let rows = self.store.metrics(&run)?;
                self.send(Update::Metrics { run, rows });
                Ok(())
            }
            Command::RecordMetrics(row) => {
                self.store.put_metrics(&row)?;
                self.send(Update::MetricsAppended {
                    run: row.run.clone(),
                    rows: vec![row],
                });
                Ok(())
            }
            Command::LoadOverview { filter } => {
                let overview = Overview::compute(&self.store, &filter)?;
                self.send(Update::Overview(Box::new(overview)));
                Ok(())
            }
            Command::PreviewSelection { filter, rules } => {
                let selection = crate::curate::select(&self.store, &filter, &rules)?;
                self.send(Update::SelectionPreview {
                    filter: Box::new(filter),
                    rules: Box::new(rules),
                    kept: selection.ids(),
                    preview: Box::new(selection.preview),
                });
                Ok(())
            }
            Command::Export { request, replace } => {
                let store = Arc::clone(&self.store);
                jobs::spawn_export(store, *request, replace, self.updates.clone())?;
                Ok(())
            }
            Command::FindDisagreements(filter) => {
                let ratings = crate::curate::agreement::load_ratings(&self.store, &filter, false)?;
                self.send(Update::Disagreements(ratings.disagreements()));
                Ok(())
            }
            Command::ListAudit {
                tag,
                filter,
                options,
                window,
            } => {
                let (rows, findings, audited) = jobs::audit_rows(&self.store, &filter, &options)?;
                let ids = rows.iter().map(|summary| summary.id).collect();
                self.held = Some(Held { tag, ids });
                self.page(tag, window)?;
                self.send(Update::Audit {
                    tag,
                    findings,
                    audited,
                });
                Ok(())
            }
            Command::LaunchRun(config) => {
                let launched = self.steering.launch(&self.store, Start::New(config))?;
                self.send(launched);
                Ok(())
            }
            Command::FollowRun(roots) => {
                let launched = self.steering.launch(&self.store, Start::Follow(roots))?;
                self.send(launched);
                Ok(())
            }
            Command::ForkTrajectory(fork) => {
                let launched = self.steering.launch(&self.store, Start::Fork(fork))?;
                self.send(launched);
                Ok(())
            }
            Command::PauseRun(run) => self.steering.pause(&self.store, &run),
            Command::ResumeRun(run) => {
                if let Some(launched) = self.steering.resume(&self.store, &run)? {
                    self.send(launched);
                }
                Ok(())
            }
            Command::StopRun(run) => self.steering.stop(&self.store, &run),
        }
    }

    fn load_trajectory(&mut self, tag: Tag, id: TrajectoryId) -> anyhow::Result<()> {
        let trajectory = self
            .store
            .get(id)?
            .with_context(|| format!("no trajectory with id {id}"))?;
        let task = match &trajectory.task_id {
            Some(task_id) => self.store.get_task(task_id)?,
            None => None,
        };
        let session = self.config.session.as_ref();
        let spellings = self.spellers.spell(&self.store, session, &trajectory);
        let parent = match &trajectory.fork {
            Some(origin) => self.store.get_without_trace(origin.parent)?.map(Box::new),
            None => None,
        };
        let tree = super::fork_tree::fork_tree(&self.store, &trajectory).unwrap_or_default();
        self.send(Update::Trajectory {
            tag,
            loaded: Box::new(LoadedTrajectory {
                trajectory,
                task,
                spellings,
                parent,
                tree,
            }),
        });
        Ok(())
    }

    fn load_group(&self, tag: Tag, key: GroupKey) -> anyhow::Result<()> {
        let (filter, limit) = match &key {
            GroupKey::Grpo { run, step, group } => (
                Filter {
                    run: Some(run.clone()),
                    step: Some(*step),
                    group: Some(*group),
                    ..Filter::default()
                },
                None,
            ),
            GroupKey::Task { task } => (
                Filter {
                    task: Some(task.clone()),
                    ..Filter::default()
                },
                Some(MOST_TASK_ATTEMPTS),
            ),
        };
        let summaries = self.store.query(&Query {
            filter,
            sort: crate::store::SortKey::Step,
            limit,
            ..Query::default()
        })?;
        let mut members: Vec<Trajectory> = Vec::with_capacity(summaries.len());
        for summary in &summaries {
            if let Some(trajectory) = self.store.get_without_trace(summary.id)? {
                members.push(trajectory);
            }
        }
        let task = match members.first().and_then(|member| member.task_id.as_ref()) {
            Some(task_id) => self.store.get_task(task_id)?,
            None => None,
        };
        self.send(Update::Group {
            tag,
            group: Box::new(LoadedGroup { key, members, task }),
        });
        Ok(())
    }

    fn save_label(&mut self, id: TrajectoryId, draft: LabelDraft) -> anyhow::Result<()> {
        let label = Label {
            step: draft.step,
            kind: draft.kind,
            status: draft.status,
            note: draft.note,
            author: self.config.annotator.clone(),
            time: now_millis(),
        };
        let saved = self.store.add_label(id, label)?;
        self.labels_saved(&saved)
    }

    /// Tells the UI about labels the store has flushed, with the trajectory's new summary.
    fn labels_saved(&mut self, saved: &Trajectory) -> anyhow::Result<()> {
        let summary = self
            .store
            .summary_of(saved.id)?
            .with_context(|| format!("trajectory {} has no summary", saved.id))?;
        self.send(Update::LabelsSaved {
            id: saved.id,
            labels: saved.labels.clone(),
            summary: Box::new(summary),
        });
        Ok(())
    }
}
