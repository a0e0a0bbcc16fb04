//! `rollscope bench tui`: the TUI on a 100k-trajectory store: start-up to first frame, frame
//! time at 200×50, paging, peak memory.

use super::Cli;
use crate::engine::{Engine, EngineConfig, Update};
use crate::store::Store;
use crate::tui::{Action, App, AppConfig, Msg, view};
use anyhow::Context;
use clap::Args;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// Arguments of `rollscope bench tui`.
#[derive(Debug, Args)]
pub struct TuiBenchArgs {
    /// Trajectories in the benchmark store.
    #[arg(long, default_value_t = 100_000)]
    pub count: u64,
    /// Sessions root of the benchmark store (made once, then reused) [default: the temp dir].
    #[arg(long, value_name = "DIR")]
    pub store_root: Option<PathBuf>,
    /// Frames drawn for the frame-time figures.
    #[arg(long, default_value_t = 200)]
    pub frames: usize,
    /// Pages scrolled for the paging figures.
    #[arg(long, default_value_t = 200)]
    pub pages: usize,
}

const WIDTH: u16 = 200;
const HEIGHT: u16 = 50;
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

/// Median, 95th percentile and maximum, in milliseconds.
fn spread(mut samples: Vec<Duration>) -> (f64, f64, f64) {
    samples.sort();
    let ms = |duration: Duration| duration.as_secs_f64() * 1e3;
    let at = |quantile: f64| samples[((samples.len() - 1) as f64 * quantile).round() as usize];
    (ms(at(0.5)), ms(at(0.95)), ms(at(1.0)))
}

/// Peak resident memory of this process (VmHWM), in MiB.
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// Makes the benchmark store with a child `rollscope demo-data` (so this process's memory
/// figure is the TUI's alone), then compacts it, as a store at rest would be.
fn ensure_store(root: &std::path::Path, session: &str, count: u64) -> anyhow::Result<PathBuf> {
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
    eprintln!(
        "making the benchmark store: {count} synthetic trajectories in {} …",
        dir.display()
    );
    let start = Instant::now();
    let status = std::process::Command::new(std::env::current_exe()?)
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
    let status = std::process::Command::new(std::env::current_exe()?)
        .arg("--sessions-dir")
        .arg(root)
        .args(["--session", session, "compact"])
        .stdout(std::process::Stdio::from(std::io::stderr()))
        .status()
        .context("cannot run `rollscope compact` on the benchmark store")?;
    anyhow::ensure!(status.success(), "`rollscope compact` failed");
    std::fs::write(&marker, format!("{count}\n"))?;
    eprintln!("made in {:.1} s", start.elapsed().as_secs_f64());
    Ok(dir.join("store"))
}

/// `rollscope bench tui`.
pub fn bench_tui(cli: &Cli, args: &TuiBenchArgs) -> anyhow::Result<()> {
    let root = args
        .store_root
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join("rollscope-bench-tui"));
    let store_dir = ensure_store(&root, &format!("bench-{}", args.count), args.count)?;
    let viewport = Rect::new(0, 0, WIDTH, HEIGHT);
    let mut terminal = Terminal::with_options(
        CrosstermBackend::new(std::io::sink()),
        TerminalOptions {
            viewport: Viewport::Fixed(viewport),
        },
    )?;

    let start = Instant::now();
    let store =
        Store::open(&store_dir).with_context(|| format!("cannot open {}", store_dir.display()))?;
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
    for _ in 0..args.frames {
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
    for index in 0..args.frames {
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
    for _ in 0..args.frames {
        act(&mut app, &engine, Action::Right);
        token_frames.push(draw(&mut terminal, &app)?);
    }
    act(&mut app, &engine, Action::Back);
    act(&mut app, &engine, Action::Back);

    let mut pages = Vec::new();
    let mut fetched = 0;
    for _ in 0..args.pages {
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
    let peak = peak_rss_mib();
    engine.shutdown();

    let (list_median, list_p95, list_max) = spread(list_frames);
    let (turn_median, turn_p95, turn_max) = spread(turn_frames);
    let (token_median, token_p95, token_max) = spread(token_frames);
    let (page_median, page_p95, page_max) = spread(pages);
    let seconds = |duration: Duration| duration.as_secs_f64() * 1e3;
    if cli.json {
        println!(
            "{}",
            serde_json::json!({
                "trajectories": matching,
                "store_open_ms": seconds(opened),
                "startup_first_frame_ms": seconds(to_empty_frame),
                "startup_first_frame_with_rows_ms": seconds(to_rows),
                "startup_counted_ms": seconds(to_counted),
                "frame_list_ms": {"median": list_median, "p95": list_p95, "max": list_max},
                "frame_turn_ms": {"median": turn_median, "p95": turn_p95, "max": turn_max},
                "frame_tokens_ms": {"median": token_median, "p95": token_p95, "max": token_max},
                "page_ms": {"median": page_median, "p95": page_p95, "max": page_max, "pages": args.pages, "fetched": fetched},
                "peak_rss_mib": peak,
            })
        );
        return Ok(());
    }
    println!("rollscope bench tui · {matching} trajectories · {WIDTH}×{HEIGHT}");
    println!(
        "start-up → first frame        {:>8.1} ms  (store opened in {:.1} ms, empty frame drawn in {:.2} ms)",
        seconds(to_empty_frame),
        seconds(opened),
        seconds(empty_frame)
    );
    println!(
        "start-up → first rows drawn   {:>8.1} ms   goal ≤ 300 ms",
        seconds(to_rows)
    );
    println!(
        "start-up → list counted       {:>8.1} ms",
        seconds(to_counted)
    );
    println!(
        "frame, list + preview         {list_median:>8.2} ms median · p95 {list_p95:.2} · max {list_max:.2}   goal ≤ 5 ms"
    );
    println!(
        "frame, trajectory turn        {turn_median:>8.2} ms median · p95 {turn_p95:.2} · max {turn_max:.2}"
    );
    println!(
        "frame, token view             {token_median:>8.2} ms median · p95 {token_p95:.2} · max {token_max:.2}"
    );
    println!(
        "page down (key → drawn)       {page_median:>8.2} ms median · p95 {page_p95:.2} · max {page_max:.2}   goal ≤ 16 ms ({fetched} of {} pages fetched from the engine)",
        args.pages
    );
    match peak {
        Some(peak) => println!("peak memory (VmHWM)           {peak:>8.1} MiB   goal ≤ 200 MB"),
        None => println!("peak memory                   unavailable (no /proc/self/status)"),
    }
    Ok(())
}
