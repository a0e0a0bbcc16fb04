//! The Runs tab's charts: a pinned run overlaid on the selected ones, whole-step ticks and a
//! clear message for a run without metrics.

use super::update_runs::runs_app;
use crate::common::*;
use rollscope::engine::{Command, Update};
use rollscope::trajectory::{RunKind, RunStatus};
use rollscope::tui::{Action, Msg};

fn reward_rows(run: &str, rewards: &[f64]) -> Vec<rollscope::trajectory::MetricsRow> {
    rewards
        .iter()
        .enumerate()
        .map(|(step, reward)| rollscope::trajectory::MetricsRow {
            run: run.into(),
            step: step as u64 + 1,
            time: 0,
            values: [("reward".to_string(), *reward)].into(),
        })
        .collect()
}

#[test]
fn space_pins_a_run_whose_rows_overlay_the_selected_runs_until_unpinned() {
    let mut app = runs_app(vec![
        run_info("grpo-0001", RunKind::Grpo, RunStatus::Done),
        run_info("grpo-0002", RunKind::Grpo, RunStatus::Running),
    ]);
    app.update(Msg::Engine(Update::Metrics {
        run: "grpo-0002".into(),
        rows: reward_rows("grpo-0002", &[0.1, 0.2]),
    }));
    assert_eq!(app.tabs.runs.overlay(), None);
    act(&mut app, &[Action::Up]);
    let commands = act(&mut app, &[Action::Pin]);
    assert_eq!(
        commands,
        vec![Command::LoadMetrics {
            run: "grpo-0001".into()
        }]
    );
    app.update(Msg::Engine(Update::Metrics {
        run: "grpo-0001".into(),
        rows: reward_rows("grpo-0001", &[0.5, 0.6, 0.7]),
    }));
    assert_eq!(
        app.tabs.runs.overlay(),
        None,
        "a run is not overlaid on itself"
    );
    let commands = act(&mut app, &[Action::Down]);
    assert_eq!(
        commands,
        vec![Command::LoadMetrics {
            run: "grpo-0002".into()
        }]
    );
    app.update(Msg::Engine(Update::Metrics {
        run: "grpo-0002".into(),
        rows: reward_rows("grpo-0002", &[0.1, 0.2]),
    }));
    app.update(Msg::Engine(Update::MetricsAppended {
        run: "grpo-0001".into(),
        rows: reward_rows("grpo-0001", &[0.5, 0.6, 0.7, 0.8]),
    }));
    let (run, rows) = app
        .tabs
        .runs
        .overlay()
        .expect("the pinned run overlays the selected one");
    assert_eq!(
        (run, rows.len(), app.tabs.runs.rows.len()),
        ("grpo-0001", 4, 2)
    );
    let screen = render(&app);
    assert!(
        screen.contains("◆grpo-0001"),
        "the list marks the pinned run"
    );
    act(&mut app, &[Action::Up]);
    assert!(act(&mut app, &[Action::Pin]).is_empty());
    assert_eq!(app.tabs.runs.overlay_run, None, "space again unpins");
}

#[test]
fn charts_tick_whole_steps_and_say_when_a_run_has_no_metrics() {
    let mut app = app(140, 44);
    app.update(Msg::Engine(Update::Runs(vec![
        run_info("grpo-0001", RunKind::Grpo, RunStatus::Done),
        run_info("grpo-0002", RunKind::Grpo, RunStatus::Done),
    ])));
    act(&mut app, &[Action::TabRuns]);
    let rows: Vec<rollscope::trajectory::MetricsRow> = (0..50)
        .map(|step| rollscope::trajectory::MetricsRow {
            run: "grpo-0002".into(),
            step,
            time: 0,
            values: [
                ("reward".to_string(), step as f64 / 50.0),
                ("reward_std".to_string(), 0.1),
                ("kl".to_string(), 0.01),
            ]
            .into(),
        })
        .collect();
    let selected = app.tabs.runs.metrics_run.clone().expect("a run selected");
    app.update(Msg::Engine(Update::Metrics {
        run: selected,
        rows,
    }));
    let screen = render(&app);
    assert!(
        !screen.contains("49.00") && !screen.contains("0.000 "),
        "{screen}"
    );
    for tick in [" 0 ", " 49", "step", "reward"] {
        assert!(screen.contains(tick), "{tick:?} on the axes\n{screen}");
    }
    act(&mut app, &[Action::Up]);
    let other = app
        .tabs
        .runs
        .metrics_run
        .clone()
        .expect("another run selected");
    assert_ne!(other, "grpo-0002");
    app.update(Msg::Engine(Update::Metrics {
        run: other,
        rows: Vec::new(),
    }));
    let screen = render(&app);
    assert!(screen.contains("no metrics for this run"), "{screen}");
}

#[test]
fn a_run_without_metrics_shows_the_pinned_run_alone_at_its_own_scale() {
    let mut app = runs_app(vec![
        run_info("grpo-0001", RunKind::Grpo, RunStatus::Done),
        run_info("rollout-0002", RunKind::Rollout, RunStatus::Done),
    ]);
    act(&mut app, &[Action::Up]);
    act(&mut app, &[Action::Pin]);
    app.update(Msg::Engine(Update::Metrics {
        run: "grpo-0001".into(),
        rows: reward_rows("grpo-0001", &[0.25, 0.5, 0.75]),
    }));
    let alone = render(&app);
    act(&mut app, &[Action::Down]);
    app.update(Msg::Engine(Update::Metrics {
        run: "rollout-0002".into(),
        rows: Vec::new(),
    }));
    let screen = render(&app);
    assert!(
        screen.contains("no metrics for this run: the pinned run alone"),
        "{screen}"
    );
    for tick in ["0.775", "0.500", "0.225"] {
        assert!(
            alone.contains(tick),
            "{tick} on the pinned run's own axis\n{alone}"
        );
        assert!(
            screen.contains(tick),
            "{tick}: the pinned run keeps its scale\n{screen}"
        );
    }
}
