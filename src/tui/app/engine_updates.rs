//! What the app does with each engine update.

use super::App;
use crate::engine::{Command, ExportProgress, RunProgress, Update};
use crate::trajectory::RunStatus;
use crate::tui::curate_form::ExportStatus;
use crate::tui::rollouts::AuditView;

impl App {
    /// Handles an update from the engine.
    pub(super) fn on_engine(&mut self, update: Update) -> Vec<Command> {
        match update {
            Update::State(state) => {
                self.status.engine = state;
                Vec::new()
            }
            Update::Window(window) => {
                if window.tag == self.rollouts.tag && window.stored.is_some() {
                    self.status.stored = window.stored;
                }
                self.rollouts.receive(window, &mut self.tags)
            }
            Update::Queue { tag, entries } => {
                if tag == self.rollouts.tag {
                    self.queue.receive(tag, entries);
                }
                Vec::new()
            }
            Update::Located { tag, id, index } => self.located(tag, id, index),
            Update::Trajectory { tag, loaded } => {
                if tag == self.rollouts.preview_tag {
                    self.rollouts.preview = Some(loaded.clone());
                }
                if tag == self.trajectory.tag {
                    let highlighter = self.highlighter.get_or_insert_with(Default::default);
                    self.trajectory.receive(tag, &loaded, highlighter);
                    self.refit_tokens();
                }
                Vec::new()
            }
            Update::Group { tag, group } => {
                let focus = self
                    .trajectory
                    .id()
                    .or(self.rollouts.selected().map(|s| s.id));
                self.group.receive(tag, *group, focus);
                Vec::new()
            }
            Update::LabelsSaved {
                id,
                labels,
                summary,
            } => {
                self.trajectory.labels_saved(id, &labels);
                self.rollouts.refresh_row(&summary);
                if let Some(preview) = &mut self.rollouts.preview
                    && preview.trajectory.id == id
                {
                    preview.trajectory.labels = labels.clone();
                }
                if let Some(group) = &mut self.group.group
                    && let Some(member) = group.members.iter_mut().find(|member| member.id == id)
                {
                    member.labels = labels.clone();
                }
                self.queue.set_labelled(id, summary.confirmed != 0);
                self.insights.stale = true;
                let shown: Vec<String> = summary
                    .confirmed_kinds()
                    .map(|kind| kind.to_string())
                    .chain(summary.suggested_kinds().map(|kind| format!("{kind}?")))
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
            Update::Runs(runs) => self.runs.receive_runs(runs),
            Update::Metrics { run, rows } => {
                self.runs.receive_metrics(&run, rows);
                Vec::new()
            }
            Update::MetricsAppended { run, rows } => {
                self.runs.append_metrics(&run, rows);
                Vec::new()
            }
            Update::Overview(overview) => {
                self.insights.overview = Some(overview);
                self.insights.stale = false;
                self.insights.loading = false;
                Vec::new()
            }
            Update::SelectionPreview {
                filter,
                rules,
                preview,
            } => {
                self.insights.form.receive(filter, rules, *preview);
                Vec::new()
            }
            Update::Export(ExportProgress::Writing { written, total }) => {
                self.insights.form.export = ExportStatus::Writing { written, total };
                Vec::new()
            }
            Update::Export(ExportProgress::Done(report)) => {
                let written = report.manifest.counts.written;
                self.notify(format!(
                    "exported {written} records to {}",
                    report.path.display()
                ));
                self.insights.form.export = ExportStatus::Done {
                    path: report.path.clone(),
                    written,
                    sha256: report.manifest.sha256.clone(),
                    seconds: report.seconds,
                };
                Vec::new()
            }
            Update::Audit {
                tag,
                findings,
                audited,
            } => {
                if tag == self.rollouts.tag && self.rollouts.audit.is_some() {
                    self.notify(format!(
                        "audit: {} of {audited} high-reward rollouts look suspicious",
                        findings.len()
                    ));
                    self.rollouts.audit = Some(AuditView {
                        findings,
                        audited: Some(audited),
                    });
                }
                Vec::new()
            }
            Update::RunChanged(progress) => self.run_changed(progress),
            Update::Failed {
                tag,
                during,
                message,
            } => {
                if during == "exporting" {
                    self.insights.form.export = ExportStatus::Failed(message.clone());
                }
                if during == "previewing the selection" {
                    self.insights.form.waiting = false;
                }
                if tag.is_some() && tag == Some(self.trajectory.tag) {
                    self.trajectory.loading = None;
                }
                if tag.is_some() && tag == Some(self.group.tag) {
                    self.group.loading = None;
                }
                if tag.is_some() && tag == Some(self.rollouts.tag) {
                    self.rollouts.requested = None;
                }
                self.insights.loading = false;
                self.warn(format!("{during}: {message}"));
                Vec::new()
            }
        }
    }

    /// Takes a live run's progress; tells the user when it pauses, ends or fails.
    fn run_changed(&mut self, progress: RunProgress) -> Vec<Command> {
        let before = self
            .runs
            .live
            .as_ref()
            .filter(|live| live.run == progress.run)
            .map(|live| live.status);
        if before != Some(progress.status) {
            let run = &progress.run;
            let step = progress.step;
            match (progress.status, &progress.error) {
                (_, Some(error)) => self.warn(format!("{run} failed at step {step}: {error}")),
                (RunStatus::Paused, _) => {
                    self.notify(format!("{run} paused after step {step}; resume or stop it"));
                }
                (RunStatus::Stopped, _) => self.notify(format!(
                    "{run} stopped after step {step} (checkpoint written; resume continues it)"
                )),
                (RunStatus::Done, _) => self.notify(format!("{run} done after {step} steps")),
                (RunStatus::Running, None) if before.is_none() => {
                    self.notify(format!("{run} started"));
                }
                _ => {}
            }
        }
        self.runs.run_changed(progress)
    }

    fn located(
        &mut self,
        tag: crate::engine::Tag,
        id: crate::trajectory::TrajectoryId,
        index: Option<usize>,
    ) -> Vec<Command> {
        if Some(tag) == self.pending_open {
            self.pending_open = None;
            return self.open_trajectory(id);
        }
        if Some(tag) != self.pending_goto {
            return Vec::new();
        }
        self.pending_goto = None;
        match index {
            Some(index) => {
                self.tab = super::Tab::Rollouts;
                self.screens.truncate(1);
                self.rollouts.select(index, &mut self.tags)
            }
            None => {
                self.notify(format!(
                    "{} is not in this list ({}); :open {} shows it",
                    id.short(8),
                    self.rollouts.listing.filter.describe(),
                    id.short(8)
                ));
                Vec::new()
            }
        }
    }
}
