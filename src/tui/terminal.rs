//! The real terminal: set up (raw mode, alternate screen, mouse), the event loop, and
//! restoring everything on exit, Ctrl-C or panic.

use super::app::{App, AppConfig, Msg};
use super::content::TaskLines;
use super::keymap::Keymap;
use super::memory::Remembered;
use super::theme::{BUILT_IN, Theme};
use super::view;
use crate::engine::{Activity, ComputeDevice, Engine, EngineConfig, JobLauncher};
use crate::session::SessionPaths;
use crate::store::Store;
use anyhow::Context;
use crossterm::event::{self, DisableMouseCapture, EnableMouseCapture, Event, MouseEventKind};
use ratatui::DefaultTerminal;
use ratatui::layout::Rect;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver};

/// The app settings a session asks for: its theme and keymap from `session.toml` (paths
/// relative to the session folder), everything else default.
pub fn session_app_config(paths: &SessionPaths, viewport: Rect) -> anyhow::Result<AppConfig> {
    let config = paths.load_config()?;
    let mut app_config = AppConfig::new(&paths.name, viewport);
    app_config.label_kinds = config.labels.clone();
    if let Some(lines) = config.task_lines {
        app_config.task_lines = TaskLines(lines);
    }
    if let Some(name) = &config.theme {
        let built_in = BUILT_IN.iter().any(|(built_in, _)| built_in == name);
        let in_session = paths.dir.join(name);
        let theme = if !built_in && in_session.is_file() {
            Theme::named(&in_session.to_string_lossy())?
        } else {
            Theme::named(name)?
        };
        if !built_in {
            app_config.extra_themes.push(theme.clone());
        }
        app_config.theme = theme;
    }
    if let Some(keymap) = &config.keymap {
        let path = if keymap.is_absolute() {
            keymap.clone()
        } else {
            paths.dir.join(keymap)
        };
        app_config.keymap = Keymap::load(&path)?;
    }
    Ok(app_config)
}

/// Opens the TUI on a session's store and runs it until the user quits; `blind` opens it for
/// blind labelling (`AppConfig::blind`); `notice` greets the user in the status bar.
pub fn run(
    paths: &SessionPaths,
    store: Store,
    blind: bool,
    notice: Option<String>,
) -> anyhow::Result<()> {
    let session = paths.load_config()?;
    let mut config = session_app_config(paths, Rect::default())?;
    config.blind = blind;
    let annotator = session.author();
    config.annotator = annotator.clone();
    let memory = (!blind).then(|| Remembered::path(&paths.dir, annotator.as_deref()));
    let mut notice = notice;
    if let Some(path) = &memory {
        match Remembered::load(path) {
            Ok(remembered) => config.remembered = remembered,
            Err(error) => {
                let unread = format!("{error:#}; starting from the whole list");
                notice = Some(match notice {
                    Some(first) => format!("{first} · {unread}"),
                    None => unread,
                });
            }
        }
    }
    let engine_config = EngineConfig {
        annotator,
        session: Some(paths.clone()),
        device: ComputeDevice::default(),
        launcher: Some(JobLauncher::this_program().context("cannot find the rollscope program")?),
    };
    let (engine, updates) =
        Engine::spawn(Arc::new(store), engine_config).context("cannot start the engine thread")?;
    let mut terminal = ratatui::init();
    let _ = crossterm::execute!(std::io::stdout(), EnableMouseCapture);
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = crossterm::execute!(std::io::stdout(), DisableMouseCapture);
        previous_hook(info);
    }));
    let result = terminal
        .size()
        .map_err(anyhow::Error::from)
        .and_then(|size| {
            config.viewport = Rect::new(0, 0, size.width, size.height);
            let mut app = App::new(config);
            if let Some(notice) = notice {
                app.notify(notice);
            }
            event_loop(&mut terminal, &mut app, &engine, updates).map(|()| app)
        });
    let _ = crossterm::execute!(std::io::stdout(), DisableMouseCapture);
    ratatui::restore();
    engine.shutdown();
    if let Ok(app) = &result {
        if let Some(path) = &memory
            && let Err(error) = app.remembered().save(path)
        {
            eprintln!("the view is not remembered for the next start: {error:#}");
        }
        say_what_trains(app);
    }
    result.map(|_| ())
}

/// After the TUI: the runs that still train in the background, and how to follow or stop
/// them.
fn say_what_trains(app: &App) {
    for run in app.tabs.runs.training() {
        eprintln!(
            "{} goes on in the background ({}); follow it with `rollscope tui` or `rollscope \
             runs`, stop it with `rollscope runs stop {}`",
            run.id,
            crate::tui::state::runs::describe(run),
            run.id
        );
    }
}

/// Draw, wait for a terminal event or an engine update, drain everything pending, send the
/// commands it produced, draw again.
fn event_loop(
    terminal: &mut DefaultTerminal,
    app: &mut App,
    engine: &Engine,
    updates: Receiver<crate::engine::Update>,
) -> anyhow::Result<()> {
    let (sender, messages) = mpsc::channel::<Msg>();
    let engine_sender = sender.clone();
    std::thread::Builder::new()
        .name("rollscope-updates".into())
        .spawn(move || {
            for update in updates {
                if engine_sender.send(Msg::Engine(update)).is_err() {
                    return;
                }
            }
            let _ = engine_sender.send(Msg::Engine(crate::engine::Update::Failed {
                tag: None,
                during: Activity::EngineThread,
                message: "the engine thread stopped; nothing more is loaded or saved: quit and reopen the session".into(),
            }));
        })?;
    std::thread::Builder::new()
        .name("rollscope-input".into())
        .spawn(move || {
            while let Ok(event) = event::read() {
                let Some(msg) = message_of(event) else {
                    continue;
                };
                if sender.send(msg).is_err() {
                    break;
                }
            }
        })?;
    for command in app.start() {
        engine.send(command);
    }
    loop {
        terminal.draw(|frame| view::draw(frame, app))?;
        let first = messages
            .recv()
            .context("the terminal and the engine both stopped")?;
        let mut commands = app.update(first);
        while let Ok(msg) = messages.try_recv() {
            commands.extend(app.update(msg));
        }
        for command in app.prune(commands) {
            engine.send(command);
        }
        if app.quit {
            return Ok(());
        }
    }
}

/// The app message a terminal event makes, if any.
fn message_of(event: Event) -> Option<Msg> {
    match event {
        Event::Key(key) => Some(Msg::Key(key)),
        Event::Resize(width, height) => Some(Msg::Resize(width, height)),
        Event::Mouse(mouse) => match mouse.kind {
            MouseEventKind::ScrollUp => Some(Msg::Scroll(-1)),
            MouseEventKind::ScrollDown => Some(Msg::Scroll(1)),
            _ => None,
        },
        _ => None,
    }
}
