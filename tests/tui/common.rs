//! Shared fixtures: synthetic rollouts, apps fed by hand or by a real engine, rendering.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use rollscope::engine::{
    Command, Engine, EngineConfig, EngineState, LoadedTrajectory, Tag, Update, Window, demo,
};
use rollscope::store::{Store, Summary};
use rollscope::synthetic::{self, SyntheticSpec};
use rollscope::trajectory::Trajectory;
use rollscope::tui::{Action, App, AppConfig, Msg, view};
use std::sync::Arc;
use std::sync::mpsc::Receiver;
use std::time::Duration;

/// The synthetic layout the tests use: 8 steps of 8 groups of 8 samples.
pub fn spec() -> SyntheticSpec {
    demo::spec(512, 64)
}

/// Synthetic trajectory `index`.
pub fn trajectory(index: u64) -> Trajectory {
    synthetic::trajectory(index, &spec())
}

/// Summaries of the first `count` synthetic trajectories.
pub fn summaries(count: u64) -> Vec<Summary> {
    (0..count)
        .map(|index| Summary::of(&trajectory(index), index))
        .collect()
}

/// A key press.
pub fn key(code: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

/// A character key press.
pub fn char_key(c: char) -> Msg {
    key(KeyCode::Char(c))
}

/// Types text into whatever has the keys.
pub fn type_text(app: &mut App, text: &str) -> Vec<Command> {
    text.chars().flat_map(|c| app.update(char_key(c))).collect()
}

/// An app of the given size.
pub fn app(width: u16, height: u16) -> App {
    App::new(AppConfig::new("test", Rect::new(0, 0, width, height)))
}

/// The tag of the first `List` command.
pub fn list_tag(commands: &[Command]) -> Tag {
    commands
        .iter()
        .find_map(|command| match command {
            Command::List { tag, .. } => Some(*tag),
            _ => None,
        })
        .expect("a List command")
}

/// An app whose list holds `total` synthetic rows, rows `0..loaded` sent, and the preview of
/// the first row loaded.
pub fn listed_app(total: u64, loaded: u64) -> App {
    let mut app = app(120, 40);
    let tag = list_tag(&app.start());
    let commands = app.update(Msg::Engine(Update::Window(Window {
        tag,
        start: 0,
        rows: summaries(loaded),
        matching: Some(total as usize),
        stored: Some(total as usize),
    })));
    answer_preview(&mut app, &commands);
    app
}

/// Answers the `LoadTrajectory` commands among `commands` from the synthetic set.
pub fn answer_preview(app: &mut App, commands: &[Command]) -> Vec<Command> {
    let mut more = Vec::new();
    for command in commands {
        if let Command::LoadTrajectory { tag, id } = command {
            let index = (0..4096)
                .find(|&index| trajectory(index).id == *id)
                .expect("a synthetic id");
            let loaded = LoadedTrajectory {
                trajectory: trajectory(index),
                task: Some(synthetic::task(index, &spec())),
                spellings: None,
                parent: None,
                tree: Vec::new(),
            };
            more.extend(app.update(Msg::Engine(Update::Trajectory {
                tag: *tag,
                loaded: Box::new(loaded),
            })));
        }
    }
    more
}

/// Applies actions in order, collecting the commands.
pub fn act(app: &mut App, actions: &[Action]) -> Vec<Command> {
    actions
        .iter()
        .flat_map(|action| app.update(Msg::Action(*action)))
        .collect()
}

/// Draws the app on a test terminal of its viewport's size; returns the screen as text.
pub fn render(app: &App) -> String {
    let size = app.viewport;
    let mut terminal = Terminal::new(TestBackend::new(size.width, size.height)).expect("terminal");
    terminal.draw(|frame| view::draw(frame, app)).expect("draw");
    terminal.backend().to_string()
}

/// A store in a temporary folder filled with the demo set.
pub fn demo_store(count: u64) -> (tempfile::TempDir, Arc<Store>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(&dir.path().join("store")).expect("store");
    demo::fill(&store, &demo::spec(count, 64), |_| {}).expect("demo data");
    (dir, Arc::new(store))
}

/// An app wired to a real engine over a demo store.
pub struct Live {
    /// The app.
    pub app: App,
    /// The engine.
    pub engine: Engine,
    /// Its updates.
    pub updates: Receiver<Update>,
    /// Keeps the store's folder alive.
    pub _dir: tempfile::TempDir,
}

impl Live {
    /// A live app of the given size over `count` demo trajectories, started and settled.
    pub fn new(count: u64, width: u16, height: u16) -> Self {
        let (dir, store) = demo_store(count);
        Self::over(dir, store, width, height)
    }

    /// A live app of the given size over a store, started and settled.
    pub fn over(dir: tempfile::TempDir, store: Arc<Store>, width: u16, height: u16) -> Self {
        let (engine, updates) = Engine::spawn(store, EngineConfig::default()).expect("engine");
        let mut live = Self {
            app: app(width, height),
            engine,
            updates,
            _dir: dir,
        };
        let commands = live.app.start();
        live.send(commands);
        live.settle(|app| {
            app.tabs.rollouts.list.matching.is_some() && app.tabs.rollouts.list.preview.is_some()
        });
        live
    }

    /// Sends commands to the engine (pruned as the real loop does).
    pub fn send(&mut self, commands: Vec<Command>) {
        for command in self.app.prune(commands) {
            self.engine.send(command);
        }
    }

    /// Feeds a message to the app, sends its commands.
    pub fn press(&mut self, message: Msg) {
        let commands = self.app.update(message);
        self.send(commands);
    }

    /// Applies actions, sends their commands.
    pub fn act(&mut self, actions: &[Action]) {
        for action in actions {
            let commands = self.app.update(Msg::Action(*action));
            self.send(commands);
        }
    }

    /// Feeds updates until `done` holds and the engine is idle.
    pub fn settle(&mut self, done: impl Fn(&App) -> bool) {
        while !(done(&self.app) && self.app.status.engine == EngineState::Idle) {
            let update = self
                .updates
                .recv_timeout(Duration::from_secs(20))
                .expect("the engine answers");
            let commands = self.app.update(Msg::Engine(update));
            self.send(commands);
        }
    }
}

/// A run record for the run list: step 3 of 30.
pub fn run_info(
    id: &str,
    kind: rollscope::trajectory::RunKind,
    status: rollscope::trajectory::RunStatus,
) -> rollscope::trajectory::RunInfo {
    rollscope::trajectory::RunInfo {
        id: id.into(),
        kind,
        status,
        config: Default::default(),
        seed: 0,
        model: "m".into(),
        code_version: "0".into(),
        parent: None,
        created_at: 0,
        step: 3,
        total_steps: 30,
        note: None,
        process: None,
        activity: None,
        stage: None,
    }
}

/// The trajectory an importer makes of a real file of `tests/data/formats`.
pub fn imported(name: &str) -> rollscope::trajectory::Trajectory {
    imported_from("tests/data/formats", name)
}

/// The first trajectory of the file `name` in the folder `folder` of the crate, imported.
pub fn imported_from(folder: &str, name: &str) -> rollscope::trajectory::Trajectory {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(folder)
        .join(name);
    let mut found = None;
    let options = rollscope::formats::ImportOptions::default();
    rollscope::formats::import_file(&path, options, &mut |item| {
        if let rollscope::formats::Item::Trajectory(trajectory) = item {
            found.get_or_insert(*trajectory);
        }
        Ok(())
    })
    .unwrap();
    let mut trajectory = found.expect("a trajectory");
    trajectory.id = rollscope::trajectory::TrajectoryId(0x0e7a_5e11);
    trajectory
}
