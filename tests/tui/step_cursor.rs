//! The Runs tab's step cursor: `←`/`→` move along the selected run's steps, the footer prints
//! the values at the cursor, and `enter` opens the rollouts behind that step grouped by GRPO
//! group, the groups without reward spread marked.

use super::update_runs::runs_app;
use crate::common::*;
use rollscope::engine::{Command, Listing, Update, Window};
use rollscope::store::{Filter, SortKey};
use rollscope::trajectory::{MetricsRow, RunKind, RunStatus};
use rollscope::tui::state::step_cursor::StepCursor;
use rollscope::tui::{Action, Msg, Tab};

fn rows(run: &str, rewards: &[f64]) -> Vec<MetricsRow> {
    rewards
        .iter()
        .enumerate()
        .map(|(index, reward)| MetricsRow {
            run: run.into(),
            step: index as u64 + 1,
            time: 0,
            values: [
                ("reward".to_string(), *reward),
                ("kl".to_string(), 0.001 * (index + 1) as f64),
            ]
            .into(),
        })
        .collect()
}

fn listing_of(commands: &[Command]) -> Listing {
    commands
        .iter()
        .find_map(|command| match command {
            Command::List { listing, .. } => Some(listing.clone()),
            _ => None,
        })
        .expect("a List command")
}

#[test]
fn the_cursor_moves_along_steps_prints_their_values_and_enter_opens_the_steps_groups() {
    let mut app = runs_app(vec![run_info("grpo-0001", RunKind::Grpo, RunStatus::Done)]);
    app.update(Msg::Engine(Update::Metrics {
        run: "grpo-0001".into(),
        rows: rows("grpo-0001", &[0.125, 0.25, 0.375, 0.5, 0.625]),
    }));
    let screen = render(&app);
    assert!(screen.contains(" step 5 · reward 0.62"), "{screen}");
    assert!(screen.contains("h/l step  enter rollouts"), "{screen}");
    act(&mut app, &[Action::Left, Action::Left]);
    assert_eq!(app.tabs.runs.cursor, StepCursor::At(3));
    let screen = render(&app);
    assert!(screen.contains("▸ step 3 · reward 0.38"), "{screen}");
    assert!(
        screen.contains("enter: this step's rollouts by group"),
        "{screen}"
    );
    let commands = act(&mut app, &[Action::Open]);
    assert_eq!(app.tab, Tab::Rollouts);
    assert_eq!(
        listing_of(&commands),
        Listing {
            filter: Filter {
                run: Some("grpo-0001".into()),
                step: Some(2),
                ..Filter::default()
            },
            sort: SortKey::Step,
            descending: false,
        },
        "step 3 rolled out with policy version 2, listed group by group"
    );
    let tag = list_tag(&commands);
    let mut step_rows = summaries(8);
    for (index, row) in step_rows.iter_mut().enumerate() {
        row.run = "grpo-0001".into();
        row.step = Some(2);
        row.group = Some(16 + index as u64 / 4);
        row.sample = Some(index as u32 % 4);
        row.reward = Some(if index < 4 { 1.0 } else { index as f64 / 8.0 });
    }
    app.update(Msg::Engine(Update::Window(Window {
        tag,
        start: 0,
        rows: step_rows,
        matching: Some(8),
        stored: Some(100),
    })));
    let groups = app
        .tabs
        .rollouts
        .list
        .step_groups()
        .expect("a whole step is listed");
    assert_eq!(groups.groups, 2);
    assert_eq!(groups.flat.into_iter().collect::<Vec<_>>(), vec![16]);
    let screen = render(&app);
    assert!(
        screen.contains("2 groups, 1 with no reward spread (≡)"),
        "{screen}"
    );
    assert_eq!(
        screen.matches(" ≡").count(),
        4,
        "the flat group's four rows\n{screen}"
    );

    act(&mut app, &[Action::TabRuns, Action::Right, Action::Right]);
    assert_eq!(app.tabs.runs.cursor, StepCursor::At(5));
    act(&mut app, &[Action::Right]);
    assert_eq!(
        app.tabs.runs.cursor,
        StepCursor::Latest,
        "past the newest step the cursor follows new rows again"
    );
    let listing = listing_of(&act(&mut app, &[Action::Open]));
    assert_eq!(
        (listing.filter.step, listing.descending),
        (None, true),
        "without a chosen step enter lists the whole run, newest first"
    );
}

#[test]
fn the_cursor_stays_on_its_step_as_rows_arrive_and_resets_on_another_run() {
    let mut app = runs_app(vec![
        run_info("grpo-0001", RunKind::Grpo, RunStatus::Done),
        run_info("grpo-0002", RunKind::Grpo, RunStatus::Running),
    ]);
    app.update(Msg::Engine(Update::Metrics {
        run: "grpo-0002".into(),
        rows: rows("grpo-0002", &[0.1, 0.2, 0.3]),
    }));
    act(&mut app, &[Action::Left]);
    app.update(Msg::Engine(Update::MetricsAppended {
        run: "grpo-0002".into(),
        rows: rows("grpo-0002", &[0.1, 0.2, 0.3, 0.4]),
    }));
    assert_eq!(app.tabs.runs.cursor, StepCursor::At(2));
    assert!(render(&app).contains("▸ step 2 · reward 0.20"));
    act(&mut app, &[Action::Up]);
    assert_eq!(app.tabs.runs.cursor, StepCursor::Latest);
    act(&mut app, &[Action::Down]);
    app.update(Msg::Engine(Update::Metrics {
        run: "grpo-0002".into(),
        rows: rows("grpo-0002", &[0.1, 0.2, 0.3, 0.4]),
    }));
    act(&mut app, &[Action::Left; 6]);
    assert_eq!(app.tabs.runs.cursor, StepCursor::At(1));
    let listing = listing_of(&act(&mut app, &[Action::Open]));
    assert_eq!(
        listing.filter.step,
        Some(0),
        "the first step holds the cursor: its rollouts are policy version 0's"
    );
}

#[test]
fn a_step_listed_in_part_asks_for_the_whole_step_to_count_its_groups() {
    let mut app = runs_app(vec![run_info("grpo-0001", RunKind::Grpo, RunStatus::Done)]);
    app.update(Msg::Engine(Update::Metrics {
        run: "grpo-0001".into(),
        rows: rows("grpo-0001", &[0.5, 0.5, 0.5]),
    }));
    let commands = act(&mut app, &[Action::Left, Action::Open]);
    let tag = list_tag(&commands);
    let mut step_rows = summaries(300);
    for (index, row) in step_rows.iter_mut().enumerate() {
        row.run = "grpo-0001".into();
        row.step = Some(1);
        row.group = Some(index as u64 / 3);
        row.reward = Some(if index < 3 { 0.0 } else { index as f64 });
    }
    let commands = app.update(Msg::Engine(Update::Window(Window {
        tag,
        start: 0,
        rows: step_rows[..150].to_vec(),
        matching: Some(300),
        stored: Some(1000),
    })));
    assert!(
        commands.contains(&Command::Page {
            tag,
            window: 0..300
        }),
        "the whole step is asked for: {commands:?}"
    );
    assert_eq!(
        app.tabs.rollouts.list.step_groups(),
        None,
        "not counted on part of it"
    );
    app.update(Msg::Engine(Update::Window(Window {
        tag,
        start: 0,
        rows: step_rows,
        matching: Some(300),
        stored: Some(1000),
    })));
    let groups = app.tabs.rollouts.list.step_groups().expect("counted");
    assert_eq!((groups.groups, groups.flat.len()), (100, 1));
}
