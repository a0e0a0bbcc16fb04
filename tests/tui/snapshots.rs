//! Snapshots of every view, drawn on a test terminal from a real engine over the demo set.
//! The screens hold no time stamps; the demo set is deterministic.

use crate::common::*;
use rollscope::tui::{Action, App};

/// Asserts the app's screen against the snapshot `name` in `tests/snapshots`.
pub fn snapshot(name: &str, app: &App) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!(name, render(app)));
}

#[test]
fn rollouts_list_with_preview() {
    let live = Live::new(512, 120, 36);
    snapshot("rollouts_list", &live.app);
}

#[test]
fn failures_sorted_by_prm() {
    let mut live = Live::new(512, 120, 36);
    live.act(&[Action::Outcome]);
    live.settle(|app| {
        app.tabs.rollouts.list.matching.is_some() && app.tabs.rollouts.list.preview.is_some()
    });
    live.act(&[Action::Sort, Action::Sort, Action::Sort]);
    live.settle(|app| {
        app.tabs.rollouts.list.matching.is_some() && app.tabs.rollouts.list.preview.is_some()
    });
    snapshot("rollouts_failures_by_prm", &live.app);
}

#[test]
fn trajectory_turn_with_tool_call_and_label() {
    let mut live = Live::new(512, 120, 36);
    live.act(&[Action::Outcome]);
    live.settle(|app| {
        app.tabs.rollouts.list.matching.is_some() && app.tabs.rollouts.list.preview.is_some()
    });
    live.act(&[Action::Open, Action::Right, Action::LabelCalculation]);
    live.settle(|app| {
        app.tabs
            .rollouts
            .trajectory
            .open
            .as_ref()
            .is_some_and(|open| !open.trajectory().labels.is_empty())
    });
    live.app.status.notice = None;
    snapshot("trajectory_turn", &live.app);
    live.act(&[Action::Transcript]);
    snapshot("trajectory_one_turn", &live.app);
    live.act(&[Action::Transcript]);
    live.act(&[Action::Left, Action::Left]);
    snapshot("trajectory_prompt", &live.app);
    live.act(&[Action::Bottom]);
    for _ in 0..10 {
        live.act(&[Action::Right]);
    }
    snapshot("trajectory_outcome", &live.app);
}

#[test]
fn token_view() {
    let mut live = Live::new(512, 100, 24);
    live.act(&[
        Action::Open,
        Action::Tokens,
        Action::Right,
        Action::Right,
        Action::Down,
    ]);
    snapshot("tokens", &live.app);
}

#[test]
fn group_view_with_diff() {
    let mut live = Live::new(512, 130, 30);
    live.act(&[Action::Down, Action::Down, Action::Group]);
    live.settle(|app| app.tabs.rollouts.group.group.is_some());
    live.act(&[Action::Down]);
    snapshot("group", &live.app);
    live.act(&[Action::Reference]);
    snapshot("group_reference", &live.app);
}

#[test]
fn runs_stats_curate_and_help() {
    let mut live = Live::new(512, 140, 40);
    live.act(&[Action::TabRuns]);
    live.settle(|app| !app.tabs.runs.rows.is_empty());
    snapshot("runs", &live.app);
    live.act(&[Action::Smoothing]);
    snapshot("runs_smoothed", &live.app);
    live.act(&[Action::TabStats]);
    live.settle(|app| app.overview.counts.is_some());
    snapshot("stats", &live.app);
    live.act(&[Action::TabCurate]);
    snapshot("curate", &live.app);
    live.act(&[Action::TabRollouts, Action::Help]);
    snapshot("help", &live.app);
}

#[test]
fn stats_before_after_and_the_curate_form() {
    let mut live = Live::new(512, 140, 44);
    live.act(&[Action::TabStats]);
    live.settle(|app| app.overview.counts.is_some());
    live.act(&[
        Action::Down,
        Action::Pin,
        Action::Down,
        Action::Down,
        Action::Down,
    ]);
    live.app.status.notice = None;
    snapshot("stats_before_after", &live.app);
    live.act(&[Action::TabCurate, Action::Down, Action::Right]);
    live.settle(|app| app.tabs.curate.form.current_preview().is_some());
    snapshot("curate_form", &live.app);
}

#[test]
fn the_launch_form_with_a_problem() {
    let mut live = Live::new(512, 130, 34);
    live.act(&[Action::TabRuns]);
    live.settle(|app| !app.tabs.runs.rows.is_empty());
    live.act(&[Action::NewRun, Action::Down, Action::Down]);
    live.app.update(key(crossterm::event::KeyCode::Backspace));
    type_text(&mut live.app, "1");
    live.app.update(key(crossterm::event::KeyCode::Enter));
    snapshot("launch_form", &live.app);
}

#[test]
fn tiny_terminal() {
    let mut live = Live::new(64, 20, 6);
    snapshot("tiny_list", &live.app);
    live.act(&[Action::Open]);
    snapshot("tiny_trajectory", &live.app);
}

#[test]
fn trajectory_with_python_reasoning_and_a_failed_tool() {
    let mut app = crate::content::opened(crate::content::tool_user(), 100, 30);
    snapshot("trajectory_python", &app);
    act(&mut app, &[Action::Right, Action::Right]);
    snapshot("trajectory_failed_tool", &app);
}

#[test]
fn runs_with_a_pinned_run_overlaid() {
    use rollscope::engine::Update;
    use rollscope::trajectory::{MetricsRow, RunInfo, RunKind, RunStatus};
    use rollscope::tui::Msg;
    let run = |id: &str| RunInfo {
        step: 20,
        total_steps: 20,
        ..run_info(id, RunKind::Grpo, RunStatus::Done)
    };
    let rows = |id: &str, slope: f64| -> Vec<MetricsRow> {
        (1..=20u32)
            .map(|step| {
                let x = f64::from(step);
                MetricsRow {
                    run: id.into(),
                    step: u64::from(step),
                    time: 0,
                    values: [
                        ("reward".to_string(), 0.1 + slope * x),
                        ("reward_std".to_string(), 0.1),
                        ("kl".to_string(), slope * x / 10.0),
                        ("success_rate".to_string(), slope * x),
                    ]
                    .into(),
                }
            })
            .collect()
    };
    let mut app = app(120, 34);
    app.start();
    act(&mut app, &[Action::TabRuns]);
    app.update(Msg::Engine(Update::Runs(vec![
        run("grpo-0001"),
        run("grpo-0002"),
    ])));
    act(&mut app, &[Action::Up, Action::Pin]);
    app.update(Msg::Engine(Update::Metrics {
        run: "grpo-0001".into(),
        rows: rows("grpo-0001", 0.01),
    }));
    act(&mut app, &[Action::Down]);
    app.update(Msg::Engine(Update::Metrics {
        run: "grpo-0002".into(),
        rows: rows("grpo-0002", 0.04),
    }));
    snapshot("runs_overlay", &app);
}

#[test]
fn openhands_turns_show_their_tool_calls_and_results() {
    let mut app = crate::content::opened(imported("openhands_wrong_initial_state.json"), 120, 34);
    act(&mut app, &[Action::Right]);
    let screen = render(&app);
    assert!(screen.contains("execute_bash"), "{screen}");
    assert!(screen.contains("mv /workspace/game_2048.py"), "{screen}");
    snapshot("trajectory_openhands", &app);
}

#[test]
fn transcripts_of_agent_runs_at_80x24_and_200x60() {
    for (name, file) in [
        ("swe_agent", "swe_agent_0x_ctf_networking_1.traj"),
        ("tau_bench", "tau_bench_airline_one.json"),
        ("openhands", "openhands_wrong_initial_state.json"),
    ] {
        for (width, height) in [(80, 24), (200, 60)] {
            let app = crate::content::opened(imported(file), width, height);
            snapshot(&format!("transcript_{name}_{width}x{height}"), &app);
        }
    }
}
