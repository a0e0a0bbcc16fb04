//! Update tests for the screens: trajectory turns, the token view, groups, runs, stats,
//! and engine failures.

use crate::common::*;
use rollscope::engine::{Activity, Command, GroupKey, LoadedGroup, Update};
use rollscope::trajectory::MetricsRow;
use rollscope::tui::{Action, Msg, Screen, Tab};
use std::collections::BTreeMap;

#[test]
fn enter_opens_from_the_preview_without_a_load_and_turns_step() {
    let mut app = listed_app(100, 100);
    let commands = act(&mut app, &[Action::Open]);
    assert!(commands.is_empty(), "the preview already holds it");
    assert_eq!(app.screen(), Screen::Trajectory);
    // One turn per pane: the scrolling below is the turn's own.
    act(&mut app, &[Action::Transcript]);
    let open = app.tabs.rollouts.trajectory.open.as_ref().unwrap();
    let steps = open.trajectory().steps().len();
    assert_eq!(
        app.tabs.rollouts.trajectory.current_step(),
        Some(0),
        "opens at the first turn"
    );
    act(&mut app, &[Action::Right]);
    assert_eq!(app.tabs.rollouts.trajectory.current_step(), Some(1));
    // Scrolling stops where the last page shows full: a turn that fits the pane stays put.
    let page = rollscope::tui::layout::pane_rows(app.viewport);
    let last_top = app.tabs.rollouts.trajectory.rows.len().saturating_sub(page);
    act(&mut app, &[Action::Down, Action::Down, Action::Up]);
    assert_eq!(app.tabs.rollouts.trajectory.scroll, 1.min(last_top));
    act(&mut app, &[Action::Bottom]);
    assert_eq!(
        app.tabs.rollouts.trajectory.scroll, last_top,
        "End: the last page, full"
    );
    act(&mut app, &[Action::Top]);
    assert_eq!(app.tabs.rollouts.trajectory.current_step(), Some(1));
    for _ in 0..20 {
        act(&mut app, &[Action::Right]);
    }
    assert_eq!(
        app.tabs.rollouts.trajectory.section,
        steps + 1,
        "stops at the outcome"
    );
    assert_eq!(app.tabs.rollouts.trajectory.current_step(), None);
    for _ in 0..30 {
        act(&mut app, &[Action::Left]);
    }
    assert_eq!(
        app.tabs.rollouts.trajectory.section, 0,
        "the prompt comes first"
    );
    act(&mut app, &[Action::Back]);
    assert_eq!(app.screen(), Screen::List);
}

#[test]
fn token_view_flows_tokens_moves_by_token_and_line_and_switches_heat() {
    let mut app = listed_app(100, 100);
    act(&mut app, &[Action::Open, Action::Tokens]);
    let cursor = app
        .tabs
        .rollouts
        .trajectory
        .tokens
        .expect("token view open (row 0 has a trace)");
    assert_eq!(cursor.index, 0);
    let layout = app.tabs.rollouts.trajectory.token_layout.clone();
    assert_eq!(layout.len(), 64, "every token laid out");
    assert!(layout.starts.len() > 1, "the tokens flow over lines");
    act(&mut app, &[Action::Right, Action::Right, Action::Left]);
    assert_eq!(app.tabs.rollouts.trajectory.tokens.unwrap().index, 1);
    act(&mut app, &[Action::Down]);
    let below = app.tabs.rollouts.trajectory.tokens.unwrap().index;
    assert_eq!(layout.line_of(below), 1, "down goes to the next line");
    assert_eq!(below, layout.moved(1, 1), "under the token's column");
    act(&mut app, &[Action::Up]);
    assert_eq!(
        app.tabs.rollouts.trajectory.tokens.unwrap().index,
        layout.moved(below, -1)
    );
    act(&mut app, &[Action::Bottom]);
    assert_eq!(app.tabs.rollouts.trajectory.tokens.unwrap().index, 63);
    act(&mut app, &[Action::Entropy]);
    assert_eq!(
        app.tabs.rollouts.trajectory.tokens.unwrap().heat,
        rollscope::tui::state::trajectory::Heat::Entropy
    );
    act(&mut app, &[Action::Back]);
    assert!(
        app.tabs.rollouts.trajectory.tokens.is_none(),
        "esc leaves the token view first"
    );
    assert_eq!(app.screen(), Screen::Trajectory);
    act(&mut app, &[Action::Back]);
    let commands = act(&mut app, &[Action::Down, Action::Open]);
    answer_preview(&mut app, &commands);
    act(&mut app, &[Action::Tokens]);
    assert!(
        app.tabs.rollouts.trajectory.tokens.is_none(),
        "row 1 has no trace"
    );
    assert!(
        app.status
            .notice
            .as_ref()
            .unwrap()
            .text
            .contains("no token trace")
    );
}

fn group_of(index: u64) -> LoadedGroup {
    let first = index / 8 * 8;
    let members = (first..first + 8).map(trajectory).collect();
    LoadedGroup {
        key: GroupKey::Grpo {
            run: "grpo-0001".into(),
            step: trajectory(index).policy_version.unwrap(),
            group: index / 8,
        },
        members,
        task: Some(rollscope::synthetic::task(index, &spec())),
    }
}

#[test]
fn group_view_selects_pins_and_diffs() {
    let mut app = listed_app(100, 100);
    let commands = act(&mut app, &[Action::Down, Action::Down, Action::Group]);
    let Some(Command::LoadGroup { tag, key }) = commands.last() else {
        panic!("expected LoadGroup")
    };
    assert!(matches!(key, GroupKey::Grpo { group: 0, .. }), "{key:?}");
    assert_eq!(app.screen(), Screen::Group);
    app.update(Msg::Engine(Update::Group {
        tag: *tag,
        group: Box::new(group_of(2)),
    }));
    assert_eq!(
        app.tabs.rollouts.group.selected, 2,
        "the selected row's sample is selected"
    );
    assert!(!app.tabs.rollouts.group.diff.is_empty());
    act(&mut app, &[Action::Pin, Action::Down]);
    assert_eq!(
        (
            app.tabs.rollouts.group.pinned,
            app.tabs.rollouts.group.selected
        ),
        (2, 3)
    );
    act(&mut app, &[Action::Reference]);
    assert!(app.tabs.rollouts.group.reference);
    assert!(
        app.tabs
            .rollouts
            .group
            .diff
            .iter()
            .any(|line| line[0].text.starts_with("- ")),
        "the reference's lines show as removed"
    );
    let commands = act(&mut app, &[Action::Open]);
    assert_eq!(app.screen(), Screen::Trajectory);
    assert!(
        matches!(commands.as_slice(), [Command::LoadTrajectory { id, .. }] if *id == trajectory(3).id)
    );
    act(&mut app, &[Action::Back, Action::Back]);
    assert_eq!(app.screen(), Screen::List);
}

#[test]
fn a_trajectory_outside_a_grpo_group_opens_the_attempts_at_its_task() {
    let mut app = listed_app(100, 100);
    let mut loaded = group_of(2);
    let task = loaded.task.as_ref().unwrap().id.clone();
    let mut row = loaded.members[2].clone();
    (row.run, row.group) = (None, None);
    let mut window = summaries(1);
    window[0] = rollscope::store::Summary::of(&row, 0);
    let tag = list_tag(&app.update(Msg::Action(Action::Refresh)));
    app.update(Msg::Engine(Update::Window(rollscope::engine::Window {
        tag,
        start: 0,
        rows: window,
        matching: Some(1),
        stored: Some(1),
    })));
    let commands = act(&mut app, &[Action::Group]);
    let Some(Command::LoadGroup { tag, key }) = commands.last() else {
        panic!("expected LoadGroup: {commands:?}")
    };
    assert_eq!(key, &GroupKey::Task { task: task.clone() });
    for (index, member) in loaded.members.iter_mut().enumerate() {
        member.sample = Some(0);
        member.reward = Some(rollscope::trajectory::Reward::scalar(if index < 3 {
            1.0
        } else {
            0.0
        }));
    }
    loaded.key = key.clone();
    app.update(Msg::Engine(Update::Group {
        tag: *tag,
        group: Box::new(loaded),
    }));
    let screen = render(&app);
    assert!(
        screen.contains(&format!("8 attempts at {task}")),
        "{screen}"
    );
    assert!(screen.contains("3 of 8 pass"), "{screen}");
    assert!(!screen.contains("zero variance"), "{screen}");
    assert!(
        screen.contains("diff  s1 ⇄ s"),
        "attempts numbered by place: {screen}"
    );
}

#[test]
fn runs_tab_loads_metrics_and_follows_live_rows() {
    let mut app = listed_app(100, 100);
    let run = |id: &str| rollscope::trajectory::RunInfo {
        id: id.into(),
        kind: rollscope::trajectory::RunKind::Grpo,
        status: rollscope::trajectory::RunStatus::Running,
        config: Default::default(),
        seed: 1,
        model: "m".into(),
        code_version: "0".into(),
        parent: None,
        created_at: 0,
        step: 1,
        total_steps: 10,
        note: None,
        process: None,
        activity: None,
        stage: None,
    };
    let row = |step: u64, reward: f64| MetricsRow {
        run: "grpo-0002".into(),
        step,
        time: 0,
        values: BTreeMap::from([("reward".to_string(), reward)]),
    };
    act(&mut app, &[Action::TabRuns]);
    let commands = app.update(Msg::Engine(Update::Runs(vec![
        run("grpo-0001"),
        run("grpo-0002"),
    ])));
    assert_eq!(
        commands,
        vec![Command::LoadMetrics {
            run: "grpo-0002".into()
        }],
        "the newest run is selected"
    );
    app.update(Msg::Engine(Update::Metrics {
        run: "grpo-0002".into(),
        rows: vec![row(0, 0.1), row(1, 0.2)],
    }));
    app.update(Msg::Engine(Update::MetricsAppended {
        run: "grpo-0002".into(),
        rows: vec![row(2, 0.4)],
    }));
    app.update(Msg::Engine(Update::MetricsAppended {
        run: "grpo-0002".into(),
        rows: vec![row(1, 0.3)],
    }));
    let steps: Vec<(u64, f64)> = app
        .tabs
        .runs
        .rows
        .iter()
        .map(|row| (row.step, row.get("reward").unwrap()))
        .collect();
    assert_eq!(
        steps,
        vec![(0, 0.1), (1, 0.3), (2, 0.4)],
        "a row for a held step replaces it"
    );
    assert_eq!(
        app.tabs.runs.runs[1].step, 2,
        "the run's step follows its newest row"
    );
    app.update(Msg::Engine(Update::MetricsAppended {
        run: "grpo-0001".into(),
        rows: vec![row(7, 1.0)],
    }));
    assert_eq!(
        app.tabs.runs.rows.len(),
        3,
        "rows of another run are not mixed in"
    );
    act(&mut app, &[Action::Smoothing]);
    assert!(app.tabs.runs.smoothing);
    assert_eq!(
        act(&mut app, &[Action::Up]),
        vec![Command::LoadMetrics {
            run: "grpo-0001".into()
        }]
    );
    let commands = act(&mut app, &[Action::Open]);
    assert_eq!(app.tab, Tab::Rollouts);
    let Command::List { listing, .. } = &commands[0] else {
        panic!("expected List")
    };
    assert_eq!(listing.filter.run.as_deref(), Some("grpo-0001"));
}

#[test]
fn engine_failures_show_and_clear_pending_loads() {
    let mut app = listed_app(100, 100);
    let commands = act(&mut app, &[Action::Down, Action::Open]);
    let tag = commands
        .iter()
        .rev()
        .find_map(|command| command.tag())
        .unwrap();
    assert!(app.tabs.rollouts.trajectory.loading.is_some());
    app.update(Msg::Engine(Update::Failed {
        tag: Some(tag),
        during: Activity::LoadingTrajectory,
        message: "gone".into(),
    }));
    assert!(app.tabs.rollouts.trajectory.loading.is_none());
    let notice = app.status.notice.clone().unwrap();
    assert!(notice.error && notice.text.contains("gone"));
}

#[test]
fn stats_scroll_over_versions() {
    let mut app = listed_app(100, 100);
    act(&mut app, &[Action::TabStats]);
    let overview = rollscope::engine::Overview::of(&summaries(512));
    assert_eq!(overview.analysis.versions.len(), 64);
    app.update(Msg::Engine(Update::Overview(Box::new(overview))));
    act(&mut app, &[Action::Down, Action::Down]);
    assert_eq!(app.tabs.stats.scroll, 2);
    act(&mut app, &[Action::Bottom]);
    assert_eq!(app.tabs.stats.scroll, 63);
    assert!(matches!(
        act(&mut app, &[Action::Refresh]).as_slice(),
        [Command::LoadOverview { .. }]
    ));
}
