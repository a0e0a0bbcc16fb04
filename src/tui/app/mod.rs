//! The application state, as plain composition of one state struct per view, and `update`:
//! messages in, engine commands out, no I/O.

mod actions;
mod engine_updates;
mod prompt_commands;

pub use prompt_commands::COMMANDS;

use super::action::{Action, Scope};
use super::annotate::{BadcaseQueue, UndoStack};
use super::group::GroupState;
use super::highlight::Highlighter;
use super::keymap::Keymap;
use super::launch_form::LaunchEvent;
use super::layout;
use super::prompt::{Prompt, PromptEvent};
use super::rollouts::RolloutsState;
use super::runs::RunsState;
use super::tags::Tags;
use super::theme::Theme;
use super::token_text::{self, TokenIds, TokenText};
use super::trajectory::TrajectoryState;
use crate::engine::{Command, EngineState, Listing, Overview, Update};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;

/// The four tabs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tab {
    /// Browse, open and label rollouts.
    #[default]
    Rollouts,
    /// Runs and their metrics.
    Runs,
    /// Error kinds and outcomes.
    Stats,
    /// Best-of-N selection preview.
    Curate,
}

impl Tab {
    /// Every tab, in order.
    pub const ALL: [Tab; 4] = [Tab::Rollouts, Tab::Runs, Tab::Stats, Tab::Curate];

    /// The tab's name.
    pub fn title(self) -> &'static str {
        match self {
            Self::Rollouts => "Rollouts",
            Self::Runs => "Runs",
            Self::Stats => "Stats",
            Self::Curate => "Curate",
        }
    }

    fn index(self) -> usize {
        Self::ALL.iter().position(|tab| *tab == self).unwrap_or(0)
    }
}

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

/// A message for the user in the status bar.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    /// The text.
    pub text: String,
    /// Whether it reports an error.
    pub error: bool,
}

/// The status bar's state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// What the engine is doing.
    pub engine: EngineState,
    /// Trajectories in the store, when known.
    pub stored: Option<usize>,
    /// The last message.
    pub notice: Option<Notice>,
}

/// The Stats and Curate tabs' state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InsightsState {
    /// The counts, once computed.
    pub overview: Option<Box<Overview>>,
    /// Labels changed since they were computed.
    pub stale: bool,
    /// A computation is in flight.
    pub loading: bool,
    /// The selected policy version (the "after" side of the comparison).
    pub scroll: usize,
    /// The pinned policy version (the "before" side), chosen with the pin key.
    pub pinned: Option<usize>,
    /// The Curate tab's form.
    pub form: super::curate_form::CurateForm,
}

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
        }
    }
}

/// The whole UI state.
pub struct App {
    /// The session's name.
    pub session: String,
    /// The tab shown.
    pub tab: Tab,
    /// The Rollouts tab's screens, the list at the bottom.
    pub screens: Vec<Screen>,
    /// The list.
    pub rollouts: RolloutsState,
    /// The trajectory screen.
    pub trajectory: TrajectoryState,
    /// The group screen.
    pub group: super::group::GroupState,
    /// The Runs tab.
    pub runs: RunsState,
    /// The Stats and Curate tabs.
    pub insights: InsightsState,
    /// The badcase queue.
    pub queue: BadcaseQueue,
    /// Label changes that `u` undoes.
    pub undo: UndoStack,
    /// The open prompt.
    pub prompt: Option<Prompt>,
    /// Whether the help overlay is open.
    pub help: bool,
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
    /// Set when the user quits.
    pub quit: bool,
    tags: Tags,
    highlighter: Option<Highlighter>,
    pending_open: Option<crate::engine::Tag>,
    pending_goto: Option<crate::engine::Tag>,
}

impl App {
    /// A new app; call `start` for the commands that fill it.
    pub fn new(config: AppConfig) -> Self {
        let mut app = Self {
            session: config.session,
            tab: Tab::Rollouts,
            screens: vec![Screen::List],
            rollouts: RolloutsState::default(),
            trajectory: TrajectoryState::default(),
            group: GroupState::default(),
            runs: RunsState::default(),
            insights: InsightsState::default(),
            queue: BadcaseQueue::default(),
            undo: UndoStack::default(),
            prompt: None,
            help: false,
            status: Status::default(),
            theme: config.theme,
            extra_themes: config.extra_themes,
            keymap: config.keymap,
            token_text: config.token_text,
            viewport: config.viewport,
            quit: false,
            tags: Tags::default(),
            highlighter: None,
            pending_open: None,
            pending_goto: None,
        };
        app.rollouts.height = layout::list_rows(app.viewport);
        app
    }

    /// The commands that fill a new app: the first page of the list, the runs.
    pub fn start(&mut self) -> Vec<Command> {
        vec![
            self.rollouts.relist(Listing::default(), &mut self.tags),
            Command::LoadRuns,
        ]
    }

    /// The screen on top of the Rollouts tab.
    pub fn screen(&self) -> Screen {
        self.screens.last().copied().unwrap_or(Screen::List)
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
            .filter(|command| match command {
                Command::LoadTrajectory { tag, .. } => {
                    *tag == self.rollouts.preview_tag || *tag == self.trajectory.tag
                }
                Command::Page { tag, window } => {
                    *tag == self.rollouts.tag && self.rollouts.requested.as_ref() == Some(window)
                }
                _ => true,
            })
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
        if self.help {
            self.help = false;
            return Vec::new();
        }
        if let Some(form) = &mut self.runs.form {
            return match form.key(key) {
                LaunchEvent::Editing => Vec::new(),
                LaunchEvent::Cancelled => {
                    self.runs.form = None;
                    Vec::new()
                }
                LaunchEvent::Launch(config) => self.launch(config),
            };
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

    /// Closes the launch form and asks the engine to start its run.
    fn launch(&mut self, config: Box<crate::run::RunConfig>) -> Vec<Command> {
        self.runs.form = None;
        self.runs.last_launch = Some((*config).clone());
        self.notify(format!(
            "launching a GRPO run on {} ({} steps, G = {})",
            config.tasks.train, config.grpo.steps, config.grpo.group
        ));
        vec![Command::LaunchRun(config)]
    }

    fn resize(&mut self, viewport: Rect) -> Vec<Command> {
        self.viewport = viewport;
        self.refit_tokens();
        self.rollouts
            .set_height(layout::list_rows(viewport), &mut self.tags)
    }

    /// Recomputes how many tokens fit per row of the token view.
    fn refit_tokens(&mut self) {
        let (_, body, _) = layout::shell(self.viewport);
        let width = usize::from(layout::trajectory(body).pane.width.saturating_sub(2));
        let ids = self
            .trajectory
            .open
            .as_ref()
            .and_then(|open| open.trajectory().token_trace.as_ref())
            .map(|trace| trace.token_ids.as_slice());
        if let (Some(cursor), Some(ids)) = (&mut self.trajectory.tokens, ids) {
            (cursor.cell, cursor.per_row) = token_text::grid(ids, self.token_text.as_ref(), width);
        }
    }

    /// Shows a message in the status bar.
    pub fn notify(&mut self, text: impl Into<String>) {
        self.status.notice = Some(Notice {
            text: text.into(),
            error: false,
        });
    }

    /// Shows an error in the status bar.
    pub fn warn(&mut self, text: impl Into<String>) {
        self.status.notice = Some(Notice {
            text: text.into(),
            error: true,
        });
    }

    fn switch_tab(&mut self, tab: Tab) -> Vec<Command> {
        self.tab = tab;
        match tab {
            Tab::Runs if !self.runs.loaded => vec![Command::LoadRuns],
            Tab::Stats | Tab::Curate
                if !self.insights.loading
                    && (self.insights.overview.is_none() || self.insights.stale) =>
            {
                self.insights.loading = true;
                vec![Command::LoadOverview {
                    filter: crate::store::Filter::default(),
                }]
            }
            _ => Vec::new(),
        }
    }

    fn cycle_tab(&mut self, forward: bool) -> Vec<Command> {
        let count = Tab::ALL.len();
        let index = self.tab.index();
        let next = if forward {
            (index + 1) % count
        } else {
            (index + count - 1) % count
        };
        self.switch_tab(Tab::ALL[next])
    }
}
