//! The Rollouts tab's state: its stack of screens (the list at the bottom, a trajectory or a
//! group above it), each screen's state, and the requests in flight that feed them.

mod answers;

use super::group::GroupState;
use super::list::{AuditView, ListState};
use super::status::Status;
use super::trajectory::TrajectoryState;
use crate::engine::{Command, GroupKey, Listing, Tag};
use crate::trajectory::{Trajectory, TrajectoryId};
use crate::tui::action::Action;
use crate::tui::annotate;
use crate::tui::highlight::Highlighter;
use crate::tui::layout;
use crate::tui::outcome::Outcome;
use crate::tui::prompt::{Prompt, PromptKind};
use crate::tui::tags::Tags;
use crate::tui::token_text::{self, TokenLayout, TokenText};
use ratatui::layout::Rect;

/// The screens of the Rollouts tab, stacked: the list at the bottom.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Screen {
    /// The list with its preview.
    List,
    /// One trajectory, turn by turn.
    Trajectory,
    /// One GRPO group.
    Group,
}

/// The Rollouts tab's state.
pub struct RolloutsTab {
    /// The screens, the list at the bottom.
    pub screens: Vec<Screen>,
    /// The list.
    pub list: ListState,
    /// The trajectory screen.
    pub trajectory: TrajectoryState,
    /// The group screen.
    pub group: GroupState,
    /// Blind labelling: runs, policies, process scores and suggested labels are not shown.
    pub blind: bool,
    tags: Tags,
    highlighter: Option<std::sync::Arc<Highlighter>>,
    pending_open: Option<Tag>,
    pending_goto: Option<Tag>,
}

impl Default for RolloutsTab {
    fn default() -> Self {
        Self {
            screens: vec![Screen::List],
            list: ListState::default(),
            trajectory: TrajectoryState::default(),
            group: GroupState::default(),
            blind: false,
            tags: Tags::default(),
            highlighter: None,
            pending_open: None,
            pending_goto: None,
        }
    }
}

impl RolloutsTab {
    /// The screen on top.
    pub fn screen(&self) -> Screen {
        self.screens.last().copied().unwrap_or(Screen::List)
    }

    /// Starts a new listing in the list.
    pub fn relist(&mut self, listing: Listing) -> Command {
        self.list.relist(listing, &mut self.tags)
    }

    /// Starts a new listing with the cursor on row `cursor` (kept within the rows it has),
    /// or on `seek`'s row when the first window holds it.
    pub fn relist_at(
        &mut self,
        listing: Listing,
        cursor: usize,
        seek: Option<TrajectoryId>,
    ) -> Command {
        let command = self.list.relist_at(listing, cursor, &mut self.tags);
        self.list.seek = seek;
        command
    }

    /// Starts the list's listing over.
    pub fn relist_current(&mut self) -> Command {
        self.relist(self.list.listing.clone())
    }

    /// Goes back to the list and starts a new listing in it.
    pub fn show(&mut self, listing: Listing) -> Command {
        self.screens.truncate(1);
        self.relist(listing)
    }

    /// Opens or closes the audit queue of the list's filter, back on the list; the command
    /// lists it (or the plain list again).
    pub fn toggle_audit(&mut self, status: &mut Status) -> Command {
        let entering = self.list.audit.is_none();
        self.list.audit = entering.then(AuditView::default);
        status.notify(if entering {
            "auditing high-reward rollouts …"
        } else {
            "audit queue closed"
        });
        self.show(self.list.listing.clone())
    }

    /// Moves the list's cursor to a row.
    pub fn select(&mut self, row: usize) -> Vec<Command> {
        self.list.select(row, &mut self.tags)
    }

    /// Fits the list and the token view to a new terminal size.
    pub fn resize(&mut self, viewport: Rect, token_text: &dyn TokenText) -> Vec<Command> {
        self.refit_tokens(viewport, token_text);
        self.list
            .set_height(layout::list_rows(viewport), &mut self.tags)
    }

    /// Lays the trajectory pane out for its width, and the token view's tokens.
    fn refit_tokens(&mut self, viewport: Rect, token_text: &dyn TokenText) {
        let width = layout::pane_columns(viewport);
        self.trajectory
            .fit(width, layout::transcript_rows(viewport));
        let open = self.trajectory.open.as_ref();
        let ids = open
            .and_then(|open| open.trajectory().token_trace.as_ref())
            .map(|trace| trace.token_ids.as_slice());
        let spellings = open.and_then(|open| open.loaded.spellings.as_ref());
        let token_text = token_text::spelling(spellings, token_text);
        if let (Some(_), Some(ids)) = (&self.trajectory.tokens, ids) {
            self.trajectory.token_layout = TokenLayout::flow(ids, token_text, width);
        }
    }

    /// Handles an action on the screen shown (labels and the badcase queue are the app's);
    /// `viewport` sizes pages and `token_text` the token view.
    pub fn on_action(
        &mut self,
        action: Action,
        viewport: Rect,
        token_text: &dyn TokenText,
        status: &mut Status,
    ) -> Outcome {
        if action == Action::Back {
            if self.screen() == Screen::Trajectory && self.trajectory.tokens.is_some() {
                self.trajectory.tokens = None;
            } else if self.screens.len() > 1 {
                self.screens.pop();
            }
            return Outcome::Commands(Vec::new());
        }
        match self.screen() {
            Screen::List => self.on_list_action(action, status),
            Screen::Trajectory => {
                if action == Action::Group {
                    let key = self.trajectory.open.as_ref().and_then(|open| {
                        let trajectory = open.trajectory();
                        GroupKey::of(
                            trajectory.run.as_deref(),
                            trajectory.policy_version,
                            trajectory.group,
                            trajectory.task_id.as_deref(),
                        )
                    });
                    return key.map_or_else(no_group, Outcome::OpenGroup);
                }
                let outcome = self
                    .trajectory
                    .on_action(action, layout::pane_rows(viewport));
                if action == Action::Tokens {
                    self.refit_tokens(viewport, token_text);
                }
                outcome
            }
            Screen::Group => {
                let (_, body, _) = layout::shell(viewport);
                let page = usize::from(layout::group(body).1.height.saturating_sub(2));
                self.group.on_action(action, page)
            }
        }
    }

    fn on_list_action(&mut self, action: Action, status: &mut Status) -> Outcome {
        let listing = match action {
            Action::Search => {
                let text = self.search().unwrap_or_default();
                return Outcome::Prompt(Prompt::recalled(PromptKind::Search, text));
            }
            Action::Open => {
                return self
                    .list
                    .selected()
                    .map_or(Outcome::Commands(Vec::new()), |summary| {
                        Outcome::Open(summary.id)
                    });
            }
            Action::Group => {
                let key = self.list.selected().and_then(|summary| {
                    GroupKey::of(
                        Some(&summary.run),
                        summary.step,
                        summary.group,
                        Some(&summary.task_id),
                    )
                });
                return key.map_or_else(no_group, Outcome::OpenGroup);
            }
            Action::Sort => self.list.next_sort(),
            Action::Reverse => {
                let mut listing = self.list.listing.clone();
                listing.descending = !listing.descending;
                listing
            }
            Action::Outcome => self.list.next_outcome(),
            Action::Unlabelled => {
                let mut listing = self.list.listing.clone();
                listing.filter.unlabelled_failures = !listing.filter.unlabelled_failures;
                listing
            }
            _ => return self.list.on_move(action, &mut self.tags),
        };
        status.notify(format!(
            "filter {} · sort {}{}",
            listing.filter.describe(),
            listing.sort.as_str(),
            if listing.descending { " ↓" } else { "" }
        ));
        Outcome::Commands(vec![self.relist(listing)])
    }

    /// Loads the open trajectory again from the store (its new branches, labels, scores),
    /// keeping the turn shown.
    pub fn reload_trajectory(&mut self, id: TrajectoryId) -> Vec<Command> {
        let tag = self.tags.fresh();
        self.trajectory.start_loading(id, tag, false);
        self.trajectory.reloading = true;
        vec![Command::LoadTrajectory { tag, id }]
    }

    /// Shows a trajectory on the trajectory screen: at once when the preview holds it,
    /// else once the engine has loaded it; at its first turn or, `at_focus`, at the turn
    /// the label keys target.
    pub fn open_trajectory(
        &mut self,
        id: TrajectoryId,
        at_focus: bool,
        viewport: Rect,
        token_text: &dyn TokenText,
    ) -> Vec<Command> {
        if self.screen() != Screen::Trajectory {
            self.screens.push(Screen::Trajectory);
        }
        let tag = self.tags.fresh();
        self.trajectory.start_loading(id, tag, at_focus);
        let preview = self
            .list
            .preview
            .as_ref()
            .filter(|preview| preview.trajectory.id == id)
            .cloned();
        let mut commands = Vec::new();
        if let Some(preview) = preview {
            let highlighter = self.highlighter.get_or_insert_with(Default::default);
            self.trajectory
                .receive(tag, &preview, highlighter, self.blind);
            self.refit_tokens(viewport, token_text);
        } else {
            commands.push(Command::LoadTrajectory { tag, id });
        }
        if let Some(query) = self.search() {
            commands.push(Command::FindText {
                tag,
                id,
                query: query.to_string(),
            });
        }
        commands
    }

    /// The full-text search the list is filtered by, if any.
    pub fn search(&self) -> Option<&str> {
        self.list
            .listing
            .filter
            .full_text
            .as_deref()
            .filter(|query| !query.trim().is_empty())
    }

    /// Shows a group on the group screen once the engine has loaded it.
    pub fn open_group(&mut self, key: GroupKey) -> Vec<Command> {
        if self.screen() != Screen::Group {
            self.screens.push(Screen::Group);
        }
        let tag = self.tags.fresh();
        self.group.start_loading(key.clone(), tag);
        vec![Command::LoadGroup { tag, key }]
    }

    /// Asks where the trajectory with an id prefix is, to open it.
    pub fn open_by_prefix(&mut self, prefix: &str) -> Command {
        let tag = self.tags.fresh();
        self.pending_open = Some(tag);
        self.locate(tag, prefix)
    }

    /// Asks where the trajectory with an id prefix is, to select its row in the list.
    pub fn goto_by_prefix(&mut self, prefix: &str) -> Command {
        let tag = self.tags.fresh();
        self.pending_goto = Some(tag);
        self.locate(tag, prefix)
    }

    fn locate(&self, tag: Tag, prefix: &str) -> Command {
        Command::Locate {
            tag,
            listing: self.list.tag,
            prefix: prefix.to_string(),
        }
    }

    /// The trajectory and step a label applies to: the open turn on the trajectory screen,
    /// the previewed trajectory's lowest-scored step in the list.
    pub fn annotation_target(&self) -> Option<(&Trajectory, usize)> {
        match self.screen() {
            Screen::Trajectory => {
                let open = self.trajectory.open.as_ref()?;
                Some((open.trajectory(), self.trajectory.current_step()?))
            }
            Screen::List => {
                let preview = self.list.preview.as_ref()?;
                let selected = self.list.selected()?;
                (preview.trajectory.id == selected.id).then_some(())?;
                let step = annotate::focus_step(&preview.trajectory, self.blind)?;
                Some((&preview.trajectory, step))
            }
            Screen::Group => None,
        }
    }
}

fn no_group() -> Outcome {
    Outcome::Notice(
        "this trajectory has no group to compare: no GRPO group (run, step, group) and no task"
            .into(),
    )
}
