//! What the app does with each engine update: it hands each to the tab it answers.

use super::{App, Tab};
use crate::engine::{Command, Update};
use crate::trajectory::RunInfo;

impl App {
    /// Handles an update from the engine.
    pub(super) fn on_engine(&mut self, update: Update) -> Vec<Command> {
        match update {
            Update::State(state) => {
                self.status.engine = state;
                Vec::new()
            }
            Update::Window(window) => {
                if window.tag == self.tabs.rollouts.list.tag && window.stored.is_some() {
                    self.status.stored = window.stored;
                }
                self.tabs.rollouts.receive_window(window)
            }
            Update::StoreChanged(changed) => {
                let mut commands = Vec::new();
                if changed.trajectories || changed.labels {
                    self.overview.stale = true;
                    commands.extend(self.tabs.rollouts.list.recount());
                }
                commands.extend(self.tabs.runs.store_changed(changed.runs, changed.metrics));
                commands
            }
            Update::Queue { tag, entries } => {
                if tag == self.tabs.rollouts.list.tag {
                    self.queue.receive(tag, entries);
                }
                Vec::new()
            }
            Update::Located { tag, id, index } => {
                let located = self.tabs.rollouts.located(
                    tag,
                    id,
                    index,
                    self.viewport,
                    self.token_text.as_ref(),
                    &mut self.status,
                );
                match located {
                    Some(commands) => {
                        self.tab = Tab::Rollouts;
                        commands
                    }
                    None => Vec::new(),
                }
            }
            Update::Trajectory { tag, loaded } => {
                self.tabs.rollouts.receive_trajectory(
                    tag,
                    loaded,
                    self.viewport,
                    self.token_text.as_ref(),
                );
                Vec::new()
            }
            Update::TextHits { tag, id, hits } => {
                self.tabs.rollouts.receive_hits(tag, id, &hits);
                Vec::new()
            }
            Update::Group { tag, group } => {
                self.tabs.rollouts.receive_group(tag, *group);
                Vec::new()
            }
            Update::LabelsSaved {
                id,
                labels,
                summary,
            } => {
                self.tabs.rollouts.labels_saved(id, &labels, &summary);
                self.queue.set_labelled(id, summary.confirmed != 0);
                self.overview.stale = true;
                let blind = self.tabs.rollouts.blind;
                let shown: Vec<String> = summary
                    .confirmed_kinds()
                    .map(|kind| self.label_kinds.name(kind).to_string())
                    .chain(
                        summary
                            .suggested_kinds()
                            .filter(|_| !blind)
                            .map(|kind| format!("{}?", self.label_kinds.name(kind))),
                    )
                    .collect();
                let mut text = format!(
                    "saved {}: {}",
                    id.short(8),
                    if shown.is_empty() {
                        "no labels".to_string()
                    } else {
                        shown.join(" ")
                    }
                );
                if let Some(progress) = self.queue.progress() {
                    text.push_str(&format!(" · {progress}"));
                }
                self.notify(text);
                Vec::new()
            }
            Update::Runs(runs) => {
                let progress = |run: &RunInfo| (run.step, run.status);
                if self
                    .tabs
                    .runs
                    .runs
                    .iter()
                    .map(progress)
                    .ne(runs.iter().map(progress))
                {
                    self.overview.stale = true;
                }
                self.tabs.runs.receive_runs(runs, &mut self.status)
            }
            Update::Launched { pid, log } => self.tabs.runs.launched(pid, &log, &mut self.status),
            Update::Metrics { run, rows } => {
                self.tabs.runs.receive_metrics(&run, rows);
                Vec::new()
            }
            Update::MetricsAppended { run, rows } => {
                self.tabs.runs.append_metrics(&run, rows);
                Vec::new()
            }
            Update::Overview(overview) => {
                self.overview.receive(overview);
                Vec::new()
            }
            Update::SelectionPreview {
                filter,
                rules,
                preview,
                kept,
            } => {
                self.tabs
                    .curate
                    .receive_preview(*filter, *rules, *preview, kept);
                Vec::new()
            }
            Update::Export(progress) => {
                self.tabs.curate.export_progress(progress, &mut self.status);
                Vec::new()
            }
            Update::Disagreements(steps) => self.receive_disagreements(steps),
            Update::Audit {
                tag,
                findings,
                audited,
            } => {
                self.tabs
                    .rollouts
                    .receive_audit(tag, findings, audited, &mut self.status);
                Vec::new()
            }
            Update::Failed {
                tag,
                during,
                message,
            } => {
                self.tabs.curate.failed(during, &message);
                self.tabs.rollouts.failed(tag);
                self.overview.loading = false;
                self.warn(format!("{during}: {message}"));
                Vec::new()
            }
        }
    }
}
