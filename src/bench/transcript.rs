//! The transcript benchmark: one generated agent trajectory of many messages (shell
//! commands, Python, file edits, JSON results, diffs, tracebacks, markdown) opened in the
//! TUI's whole-conversation view: opening it, jumping to its last message, scrolling key to
//! drawn frame, peak memory. The trajectory is handed to the app as the engine would hand it
//! after a load, so the figures are the TUI's alone (not the store's read).

use super::tui::{Spread, milliseconds, peak_rss_mib, spread};
use crate::engine::{Command, LoadedTrajectory, Update, Window};
use crate::store::Summary;
use crate::trajectory::{Message, Reward, ToolCall, Trajectory, TrajectoryId};
use crate::tui::{Action, App, AppConfig, Msg, view};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use serde::Serialize;
use std::time::{Duration, Instant};

/// What the transcript benchmark opens and does.
#[derive(Clone, Debug)]
pub struct TranscriptBenchOptions {
    /// Messages in the generated trajectory.
    pub messages: usize,
    /// Line scrolls (and page scrolls) timed.
    pub scrolls: usize,
    /// The terminal's width and height, in cells.
    pub size: (u16, u16),
}

/// The figures of the transcript benchmark, times in milliseconds.
#[derive(Debug, Clone, Serialize)]
pub struct TranscriptBenchReport {
    /// Messages in the trajectory.
    pub messages: usize,
    /// Turns (assistant steps) in it.
    pub turns: usize,
    /// Generating the trajectory (not the TUI's; for scale).
    pub generate_ms: f64,
    /// From the loaded trajectory reaching the app to its first frame drawn.
    pub open_ms: f64,
    /// `end`: key to the last message drawn.
    pub end_ms: f64,
    /// `home`: key to the first message drawn.
    pub home_ms: f64,
    /// A line scroll, key to drawn frame.
    pub scroll_ms: Spread,
    /// A page scroll, key to drawn frame.
    pub page_ms: Spread,
    /// Peak resident memory of the process (VmHWM), in MiB, if known.
    pub peak_rss_mib: Option<f64>,
}

/// Generates the trajectory, opens it in the app on an off-screen terminal, jumps to its end
/// and back, and scrolls it by lines and pages, timing each key until its frame is drawn.
pub fn bench_transcript(options: &TranscriptBenchOptions) -> anyhow::Result<TranscriptBenchReport> {
    let started = Instant::now();
    let trajectory = agent_trajectory(options.messages);
    let generate = started.elapsed();
    let turns = trajectory.steps().len();
    let messages = trajectory.messages.len();
    let (width, height) = options.size;
    let mut app = App::new(AppConfig::new("bench", Rect::new(0, 0, width, height)));
    let mut terminal = Terminal::new(TestBackend::new(width, height))?;
    let list = app
        .start()
        .into_iter()
        .find_map(|command| match command {
            Command::List { tag, .. } => Some(tag),
            _ => None,
        })
        .ok_or_else(|| anyhow::anyhow!("the app asked for no list"))?;
    let commands = app.update(Msg::Engine(Update::Window(Window {
        tag: list,
        start: 0,
        rows: vec![Summary::of(&trajectory, 0)],
        matching: Some(1),
        stored: Some(1),
    })));
    let preview = commands
        .into_iter()
        .find_map(|command| match command {
            Command::LoadTrajectory { tag, .. } => Some(tag),
            _ => None,
        })
        .ok_or_else(|| anyhow::anyhow!("the app asked for no preview"))?;
    let loaded = Box::new(LoadedTrajectory {
        trajectory,
        task: None,
        spellings: None,
        parent: None,
        tree: Vec::new(),
    });

    let begin = Instant::now();
    app.update(Msg::Engine(Update::Trajectory {
        tag: preview,
        loaded,
    }));
    app.update(Msg::Action(Action::Open));
    terminal.draw(|frame| view::draw(frame, &app))?;
    let open = begin.elapsed();
    let end = timed(&mut app, &mut terminal, Action::Bottom)?;
    let mut scrolls = Vec::with_capacity(options.scrolls);
    let mut pages = Vec::with_capacity(options.scrolls);
    for _ in 0..options.scrolls {
        scrolls.push(timed(&mut app, &mut terminal, Action::Up)?);
    }
    for _ in 0..options.scrolls {
        pages.push(timed(&mut app, &mut terminal, Action::PageUp)?);
    }
    let home = timed(&mut app, &mut terminal, Action::Top)?;
    for _ in 0..options.scrolls {
        scrolls.push(timed(&mut app, &mut terminal, Action::Down)?);
        pages.push(timed(&mut app, &mut terminal, Action::PageDown)?);
    }
    Ok(TranscriptBenchReport {
        messages,
        turns,
        generate_ms: milliseconds(generate),
        open_ms: milliseconds(open),
        end_ms: milliseconds(end),
        home_ms: milliseconds(home),
        scroll_ms: spread(scrolls),
        page_ms: spread(pages),
        peak_rss_mib: peak_rss_mib(),
    })
}

/// One key, from the update to its frame drawn.
fn timed(
    app: &mut App,
    terminal: &mut Terminal<TestBackend>,
    action: Action,
) -> anyhow::Result<Duration> {
    let begin = Instant::now();
    app.update(Msg::Action(action));
    terminal.draw(|frame| view::draw(frame, app))?;
    Ok(begin.elapsed())
}

/// An agent trajectory of `messages` messages (at least 3): a markdown task, then turns that each
/// call one tool (a shell command, Python, a file edit, a search) and get its result (JSON,
/// a diff, a traceback, plain output), and a final answer.
pub fn agent_trajectory(messages: usize) -> Trajectory {
    let mut all = vec![
        Message::system("You are a software engineering agent. Use the tools."),
        Message::user(
            "# Fix the failing test\n\nThe test `tests/test_parser.py::test_nested` fails:\n\n\
             - run it\n- find the cause\n- **fix** it and keep the other tests green\n\n\
             ```python\nassert parse('[[1]]') == [[1]]\n```",
        ),
    ];
    let mut turn = 0;
    while all.len() + 3 <= messages.max(3) {
        let (call, result) = turn_call(turn);
        let mut message = Message::assistant(format!(
            "Step {turn}: I look at **what failed** before changing anything."
        ));
        message.tool_calls.push(call);
        all.push(message);
        let mut reply = Message::tool(result);
        reply.is_error = turn % 4 == 2;
        all.push(reply);
        turn += 1;
    }
    if all.len() + 2 == messages {
        all.push(Message::user("Please also run the linter."));
    }
    all.push(Message::assistant(
        "The test passes now.\n\nFinal Answer: fixed",
    ));
    let mut trajectory = Trajectory::new(TrajectoryId(0x7a11_7a11), all);
    trajectory.task_id = Some("bench-transcript".into());
    trajectory.reward = Some(Reward::scalar(1.0));
    trajectory
}

/// The tool call of turn `turn` and the text its tool returned.
fn turn_call(turn: usize) -> (ToolCall, String) {
    match turn % 4 {
        0 => (
            ToolCall::new(
                "bash",
                format!(r#"{{"command": "pytest -x tests/test_parser.py -k case_{turn}"}}"#),
            ),
            format!(
                r#"{{"exit_code": 0, "stdout": "collected 12 items\n12 passed in 0.{turn}s", "files": ["tests/test_parser.py", "src/parser.py"], "case": {turn}}}"#
            ),
        ),
        1 => (
            ToolCall::new(
                "python",
                format!(
                    r#"{{"code": "import json\nrows = [{{'case': {turn}, 'ok': True}}]\nprint(json.dumps(rows))"}}"#
                ),
            ),
            format!("[{{\"case\": {turn}, \"ok\": true}}]"),
        ),
        2 => (
            ToolCall::new(
                "str_replace_editor",
                format!(
                    r#"{{"command": "str_replace", "path": "/repo/src/parser.py", "old_str": "    depth = 0\n    for token in tokens:", "new_str": "    depth = {turn}\n    for token in tokens:\n        depth += 1"}}"#
                ),
            ),
            format!(
                "Traceback (most recent call last):\n  File \"/repo/src/parser.py\", line {turn}, in parse\n    raise ValueError('unbalanced')\nValueError: unbalanced"
            ),
        ),
        _ => (
            ToolCall::new(
                "search",
                format!(r#"{{"query": "nested list parser case {turn}"}}"#),
            ),
            format!(
                "--- a/src/parser.py\n+++ b/src/parser.py\n@@ -{turn},3 +{turn},4 @@\n-    depth = 0\n+    depth = 1\n     for token in tokens:\n+        depth += 1"
            ),
        ),
    }
}
