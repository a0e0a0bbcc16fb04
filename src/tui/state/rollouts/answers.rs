//! What the Rollouts tab does with the engine's answers: windows, trajectories, groups,
//! locations, the audit queue, saved labels and failures.

use super::RolloutsTab;
use crate::curate::Finding;
use crate::engine::{Command, LoadedGroup, LoadedTrajectory, Tag, Window};
use crate::store::{Summary, TextHits};
use crate::trajectory::{Label, TrajectoryId};
use crate::tui::state::list::AuditView;
use crate::tui::state::status::Status;
use crate::tui::token_text::TokenText;
use ratatui::layout::Rect;

impl RolloutsTab {
    /// Takes where a trajectory is: opens it or selects its row, as asked. `Some` holds the
    /// commands that follow, and means the Rollouts tab is to be shown; `None` when the
    /// answer is stale or the list does not hold the trajectory (which the user is told).
    pub fn located(
        &mut self,
        tag: Tag,
        id: TrajectoryId,
        index: Option<usize>,
        viewport: Rect,
        token_text: &dyn TokenText,
        status: &mut Status,
    ) -> Option<Vec<Command>> {
        if Some(tag) == self.pending_open {
            self.pending_open = None;
            return Some(self.open_trajectory(id, false, viewport, token_text));
        }
        if Some(tag) != self.pending_goto {
            return None;
        }
        self.pending_goto = None;
        match index {
            Some(index) => {
                self.screens.truncate(1);
                Some(self.select(index))
            }
            None => {
                status.notify(format!(
                    "{} is not in this list ({}); :open {} shows it",
                    id.short(8),
                    self.list.listing.filter.describe(),
                    id.short(8)
                ));
                None
            }
        }
    }

    /// Takes a window of the list; returns the preview request it makes necessary.
    pub fn receive_window(&mut self, window: Window) -> Vec<Command> {
        self.list.receive(window, &mut self.tags)
    }

    /// Takes a loaded trajectory: the list's preview, the trajectory screen's, or both.
    pub fn receive_trajectory(
        &mut self,
        tag: Tag,
        loaded: Box<LoadedTrajectory>,
        viewport: Rect,
        token_text: &dyn TokenText,
    ) {
        if tag == self.list.preview_tag {
            self.list.preview = Some(loaded.clone());
        }
        if tag == self.trajectory.tag {
            let highlighter = self.highlighter.get_or_insert_with(Default::default);
            self.trajectory
                .receive(tag, &loaded, highlighter, self.blind);
            self.refit_tokens(viewport, token_text);
        }
    }

    /// Takes a search's hits in the trajectory open, if they are for it.
    pub fn receive_hits(&mut self, tag: Tag, id: TrajectoryId, hits: &TextHits) {
        if tag == self.trajectory.tag {
            self.trajectory.receive_hits(id, hits);
        }
    }

    /// Takes a loaded group; selects the trajectory open (or selected) when it is a member.
    pub fn receive_group(&mut self, tag: Tag, group: LoadedGroup) {
        let focus = self
            .trajectory
            .id()
            .or(self.list.selected().map(|summary| summary.id));
        self.group.receive(tag, group, focus);
    }

    /// Takes the audit queue of the list, telling the user what it found.
    pub fn receive_audit(
        &mut self,
        tag: Tag,
        findings: Vec<Finding>,
        audited: usize,
        status: &mut Status,
    ) {
        if tag == self.list.tag && self.list.audit.is_some() {
            status.notify(format!(
                "audit: {} of {audited} high-reward rollouts look suspicious",
                findings.len()
            ));
            self.list.audit = Some(AuditView {
                findings,
                audited: Some(audited),
            });
        }
    }

    /// Takes a trajectory's labels as saved into every screen that shows it.
    pub fn labels_saved(&mut self, id: TrajectoryId, labels: &[Label], summary: &Summary) {
        self.trajectory.labels_saved(id, labels);
        self.list.refresh_row(summary);
        if let Some(preview) = &mut self.list.preview
            && preview.trajectory.id == id
        {
            preview.trajectory.labels = labels.to_vec();
        }
        if let Some(group) = &mut self.group.group
            && let Some(member) = group.members.iter_mut().find(|member| member.id == id)
        {
            member.labels = labels.to_vec();
        }
    }

    /// Stops waiting for the request a failure answers.
    pub fn failed(&mut self, tag: Option<Tag>) {
        if tag.is_some() && tag == Some(self.trajectory.tag) {
            self.trajectory.loading = None;
        }
        if tag.is_some() && tag == Some(self.group.tag) {
            self.group.loading = None;
        }
        if tag.is_some() && tag == Some(self.list.tag) {
            self.list.requested = None;
        }
    }

    /// Whether a command is still wanted: a trajectory still awaited, a page still asked for.
    pub fn still_wanted(&self, command: &Command) -> bool {
        match command {
            Command::LoadTrajectory { tag, .. } => {
                *tag == self.list.preview_tag || *tag == self.trajectory.tag
            }
            Command::Page { tag, window } => {
                *tag == self.list.tag && self.list.requested.as_ref() == Some(window)
            }
            _ => true,
        }
    }
}
