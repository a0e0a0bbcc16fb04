//! Routing actions: global ones here, the rest to the view on screen.

use super::{App, Screen, Tab};
use crate::engine::{Command, GroupKey, Listing};
use crate::store::Filter;
use crate::trajectory::TrajectoryId;
use crate::tui::action::Action;
use crate::tui::annotate::{self, Target, UndoEntry};
use crate::tui::curate_form::FormOutcome;
use crate::tui::layout;
use crate::tui::outcome::Outcome;
use crate::tui::prompt::{Prompt, PromptKind};

impl App {
    /// Handles an action.
    pub(super) fn on_action(&mut self, action: Action) -> Vec<Command> {
        match action {
            Action::Quit => {
                self.quit = true;
                Vec::new()
            }
            Action::Help => {
                self.help = true;
                Vec::new()
            }
            Action::Command => {
                self.prompt = Some(Prompt::new(PromptKind::Command));
                Vec::new()
            }
            Action::NextTab => self.cycle_tab(true),
            Action::PrevTab => self.cycle_tab(false),
            Action::TabRollouts => self.switch_tab(Tab::Rollouts),
            Action::TabRuns => self.switch_tab(Tab::Runs),
            Action::TabStats => self.switch_tab(Tab::Stats),
            Action::TabCurate => self.switch_tab(Tab::Curate),
            Action::Refresh => self.refresh(),
            _ => match self.tab {
                Tab::Rollouts => self.on_rollouts_action(action),
                Tab::Runs => self.on_runs_action(action),
                Tab::Stats | Tab::Curate => self.on_insights_action(action),
            },
        }
    }

    fn refresh(&mut self) -> Vec<Command> {
        match self.tab {
            Tab::Rollouts => vec![
                self.rollouts
                    .relist(self.rollouts.listing.clone(), &mut self.tags),
            ],
            Tab::Runs => {
                self.runs.metrics_run = None;
                vec![Command::LoadRuns]
            }
            Tab::Stats | Tab::Curate => {
                self.insights.stale = true;
                self.insights.loading = false;
                self.switch_tab(self.tab)
            }
        }
    }

    /// Applies a view's outcome.
    pub(super) fn apply(&mut self, outcome: Outcome) -> Vec<Command> {
        match outcome {
            Outcome::Ignored => Vec::new(),
            Outcome::Commands(commands) => commands,
            Outcome::Open(id) => self.open_trajectory(id),
            Outcome::OpenGroup(key) => self.open_group(key),
            Outcome::Notice(text) => {
                self.notify(text);
                Vec::new()
            }
        }
    }

    fn on_rollouts_action(&mut self, action: Action) -> Vec<Command> {
        if action == Action::Back {
            if self.screen() == Screen::Trajectory && self.trajectory.tokens.is_some() {
                self.trajectory.tokens = None;
            } else if self.screens.len() > 1 {
                self.screens.pop();
            }
            return Vec::new();
        }
        if let Some(commands) = self.on_annotation_action(action) {
            return commands;
        }
        match self.screen() {
            Screen::List => self.on_list_action(action),
            Screen::Trajectory => {
                if action == Action::Group {
                    let key = self.trajectory.open.as_ref().and_then(|open| {
                        let trajectory = open.trajectory();
                        group_key(
                            trajectory.run.as_deref(),
                            trajectory.policy_version,
                            trajectory.group,
                        )
                    });
                    return self.apply(key.map_or_else(no_group, Outcome::OpenGroup));
                }
                let page = layout::pane_rows(self.viewport);
                let outcome = self.trajectory.on_action(action, page);
                if action == Action::Tokens {
                    self.refit_tokens();
                }
                self.apply(outcome)
            }
            Screen::Group => {
                let (_, body, _) = layout::shell(self.viewport);
                let page = usize::from(layout::group(body).1.height.saturating_sub(2));
                let outcome = self.group.on_action(action, page);
                self.apply(outcome)
            }
        }
    }

    fn on_list_action(&mut self, action: Action) -> Vec<Command> {
        let relist = |app: &mut Self, listing: Listing| {
            app.notify(format!(
                "filter {} · sort {}{}",
                listing.filter.describe(),
                listing.sort.as_str(),
                if listing.descending { " ↓" } else { "" }
            ));
            vec![app.rollouts.relist(listing, &mut app.tags)]
        };
        match action {
            Action::Search => {
                let text = self
                    .rollouts
                    .listing
                    .filter
                    .text
                    .clone()
                    .unwrap_or_default();
                self.prompt = Some(Prompt::with_input(PromptKind::Search, &text));
                Vec::new()
            }
            Action::Open => match self.rollouts.selected() {
                Some(summary) => self.open_trajectory(summary.id),
                None => Vec::new(),
            },
            Action::Group => {
                let key = self
                    .rollouts
                    .selected()
                    .and_then(|summary| group_key(Some(&summary.run), summary.step, summary.group));
                self.apply(key.map_or_else(no_group, Outcome::OpenGroup))
            }
            Action::Sort => {
                let listing = self.rollouts.next_sort();
                relist(self, listing)
            }
            Action::Reverse => {
                let mut listing = self.rollouts.listing.clone();
                listing.descending = !listing.descending;
                relist(self, listing)
            }
            Action::Outcome => {
                let listing = self.rollouts.next_outcome();
                relist(self, listing)
            }
            Action::Unlabelled => {
                let mut listing = self.rollouts.listing.clone();
                listing.filter.unlabelled_failures = !listing.filter.unlabelled_failures;
                relist(self, listing)
            }
            _ => {
                let outcome = self.rollouts.on_move(action, &mut self.tags);
                self.apply(outcome)
            }
        }
    }

    /// Label keys, notes, undo, accept, and the badcase queue; `None` when not one of them.
    fn on_annotation_action(&mut self, action: Action) -> Option<Vec<Command>> {
        match action {
            Action::Undo => Some(match self.undo.undo() {
                Some(command) => {
                    self.notify("undone");
                    vec![command]
                }
                None => {
                    self.notify("nothing to undo");
                    Vec::new()
                }
            }),
            Action::NextBadcase | Action::PrevBadcase => {
                Some(self.walk_queue(action == Action::NextBadcase))
            }
            Action::Note => {
                if self.annotation_target().is_some() {
                    self.prompt = Some(Prompt::new(PromptKind::Note));
                } else {
                    self.notify("open a trajectory to write a note");
                }
                Some(Vec::new())
            }
            Action::Accept => Some(self.with_target(annotate::accept)),
            _ => {
                let kind = action.label_kind()?;
                Some(self.with_target(|target| Ok(vec![annotate::toggle(target, kind)])))
            }
        }
    }

    /// Runs a label change on the current target, remembering the labels for undo.
    pub(super) fn with_target(
        &mut self,
        change: impl FnOnce(&Target<'_>) -> Result<Vec<Command>, String>,
    ) -> Vec<Command> {
        let Some((trajectory, step)) = self.annotation_target() else {
            self.notify("nothing to label here: select or open a trajectory");
            return Vec::new();
        };
        let target = Target::new(trajectory, step);
        let before = UndoEntry::of(&target);
        match change(&target) {
            Ok(commands) => {
                self.undo.push(before);
                self.notify(format!("saving t{} …", step + 1));
                commands
            }
            Err(message) => {
                self.notify(message);
                Vec::new()
            }
        }
    }

    /// The trajectory and step a label applies to: the open turn on the trajectory screen,
    /// the previewed trajectory's lowest-scored step in the list.
    pub(super) fn annotation_target(&self) -> Option<(&crate::trajectory::Trajectory, usize)> {
        match self.screen() {
            Screen::Trajectory => {
                let open = self.trajectory.open.as_ref()?;
                Some((open.trajectory(), self.trajectory.current_step()?))
            }
            Screen::List => {
                let preview = self.rollouts.preview.as_ref()?;
                let selected = self.rollouts.selected()?;
                (preview.trajectory.id == selected.id).then_some(())?;
                let step = annotate::focus_step(&preview.trajectory)?;
                Some((&preview.trajectory, step))
            }
            Screen::Group => None,
        }
    }

    fn walk_queue(&mut self, forward: bool) -> Vec<Command> {
        if self.queue.tag != self.rollouts.tag {
            self.notify("the badcase queue is still being counted");
            return Vec::new();
        }
        let cursor = self.rollouts.cursor;
        let found = if forward {
            self.queue.next(cursor)
        } else {
            self.queue.previous(cursor)
        };
        let Some((row, id)) = found else {
            self.notify(if forward {
                "no unlabelled failure after this one"
            } else {
                "no unlabelled failure before this one"
            });
            return Vec::new();
        };
        let mut commands = self.rollouts.select(row, &mut self.tags);
        commands.extend(self.open_trajectory(id));
        if let Some(progress) = self.queue.progress() {
            self.notify(progress);
        }
        commands
    }

    /// Shows a trajectory on the trajectory screen: at once when the preview holds it,
    /// else once the engine has loaded it.
    pub(super) fn open_trajectory(&mut self, id: TrajectoryId) -> Vec<Command> {
        self.tab = Tab::Rollouts;
        if self.screen() != Screen::Trajectory {
            self.screens.push(Screen::Trajectory);
        }
        let tag = self.tags.fresh();
        self.trajectory.start_loading(id, tag);
        let preview = self
            .rollouts
            .preview
            .as_ref()
            .filter(|preview| preview.trajectory.id == id)
            .cloned();
        if let Some(preview) = preview {
            let highlighter = self.highlighter.get_or_insert_with(Default::default);
            self.trajectory.receive(tag, &preview, highlighter);
            self.refit_tokens();
            return Vec::new();
        }
        vec![Command::LoadTrajectory { tag, id }]
    }

    fn open_group(&mut self, key: GroupKey) -> Vec<Command> {
        if self.screen() != Screen::Group {
            self.screens.push(Screen::Group);
        }
        let tag = self.tags.fresh();
        self.group.start_loading(key.clone(), tag);
        vec![Command::LoadGroup { tag, key }]
    }

    fn on_runs_action(&mut self, action: Action) -> Vec<Command> {
        if let Some(form) = &mut self.runs.form {
            match action {
                Action::Down => form.move_focus(1),
                Action::Up => form.move_focus(-1),
                Action::Back => self.runs.form = None,
                _ => {}
            }
            return Vec::new();
        }
        match action {
            Action::NewRun => {
                if let Err(message) = self.runs.open_form() {
                    self.warn(message);
                }
                return Vec::new();
            }
            Action::PauseRun | Action::ResumeRun | Action::StopRun => {
                return match self.runs.steer(action) {
                    Ok((command, notice)) => {
                        self.notify(notice);
                        vec![command]
                    }
                    Err(message) => {
                        self.warn(message);
                        Vec::new()
                    }
                };
            }
            _ => {}
        }
        if action == Action::Open {
            let Some(run) = self.runs.selected_run().map(|run| run.id.clone()) else {
                return Vec::new();
            };
            self.tab = Tab::Rollouts;
            self.screens.truncate(1);
            let listing = Listing {
                filter: Filter {
                    run: Some(run),
                    ..Filter::default()
                },
                sort: crate::store::SortKey::Step,
                descending: true,
            };
            return vec![self.rollouts.relist(listing, &mut self.tags)];
        }
        let outcome = self.runs.on_action(action);
        self.apply(outcome)
    }

    fn on_insights_action(&mut self, action: Action) -> Vec<Command> {
        if self.tab == Tab::Curate {
            return self.on_curate_action(action);
        }
        let rows = self
            .insights
            .overview
            .as_ref()
            .map_or(0, |overview| overview.analysis.versions.len());
        let last = rows.saturating_sub(1);
        let insights = &mut self.insights;
        match action {
            Action::Down => insights.scroll = (insights.scroll + 1).min(last),
            Action::Up => insights.scroll = insights.scroll.saturating_sub(1),
            Action::PageDown => insights.scroll = (insights.scroll + 10).min(last),
            Action::PageUp => insights.scroll = insights.scroll.saturating_sub(10),
            Action::Top => insights.scroll = 0,
            Action::Bottom => insights.scroll = last,
            Action::Pin if rows > 0 => {
                let pinned = (insights.pinned != Some(insights.scroll)).then_some(insights.scroll);
                insights.pinned = pinned;
                self.notify(match pinned {
                    Some(_) => "pinned as \"before\"; move to the \"after\" version",
                    None => "unpinned",
                });
            }
            _ => {}
        }
        Vec::new()
    }

    fn on_curate_action(&mut self, action: Action) -> Vec<Command> {
        let form = &mut self.insights.form;
        let result = match form.on_action(action) {
            FormOutcome::Nothing => return Vec::new(),
            FormOutcome::Changed => form.preview_command(),
            FormOutcome::EditSource => {
                self.prompt = Some(Prompt::with_input(PromptKind::Source, &form.source));
                return Vec::new();
            }
            FormOutcome::EditPath => {
                self.prompt = Some(Prompt::with_input(PromptKind::ExportPath, &form.path));
                return Vec::new();
            }
            FormOutcome::Export => form.export_command(),
        };
        match result {
            Ok(command) => vec![command],
            Err(message) => {
                self.warn(message);
                Vec::new()
            }
        }
    }
}

fn group_key(run: Option<&str>, step: Option<u64>, group: Option<u64>) -> Option<GroupKey> {
    Some(GroupKey {
        run: run.filter(|run| !run.is_empty())?.to_string(),
        step: step?,
        group: group?,
    })
}

fn no_group() -> Outcome {
    Outcome::Notice("this trajectory is not part of a GRPO group (no run, step or group)".into())
}
