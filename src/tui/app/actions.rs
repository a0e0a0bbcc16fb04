//! Routing actions: global ones here, the rest to the tab on screen.

use super::{App, Tab};
use crate::engine::Command;
use crate::tui::action::Action;
use crate::tui::prompt::{Prompt, PromptKind};
use crossterm::event::{KeyCode, KeyEvent};

impl App {
    /// Answers the quit question: `b` quits and the runs launched here go on in the
    /// background, `s` asks them to stop after their current step (with a checkpoint) and
    /// quits, any other key stays.
    pub(super) fn answer_quit(&mut self, key: &KeyEvent) -> Vec<Command> {
        self.quit_prompt = false;
        match key.code {
            KeyCode::Char('b') => {
                self.quit = true;
                Vec::new()
            }
            KeyCode::Char('s') => {
                self.quit = true;
                let training = self.tabs.runs.training_here();
                training
                    .into_iter()
                    .map(|run| Command::StopRun(run.id.clone()))
                    .collect()
            }
            _ => Vec::new(),
        }
    }

    /// Handles an action.
    pub(super) fn on_action(&mut self, action: Action) -> Vec<Command> {
        match action {
            Action::Quit => {
                if self.tabs.runs.training_here().is_empty() {
                    self.quit = true;
                } else {
                    self.quit_prompt = true;
                }
                Vec::new()
            }
            Action::Help => {
                self.open_help();
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
                Tab::Runs => {
                    let outcome = self.tabs.runs.on_action(action, &mut self.status);
                    self.apply(outcome)
                }
                Tab::Stats => {
                    let versions = self
                        .overview
                        .counts
                        .as_ref()
                        .map_or(0, |counts| counts.analysis.versions.len());
                    self.tabs
                        .stats
                        .on_action(action, versions, &mut self.status);
                    Vec::new()
                }
                Tab::Curate => {
                    let outcome = self.tabs.curate.on_action(action, &mut self.status);
                    self.apply(outcome)
                }
            },
        }
    }

    fn refresh(&mut self) -> Vec<Command> {
        match self.tab {
            Tab::Rollouts => {
                let mut commands = vec![self.tabs.rollouts.relist_current()];
                if self.tabs.rollouts.screen() == crate::tui::Screen::Trajectory
                    && let Some(id) = self.tabs.rollouts.trajectory.id()
                {
                    commands.extend(self.tabs.rollouts.reload_trajectory(id));
                }
                commands
            }
            Tab::Runs => self.tabs.runs.refresh(),
            Tab::Stats | Tab::Curate => self.overview.refresh(),
        }
    }

    /// Labels and the badcase queue first, then the screen shown.
    fn on_rollouts_action(&mut self, action: Action) -> Vec<Command> {
        let hidden = matches!(action, Action::Group | Action::Tokens | Action::Accept);
        if self.tabs.rollouts.blind && hidden {
            self.notify(super::BLIND_ONLY);
            return Vec::new();
        }
        if let Some(commands) = self.on_annotation_action(action) {
            return commands;
        }
        if let Some(commands) = self.on_fork_action(action) {
            return commands;
        }
        let outcome = self.tabs.rollouts.on_action(
            action,
            self.viewport,
            self.token_text.as_ref(),
            &mut self.status,
        );
        self.apply(outcome)
    }
}
