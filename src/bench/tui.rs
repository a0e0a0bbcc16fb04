//! The TUI benchmark: the TUI on a large synthetic store: start-up to first frame, frame
//! time at 200×50, paging, peak memory.

use super::{BenchProgress, peak_memory_bytes};
use crate::engine::{Engine, EngineConfig, Update};
use crate::store::{ServerLauncher, Store};
use crate::tui::{Action, App, AppConfig, Msg, view};
use anyhow::Context;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// What the TUI benchmark drives.
#[derive(Clone, Debug)]
pub struct TuiBenchOptions {
    /// Trajectories in the benchmark store.
    pub count: u64,
    /// Sessions root of the benchmark store (made once, then reused) [default: the temp dir].
    pub store_root: Option<PathBuf>,
    /// Frames drawn for the frame-time figures.
    pub frames: usize,
    /// Pages scrolled for the paging figures.
    pub pages: usize,
    /// The `rollscope` executable that makes the store in a child process (`demo-data`, then
    /// `compact`), so this process's memory figure is the TUI's alone.
    pub executable: PathBuf,
}

/// Median, 95th percentile and maximum of some durations, in milliseconds.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Spread {
    /// The median.
    pub median: f64,
    /// The 95th percentile.
    pub p95: f64,
    /// The maximum.
    pub max: f64,
}

/// Times of a page down, from key to drawn frame, in milliseconds.
#[derive(Debug, Clone, Serialize)]
pub struct PageFigures {
    /// The median.
    pub median: f64,
    /// The 95th percentile.
    pub p95: f64,
    /// The maximum.
    pub max: f64,
    /// Pages scrolled.
    pub pages: usize,
    /// Pages the app fetched from the engine.
    pub fetched: usize,
}

/// The figures of the TUI benchmark, times in milliseconds.
#[derive(Debug, Clone, Serialize)]
pub struct TuiBenchReport {
    /// Trajectories the list counted.
    pub trajectories: usize,
    /// Opening the store.
    pub store_open_ms: f64,
    /// Start-up to the first (empty) frame.
    pub startup_first_frame_ms: f64,
    /// Start-up to the first frame with rows.
    pub startup_first_frame_with_rows_ms: f64,
    /// Start-up to the list counted and a preview drawn.
    pub startup_counted_ms: f64,
    /// A frame of the list and preview.
    pub frame_list_ms: Spread,
    /// A frame of a trajectory turn.
    pub frame_turn_ms: Spread,
    /// A frame of the token view.
    pub frame_tokens_ms: Spread,
    /// A page down.
    pub page_ms: PageFigures,
    /// Peak resident memory of the process (VmHWM), in MiB, if known.
    pub peak_rss_mib: Option<f64>,
    /// Drawing the first (empty) frame alone (in the text report only).
    #[serde(skip)]
    pub empty_frame_ms: f64,
}

/// Width of the benchmark's terminal, in cells.
pub const FRAME_WIDTH: u16 = 200;
/// Height of the benchmark's terminal, in cells.
pub const FRAME_HEIGHT: u16 = 50;
const WAIT: Duration = Duration::from_secs(60);

type BenchTerminal = Terminal<CrosstermBackend<std::io::Sink>>;

/// Feeds engine updates to the app (sending the commands they make) until `done` holds.
fn settle(
    app: &mut App,
    engine: &Engine,
    updates: &Receiver<Update>,
    done: impl Fn(&App) -> bool,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + WAIT;
    while !done(app) {
        let left = deadline.saturating_duration_since(Instant::now());
        let update = updates
            .recv_timeout(left)
            .context("the engine did not answer within a minute")?;
        let commands = app.update(Msg::Engine(update));
        for command in app.prune(commands) {
            engine.send(command);
        }
    }
    Ok(())
}

fn act(app: &mut App, engine: &Engine, action: Action) {
    let commands = app.update(Msg::Action(action));
    for command in app.prune(commands) {
        engine.send(command);
    }
}

fn draw(terminal: &mut BenchTerminal, app: &App) -> anyhow::Result<Duration> {
    let start = Instant::now();
    terminal.draw(|frame| view::draw(frame, app))?;
    Ok(start.elapsed())
}

/// Median, 95th percentile and maximum, in milliseconds (none: zeros).
pub(super) fn spread(mut samples: Vec<Duration>) -> Spread {
    if samples.is_empty() {
        samples.push(Duration::ZERO);
    }
    samples.sort();
    let at = |quantile: f64| samples[((samples.len() - 1) as f64 * quantile).round() as usize];
    Spread {
        median: milliseconds(at(0.5)),
        p95: milliseconds(at(0.95)),
        max: milliseconds(at(1.0)),
    }
}

/// A duration in milliseconds.
pub(super) fn milliseconds(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// Peak resident memory of this process (VmHWM), in MiB.
pub(super) fn peak_rss_mib() -> Option<f64> {
    peak_memory_bytes().map(|bytes| bytes as f64 / (1024.0 * 1024.0))
}

/// Makes the benchmark store with a child `rollscope demo-data` (so this process's memory
/// figure is the TUI's alone), then compacts it, as a store at rest would be.
fn ensure_store(
    options: &TuiBenchOptions,
    root: &Path,
    session: &str,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<PathBuf> {
    let count = options.count;
    let dir = root.join(session);
    let marker = dir.join("bench-complete");
    if marker.is_file() {
        return Ok(dir.join("store"));
    }
    anyhow::ensure!(
        !dir.exists(),
        "{} holds an unfinished benchmark store; delete it and run again",
        dir.display()
    );
    progress(BenchProgress::Note(format!(
        "making the benchmark store: {count} synthetic trajectories in {} …",
        dir.display()
    )));
    let start = Instant::now();
    let status = std::process::Command::new(&options.executable)
        .args([
            "demo-data",
            "--count",
            &count.to_string(),
            "--trace-tokens",
            "1000",
        ])
        .arg("--sessions-dir")
        .arg(root)
        .args(["--session", session])
        .stdout(std::process::Stdio::from(std::io::stderr()))
        .status()
        .context("cannot run `rollscope demo-data` for the benchmark store")?;
    anyhow::ensure!(status.success(), "`rollscope demo-data` failed");
    let status = std::process::Command::new(&options.executable)
        .arg("--sessions-dir")
        .arg(root)
        .args(["--session", session, "compact"])
        .stdout(std::process::Stdio::from(std::io::stderr()))
        .status()
        .context("cannot run `rollscope compact` on the benchmark store")?;
    anyhow::ensure!(status.success(), "`rollscope compact` failed");
    std::fs::write(&marker, format!("{count}\n"))?;
    progress(BenchProgress::Note(format!(
        "made in {:.1} s",
        start.elapsed().as_secs_f64()
    )));
    Ok(dir.join("store"))
}

/// Makes (or reuses) the benchmark store, then drives the TUI on it through the engine with
/// an off-screen terminal, timing start-up (through the session server, as `rollscope tui`
/// opens it), frames and paging.
pub fn bench_tui(
    options: &TuiBenchOptions,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<TuiBenchReport> {
    let root = options
        .store_root
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join("rollscope-bench-tui"));
    let session = format!("bench-{}", options.count);
    let store_dir = ensure_store(options, &root, &session, progress)?;
    let viewport = Rect::new(0, 0, FRAME_WIDTH, FRAME_HEIGHT);
    let mut terminal = Terminal::with_options(
        CrosstermBackend::new(std::io::sink()),
        TerminalOptions {
            viewport: Viewport::Fixed(viewport),
        },
    )?;

    let start = Instant::now();
    let launcher = ServerLauncher::rollscope(&options.executable);
    let store = Store::connect(&store_dir, launcher)
        .with_context(|| format!("cannot open {}", store_dir.display()))?;
    let opened = start.elapsed();
    let (engine, updates) = Engine::spawn(Arc::new(store), EngineConfig::default())?;
    let mut app = App::new(AppConfig::new("bench", viewport));
    for command in app.start() {
        engine.send(command);
    }
    let empty_frame = draw(&mut terminal, &app)?;
    let to_empty_frame = start.elapsed();
    settle(&mut app, &engine, &updates, |app| {
        !app.tabs.rollouts.list.rows.is_empty()
    })?;
    draw(&mut terminal, &app)?;
    let to_rows = start.elapsed();
    settle(&mut app, &engine, &updates, |app| {
        app.tabs.rollouts.list.matching.is_some() && app.tabs.rollouts.list.preview.is_some()
    })?;
    draw(&mut terminal, &app)?;
    let to_counted = start.elapsed();
    let matching = app.tabs.rollouts.list.matching.unwrap_or(0);

    let previewed = |app: &App| {
        app.tabs.rollouts.list.selected().is_some()
            && app.tabs.rollouts.list.selected().map(|s| s.id)
                == app
                    .tabs
                    .rollouts
                    .list
                    .preview
                    .as_ref()
                    .map(|p| p.trajectory.id)
    };
    let mut list_frames = Vec::new();
    for _ in 0..options.frames {
        act(&mut app, &engine, Action::Down);
        settle(&mut app, &engine, &updates, previewed)?;
        list_frames.push(draw(&mut terminal, &app)?);
    }

    act(&mut app, &engine, Action::Top);
    settle(&mut app, &engine, &updates, previewed)?;
    act(&mut app, &engine, Action::Open);
    settle(&mut app, &engine, &updates, |app| {
        app.tabs.rollouts.trajectory.open.is_some()
    })?;
    let mut turn_frames = Vec::new();
    for index in 0..options.frames {
        act(
            &mut app,
            &engine,
            if index % 2 == 0 {
                Action::Right
            } else {
                Action::Left
            },
        );
        turn_frames.push(draw(&mut terminal, &app)?);
    }
    act(&mut app, &engine, Action::Tokens);
    let mut token_frames = Vec::new();
    for _ in 0..options.frames {
        act(&mut app, &engine, Action::Right);
        token_frames.push(draw(&mut terminal, &app)?);
    }
    act(&mut app, &engine, Action::Back);
    act(&mut app, &engine, Action::Back);

    let mut pages = Vec::new();
    let mut fetched = 0;
    for _ in 0..options.pages {
        let begin = Instant::now();
        act(&mut app, &engine, Action::PageDown);
        if app.tabs.rollouts.list.requested.is_some() {
            fetched += 1;
        }
        settle(&mut app, &engine, &updates, |app| {
            app.tabs.rollouts.list.requested.is_none()
        })?;
        draw(&mut terminal, &app)?;
        pages.push(begin.elapsed());
    }
    let peak_rss_mib = peak_rss_mib();
    engine.shutdown();
    let page = spread(pages);
    Ok(TuiBenchReport {
        trajectories: matching,
        store_open_ms: milliseconds(opened),
        startup_first_frame_ms: milliseconds(to_empty_frame),
        startup_first_frame_with_rows_ms: milliseconds(to_rows),
        startup_counted_ms: milliseconds(to_counted),
        frame_list_ms: spread(list_frames),
        frame_turn_ms: spread(turn_frames),
        frame_tokens_ms: spread(token_frames),
        page_ms: PageFigures {
            median: page.median,
            p95: page.p95,
            max: page.max,
            pages: options.pages,
            fetched,
        },
        peak_rss_mib,
        empty_frame_ms: milliseconds(empty_frame),
    })
}
