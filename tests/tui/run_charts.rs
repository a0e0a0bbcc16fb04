//! The Runs tab's charts: pinned runs overlaid on the selected one, whole-step ticks, a
//! clear message for a run without metrics, the metric picker and the table of runs.

use super::update_runs::runs_app;
use crate::common::*;
use crossterm::event::KeyCode;
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
    assert!(app.tabs.runs.charts.pinned.is_empty());
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
    assert!(
        app.tabs.runs.charts.overlays(Some("grpo-0001")).is_empty(),
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
    let overlays = app.tabs.runs.charts.overlays(Some("grpo-0002"));
    let (place, pinned) = overlays[0];
    assert_eq!(
        (place, pinned.id.as_str(), pinned.rows.len()),
        (0, "grpo-0001", 4)
    );
    assert_eq!(app.tabs.runs.rows.len(), 2);
    let screen = render(&app);
    assert!(
        screen.contains("◆grpo-0001"),
        "the list marks the pinned run"
    );
    assert!(
        screen.contains("━ grpo-0002 ━ grpo-0001"),
        "the main chart names the runs by colour, no legend box\n{screen}"
    );
    act(&mut app, &[Action::Up]);
    assert!(act(&mut app, &[Action::Pin]).is_empty());
    assert!(app.tabs.runs.charts.pinned.is_empty(), "space again unpins");
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
        screen.contains("no metrics for this run: the pinned runs alone"),
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

#[test]
fn up_to_four_runs_pin_each_in_its_own_colour_and_a_fifth_is_refused() {
    let ids: Vec<String> = (1..=6).map(|n| format!("grpo-000{n}")).collect();
    let mut app = runs_app(
        ids.iter()
            .map(|id| run_info(id, RunKind::Grpo, RunStatus::Done))
            .collect(),
    );
    for _ in 0..5 {
        act(&mut app, &[Action::Pin, Action::Up]);
    }
    let pinned: Vec<&str> = app
        .tabs
        .runs
        .charts
        .pinned
        .iter()
        .map(|pinned| pinned.id.as_str())
        .collect();
    assert_eq!(pinned.len(), 4, "{pinned:?}");
    assert!(
        render(&app).contains("4 runs are pinned already"),
        "the fifth pin is refused with what to do"
    );
    let colours: std::collections::HashSet<_> =
        (0..4).map(|place| app.theme.pin_color(place)).collect();
    assert_eq!(colours.len(), 4);
}

fn trl_rows(run: &str) -> Vec<rollscope::trajectory::MetricsRow> {
    (0..20)
        .map(|step| rollscope::trajectory::MetricsRow {
            run: run.into(),
            step,
            time: 0,
            values: [
                ("reward".to_string(), 0.1 + step as f64 / 40.0),
                ("rewards/correct/mean".to_string(), step as f64 / 20.0),
                ("frac_reward_zero_std".to_string(), 0.5 - step as f64 / 50.0),
                ("learning_rate".to_string(), 1e-6),
            ]
            .into(),
        })
        .collect()
}

#[test]
fn the_picker_charts_any_recorded_metric_and_keeps_typed_keys_to_itself() {
    let mut app = runs_app(vec![run_info("trl-run", RunKind::Import, RunStatus::Done)]);
    app.update(Msg::Engine(Update::Metrics {
        run: "trl-run".into(),
        rows: trl_rows("trl-run"),
    }));
    act(&mut app, &[Action::ChooseCharts]);
    let picker = app
        .tabs
        .runs
        .charts
        .picker
        .as_ref()
        .expect("the picker opens");
    assert_eq!(picker.names.len(), 4, "{:?}", picker.names);
    let typed = type_text(&mut app, "corr mean");
    assert!(
        typed.is_empty(),
        "typed keys reach no list action: {typed:?}"
    );
    assert!(
        !app.tabs.runs.smoothing,
        "`m` was not pressed as a key of the tab"
    );
    app.update(key(KeyCode::Enter));
    for _ in 0.."corr mean".len() {
        app.update(key(KeyCode::Backspace));
    }
    type_text(&mut app, "zero std");
    app.update(key(KeyCode::Enter));
    assert_eq!(
        app.tabs.runs.charts.chosen,
        ["rewards/correct/mean", "frac_reward_zero_std"]
    );
    let screen = render(&app);
    assert!(screen.contains("2 charted"), "{screen}");
    app.update(key(KeyCode::Esc));
    assert!(app.tabs.runs.charts.picker.is_none());
    let screen = render(&app);
    assert!(
        screen.contains("rewards/correct/mean 0.950")
            && screen.contains("frac_reward_zero_std 0.120"),
        "the chosen metrics are charted with their latest values\n{screen}"
    );
    assert!(
        !screen.contains(" KL "),
        "the preset gives way to the choice\n{screen}"
    );
    assert_eq!(
        app.remembered().charts,
        app.tabs.runs.charts.chosen,
        "remembered"
    );
}

#[test]
fn the_table_puts_runs_side_by_side_with_final_and_best_values() {
    let mut app = runs_app(vec![
        run_info("grpo-0001", RunKind::Grpo, RunStatus::Done),
        run_info("grpo-0002", RunKind::Grpo, RunStatus::Done),
    ]);
    act(&mut app, &[Action::Up, Action::Pin, Action::Down]);
    app.update(Msg::Engine(Update::Metrics {
        run: "grpo-0001".into(),
        rows: reward_rows("grpo-0001", &[0.2, 0.9, 0.6]),
    }));
    app.update(Msg::Engine(Update::Metrics {
        run: "grpo-0002".into(),
        rows: reward_rows("grpo-0002", &[0.1, 0.3, 0.4]),
    }));
    act(&mut app, &[Action::RunTable]);
    let screen = render(&app);
    assert!(screen.contains("Runs side by side"), "{screen}");
    let reward_line = screen
        .lines()
        .find(|line| line.contains("│reward"))
        .unwrap_or_else(|| panic!("a reward row\n{screen}"));
    let selected = reward_line
        .find("0.400 (0.400)")
        .expect("the selected run's final (best)");
    let pinned = reward_line
        .find("0.600 (0.900)")
        .expect("the pinned run's final (best)");
    assert!(selected < pinned, "the selected run first: {reward_line}");
    act(&mut app, &[Action::RunTable]);
    assert!(!render(&app).contains("Runs side by side"));
}
