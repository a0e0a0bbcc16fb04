//! The application: one state struct per tab and the pieces the tabs share, and `update`:
//! messages in, engine commands out, no I/O. Each tab's state changes in its own module
//! under `state`; the app routes messages to them.

mod actions;
mod annotation;
pub mod disagree;
mod engine_updates;
pub mod fork;
mod prompt_commands;

pub use super::state::Tab;
pub use super::state::rollouts::Screen;
pub use super::state::status::{Notice, Status};
pub use prompt_commands::COMMANDS;

use super::action::{Action, Scope};
use super::annotate::{BadcaseQueue, PendingNote, UndoStack};
use super::content::TaskLines;
use super::help_page::{HelpPage, view_keys};
use super::keymap::Keymap;
use super::layout;
use super::memory::Remembered;
use super::outcome::Outcome;
use super::prompt::{Prompt, PromptEvent};
use super::state::Tabs;
use super::state::overview::OverviewState;
use super::theme::Theme;
use super::token_text::{TokenIds, TokenText};
use crate::curate::labels::LabelKinds;
use crate::engine::{Command, Listing, Update};
use crate::store::{Filter, SortKey};
use crate::trajectory::TrajectoryId;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;

/// A message to the app.
#[derive(Clone, Debug, PartialEq)]
pub enum Msg {
    /// A key was pressed.
    Key(KeyEvent),
    /// The mouse wheel turned: negative up, positive down (in notches).
    Scroll(i8),
    /// The terminal was resized to columns × rows.
    Resize(u16, u16),
    /// The engine reported something.
    Engine(Update),
    /// An action, as if its key were pressed.
    Action(Action),
}

/// What blind labelling says when asked for a screen it hides.
pub const BLIND_ONLY: &str = "blind labelling: runs, groups, tokens, stats and suggestions stay hidden; reopen without --blind to see them";

/// What the app starts with.
pub struct AppConfig {
    /// The session's name.
    pub session: String,
    /// The theme.
    pub theme: Theme,
    /// Extra themes `:theme` may switch to by name (besides the built-in ones).
    pub extra_themes: Vec<Theme>,
    /// The keymap.
    pub keymap: Keymap,
    /// How tokens are spelled in the token view.
    pub token_text: Box<dyn TokenText>,
    /// The terminal's size.
    pub viewport: Rect,
    /// Blind labelling: only failures, in id order, without runs, policies, process scores
    /// or suggested labels; the Rollouts tab only.
    pub blind: bool,
    /// Who labels: `1`–`4`, `n` and `u` act on this author's labels only.
    pub annotator: Option<String>,
    /// The view this annotator left the session in, to start from (ignored when blind).
    pub remembered: Option<Remembered>,
    /// The error kinds to label with: the four and the session's own (keys `5`–`9`).
    pub label_kinds: LabelKinds,
    /// Lines of each prompt message shown before the rest folds.
    pub task_lines: TaskLines,
}

impl AppConfig {
    /// Defaults: the dark theme, the built-in keys, tokens shown by id.
    pub fn new(session: &str, viewport: Rect) -> Self {
        Self {
            session: session.to_string(),
            theme: Theme::default(),
            extra_themes: Vec::new(),
            keymap: Keymap::default(),
            token_text: Box::new(TokenIds),
            viewport,
            blind: false,
            annotator: None,
            remembered: None,
            label_kinds: LabelKinds::default(),
            task_lines: TaskLines::default(),
        }
    }
}

/// The whole UI state.
pub struct App {
    /// The session's name.
    pub session: String,
    /// Who labels (`AppConfig::annotator`).
    pub annotator: Option<String>,
    /// The error kinds to label with (`AppConfig::label_kinds`).
    pub label_kinds: LabelKinds,
    /// The tab shown.
    pub tab: Tab,
    /// Each tab's state.
    pub tabs: Tabs,
    /// The counts the Stats and Curate tabs show.
    pub overview: OverviewState,
    /// The badcase queue.
    pub queue: BadcaseQueue,
    /// Label changes that `u` undoes.
    pub undo: UndoStack,
    /// A note written on an unlabelled turn, waiting for its label.
    pub pending_note: Option<PendingNote>,
    /// Where `b` is among the children of a trajectory's branches.
    pub branch_walk: Option<fork::BranchWalk>,
    /// The `:disagree` queue, while it is open.
    pub disagree: Option<disagree::DisagreeQueue>,
    /// The open prompt.
    pub prompt: Option<Prompt>,
    /// The help overlay, while it is open.
    pub help: Option<HelpPage>,
    /// The status bar.
    pub status: Status,
    /// The current theme.
    pub theme: Theme,
    /// Themes `:theme` may switch to besides the built-in ones.
    pub extra_themes: Vec<Theme>,
    /// The keymap.
    pub keymap: Keymap,
    /// How tokens are spelled.
    pub token_text: Box<dyn TokenText>,
    /// The terminal's size.
    pub viewport: Rect,
    /// The view to start from (`AppConfig::remembered`), until `start` takes it.
    pub remembered: Option<Remembered>,
    /// Set when the user quits.
    pub quit: bool,
    /// Whether the quit question is open: runs launched here still train.
    pub quit_prompt: bool,
}

impl App {
    /// A new app; call `start` for the commands that fill it.
    pub fn new(config: AppConfig) -> Self {
        let mut app = Self {
            session: config.session,
            annotator: config.annotator,
            label_kinds: config.label_kinds,
            tab: Tab::Rollouts,
            tabs: Tabs::default(),
            overview: OverviewState::default(),
            queue: BadcaseQueue::default(),
            undo: UndoStack::default(),
            pending_note: None,
            branch_walk: None,
            disagree: None,
            prompt: None,
            help: None,
            status: Status::default(),
            theme: config.theme,
            extra_themes: config.extra_themes,
            keymap: config.keymap,
            token_text: config.token_text,
            viewport: config.viewport,
            remembered: config.remembered.filter(|_| !config.blind),
            quit: false,
            quit_prompt: false,
        };
        app.tabs.rollouts.list.height = layout::list_rows(app.viewport);
        app.tabs.rollouts.blind = config.blind;
        app.tabs.rollouts.trajectory.task_lines = config.task_lines;
        app.tabs.curate.form.label_kinds = app.label_kinds.clone();
        app
    }

    /// The commands that fill a new app: the first page of the list, the runs; from the
    /// view the annotator left the session in when there is one (tab, filter, sort, cursor,
    /// run).
    pub fn start(&mut self) -> Vec<Command> {
        if self.tabs.rollouts.blind {
            let listing = Listing {
                filter: Filter {
                    outcome: Some(crate::store::Outcome::Fail),
                    ..Filter::default()
                },
                sort: SortKey::Id,
                descending: false,
            };
            return vec![self.tabs.rollouts.relist(listing), Command::LoadRuns];
        }
        let Some(remembered) = self.remembered.take() else {
            return vec![
                self.tabs.rollouts.relist(Listing::default()),
                Command::LoadRuns,
            ];
        };
        self.tabs.runs.follow = remembered.run.clone();
        self.tabs.runs.charts.chosen = remembered.charts.clone();
        if !remembered.filter.is_empty() {
            self.notify(format!(
                "reopened as you left it: {} (`:filter all` shows every rollout)",
                remembered.filter.describe()
            ));
        }
        let mut commands = vec![
            self.tabs.rollouts.relist_at(
                remembered.listing(),
                remembered.cursor,
                remembered.selected,
            ),
            Command::LoadRuns,
        ];
        let shown = self.switch_tab(remembered.tab);
        commands.extend(
            shown
                .into_iter()
                .filter(|command| !matches!(command, Command::LoadRuns)),
        );
        commands
    }

    /// What the app shows now, for the next start (`tui::memory`).
    pub fn remembered(&self) -> Remembered {
        let list = &self.tabs.rollouts.list;
        Remembered {
            tab: self.tab,
            filter: list.listing.filter.clone(),
            sort: list.listing.sort,
            descending: list.listing.descending,
            cursor: list.cursor,
            selected: list.selected().map(|summary| summary.id),
            run: self
                .tabs
                .runs
                .selected_run()
                .map(|run| run.id.clone())
                .or_else(|| self.tabs.runs.follow.clone()),
            charts: self.tabs.runs.charts.chosen.clone(),
        }
    }

    /// The screen on top of the Rollouts tab.
    pub fn screen(&self) -> Screen {
        self.tabs.rollouts.screen()
    }

    /// Handles one message; returns what the engine must do. Never does I/O.
    pub fn update(&mut self, msg: Msg) -> Vec<Command> {
        match msg {
            Msg::Key(key) => self.on_key(&key),
            Msg::Scroll(notches) => {
                let action = if notches < 0 {
                    Action::Up
                } else {
                    Action::Down
                };
                (0..notches.unsigned_abs().saturating_mul(3))
                    .flat_map(|_| self.on_action(action))
                    .collect()
            }
            Msg::Resize(width, height) => self.resize(Rect::new(0, 0, width, height)),
            Msg::Engine(update) => self.on_engine(update),
            Msg::Action(action) => self.on_action(action),
        }
    }

    /// Drops commands made stale by later ones in the same batch: loads of trajectories no
    /// longer awaited (the cursor moved on) and pages no longer wanted.
    pub fn prune(&self, commands: Vec<Command>) -> Vec<Command> {
        commands
            .into_iter()
            .filter(|command| self.tabs.rollouts.still_wanted(command))
            .collect()
    }

    fn on_key(&mut self, key: &KeyEvent) -> Vec<Command> {
        if key.kind == crossterm::event::KeyEventKind::Release {
            return Vec::new();
        }
        if key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL) {
            self.quit = true;
            return Vec::new();
        }
        if self.quit_prompt {
            return self.answer_quit(key);
        }
        if let Some(prompt) = &mut self.prompt {
            return match prompt.key(key) {
                PromptEvent::Editing => Vec::new(),
                PromptEvent::Cancelled => {
                    self.prompt = None;
                    Vec::new()
                }
                PromptEvent::Submitted(kind, input) => {
                    self.prompt = None;
                    self.submit(kind, &input)
                }
            };
        }
        if let Some(help) = &mut self.help {
            let (width, height) = (self.viewport.width, self.viewport.height);
            let page = HelpPage::page(height) as isize;
            let delta = match self.keymap.action_in(key, Scope::Everywhere) {
                Some(Action::Down) => 1,
                Some(Action::Up) => -1,
                Some(Action::PageDown) => page,
                Some(Action::PageUp) => -page,
                Some(Action::Top) => isize::MIN,
                Some(Action::Bottom) => isize::MAX,
                _ => {
                    self.help = None;
                    return Vec::new();
                }
            };
            help.scroll_by(delta, width, height);
            return Vec::new();
        }
        if let Some(commands) = self.tabs.runs.on_form_key(key, &mut self.status) {
            return commands;
        }
        if self.tabs.runs.charts.on_picker_key(key).is_some() {
            return Vec::new();
        }
        let scope = match self.tab {
            Tab::Runs => Scope::Runs,
            _ => Scope::Everywhere,
        };
        match self.keymap.action_in(key, scope) {
            Some(action) => self.on_action(action),
            None => Vec::new(),
        }
    }

    fn resize(&mut self, viewport: Rect) -> Vec<Command> {
        self.viewport = viewport;
        self.tabs
            .rollouts
            .resize(viewport, self.token_text.as_ref())
    }

    /// Opens the help overlay on the keys of the view on screen.
    pub(super) fn open_help(&mut self) {
        let tokens = self.tabs.rollouts.trajectory.tokens.is_some();
        let keys = view_keys(self.tab, self.screen(), tokens);
        self.help = Some(HelpPage::new(
            keys,
            &self.keymap,
            &self.label_kinds,
            &COMMANDS,
        ));
    }

    /// Shows a message in the status bar.
    pub fn notify(&mut self, text: impl Into<String>) {
        self.status.notify(text);
    }

    /// Shows an error in the status bar.
    pub fn warn(&mut self, text: impl Into<String>) {
        self.status.warn(text);
    }

    /// Applies a tab's outcome.
    fn apply(&mut self, outcome: Outcome) -> Vec<Command> {
        match outcome {
            Outcome::Ignored => Vec::new(),
            Outcome::Commands(commands) => commands,
            Outcome::Open(id) => self.open_trajectory(id, false),
            Outcome::OpenGroup(key) => self.tabs.rollouts.open_group(key),
            Outcome::List(listing) => {
                self.tab = Tab::Rollouts;
                vec![self.tabs.rollouts.show(listing)]
            }
            Outcome::Prompt(prompt) => {
                self.prompt = Some(prompt);
                Vec::new()
            }
            Outcome::Notice(text) => {
                self.notify(text);
                Vec::new()
            }
        }
    }

    /// Shows a trajectory on the Rollouts tab's trajectory screen, at its first turn or,
    /// `at_focus`, at the turn the label keys target.
    fn open_trajectory(&mut self, id: TrajectoryId, at_focus: bool) -> Vec<Command> {
        self.tab = Tab::Rollouts;
        self.tabs
            .rollouts
            .open_trajectory(id, at_focus, self.viewport, self.token_text.as_ref())
    }

    /// Opens a trajectory at step `step` (0-based).
    fn open_trajectory_at(&mut self, id: TrajectoryId, step: usize) -> Vec<Command> {
        self.tabs.rollouts.trajectory.at_step = Some(step);
        self.open_trajectory(id, false)
    }

    /// Shows a tab; the last message was about the tab left, so it goes.
    fn switch_tab(&mut self, tab: Tab) -> Vec<Command> {
        if self.tabs.rollouts.blind && tab != Tab::Rollouts {
            self.notify(BLIND_ONLY);
            return Vec::new();
        }
        if tab != self.tab {
            self.status.notice = None;
        }
        self.tab = tab;
        match tab {
            Tab::Runs if !self.tabs.runs.loaded => vec![Command::LoadRuns],
            Tab::Stats | Tab::Curate => self.overview.request(),
            _ => Vec::new(),
        }
    }

    fn cycle_tab(&mut self, forward: bool) -> Vec<Command> {
        self.switch_tab(self.tab.cycled(forward))
    }
}
