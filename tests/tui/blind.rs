//! Blind labelling (`rollscope tui --blind`): failures in id order, and nothing on screen that
//! tells which run or policy wrote a trajectory, what the process scores said or what the
//! rules suggested; the screens that would are refused.

use crate::common::*;
use ratatui::layout::Rect;
use rollscope::engine::{Command, LoadedTrajectory, Update, Window, demo};
use rollscope::store::{Outcome, SortKey, Summary};
use rollscope::synthetic;
use rollscope::trajectory::{ErrorKind, Label, LabelStatus, Trajectory};
use rollscope::tui::{Action, App, AppConfig, Msg, Screen, Tab};

/// Synthetic trajectory `index` with a suggested reasoning label on its last step.
fn suggested(index: u64) -> Trajectory {
    let mut trajectory = trajectory(index);
    let last = trajectory.steps().len().saturating_sub(1) as u32;
    trajectory.labels.push(Label {
        step: last,
        kind: ErrorKind::Reasoning,
        status: LabelStatus::Suggested,
        note: Some("the first low-scoring step".into()),
        author: Some(rollscope::curate::SUGGESTER.into()),
        time: 1,
    });
    trajectory
}

/// An app (blind or not) listing 30 such trajectories, the first one open.
fn opened(blind: bool) -> (App, Vec<Command>) {
    let mut config = AppConfig::new("test", Rect::new(0, 0, 140, 40));
    config.blind = blind;
    let mut app = App::new(config);
    let start = app.start();
    let tag = list_tag(&start);
    let rows: Vec<Summary> = (0..30)
        .map(|index| Summary::of(&suggested(index), index))
        .collect();
    let commands = app.update(Msg::Engine(Update::Window(Window {
        tag,
        start: 0,
        rows,
        matching: Some(30),
        stored: Some(30),
    })));
    for command in &commands {
        if let Command::LoadTrajectory { tag, id } = command {
            let index = (0..30).find(|&i| suggested(i).id == *id).unwrap();
            app.update(Msg::Engine(Update::Trajectory {
                tag: *tag,
                loaded: Box::new(LoadedTrajectory {
                    trajectory: suggested(index),
                    task: Some(synthetic::task(index, &spec())),
                    spellings: None,
                    parent: None,
                    tree: Vec::new(),
                }),
            }));
        }
    }
    (app, start)
}

#[test]
fn blind_labelling_lists_failures_in_id_order() {
    let (_, start) = opened(true);
    let Some(Command::List { listing, .. }) = start.first() else {
        panic!("the first command lists: {start:?}");
    };
    assert_eq!(listing.filter.outcome, Some(Outcome::Fail));
    assert_eq!(listing.sort, SortKey::Id);
    let (_, seeing) = opened(false);
    let Some(Command::List { listing, .. }) = seeing.first() else {
        panic!("the first command lists");
    };
    assert_eq!(listing.filter.outcome, None);
    assert_eq!(listing.sort, SortKey::Stored);
}

#[test]
fn blind_screens_show_no_run_policy_process_score_or_suggestion() {
    let (seeing, _) = opened(false);
    let screen = render(&seeing);
    assert!(screen.contains("reasoning?"), "{screen}");
    assert!(screen.contains(" PRM "), "{screen}");
    let run_step = demo::DEMO_RUN.rsplit('-').next().unwrap();
    assert!(screen.contains(&format!("{run_step}·")), "{screen}");

    let (mut blind, _) = opened(true);
    let screen = render(&blind);
    assert!(!screen.contains("reasoning?"), "{screen}");
    assert!(!screen.contains(" PRM "), "{screen}");
    assert!(!screen.contains(&format!("{run_step}·")), "{screen}");
    assert!(!screen.contains("sample "), "{screen}");

    act(&mut blind, &[Action::Open]);
    assert_eq!(blind.screen(), Screen::Trajectory);
    let screen = render(&blind);
    assert!(screen.contains("blind"), "{screen}");
    assert!(!screen.contains(demo::DEMO_RUN), "{screen}");
    assert!(!screen.contains("PRM "), "{screen}");
    assert!(!screen.contains("reasoning?"), "{screen}");
    assert!(!screen.contains("advantage"), "{screen}");
    let open = blind.tabs.rollouts.trajectory.open.as_ref().unwrap();
    assert_eq!(
        open.trajectory().labels.len(),
        1,
        "the suggestion is kept, only not shown"
    );
}

#[test]
fn blind_labelling_refuses_the_screens_that_would_tell() {
    let (mut app, _) = opened(true);
    for action in [
        Action::TabRuns,
        Action::TabStats,
        Action::TabCurate,
        Action::NextTab,
    ] {
        assert!(act(&mut app, &[action]).is_empty(), "{action:?}");
        assert_eq!(app.tab, Tab::Rollouts);
        let notice = app.status.notice.take().expect("a notice");
        assert!(notice.text.contains("--blind"), "{}", notice.text);
    }
    act(&mut app, &[Action::Open]);
    for action in [Action::Group, Action::Tokens, Action::Accept] {
        assert!(act(&mut app, &[action]).is_empty(), "{action:?}");
        assert_eq!(app.screen(), Screen::Trajectory);
        assert!(app.status.notice.take().is_some(), "{action:?}");
    }
    let commands = act(&mut app, &[Action::LabelCalculation]);
    assert!(
        commands
            .iter()
            .any(|command| matches!(command, Command::SaveLabel { .. })),
        "labelling works: {commands:?}"
    );
    let mut saved = suggested(0);
    saved.labels.push(Label {
        step: 0,
        kind: ErrorKind::Calculation,
        status: LabelStatus::Confirmed,
        note: None,
        author: Some("ana".into()),
        time: 2,
    });
    app.update(Msg::Engine(Update::LabelsSaved {
        id: saved.id,
        labels: saved.labels.clone(),
        summary: Box::new(Summary::of(&saved, 0)),
    }));
    let notice = app.status.notice.take().expect("saved").text;
    assert!(notice.contains("calculation"), "{notice}");
    assert!(
        !notice.contains("reasoning"),
        "the suggestion stays hidden: {notice}"
    );
}
