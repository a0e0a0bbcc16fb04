//! Update tests for annotation: label keys, undo, accept, notes, the badcase queue, and
//! saved labels flowing back into the views.

use crate::common::*;
use crossterm::event::KeyCode;
use rollscope::engine::{Command, LabelDraft, Update};
use rollscope::store::Summary;
use rollscope::trajectory::{ErrorKind, Label, LabelStatus, Trajectory};
use rollscope::tui::{Action, Msg, Screen};

/// The first synthetic trajectory that failed and carries a suggested label.
fn suggested_index() -> u64 {
    (0..512)
        .find(|&index| {
            trajectory(index)
                .labels
                .iter()
                .any(|label| label.status == LabelStatus::Suggested)
        })
        .unwrap()
}

/// Pretends the engine saved `labels` on trajectory `index`.
fn saved(app: &mut rollscope::tui::App, mut trajectory: Trajectory, labels: Vec<Label>, seq: u64) {
    trajectory.labels = labels.clone();
    let summary = Summary::of(&trajectory, seq);
    app.update(Msg::Engine(Update::LabelsSaved {
        id: trajectory.id,
        labels,
        summary: Box::new(summary),
    }));
}

fn label(step: u32, kind: ErrorKind, status: LabelStatus) -> Label {
    Label {
        step,
        kind,
        status,
        note: None,
        author: None,
        time: 0,
    }
}

#[test]
fn digits_label_the_current_turn_and_toggle() {
    let mut app = listed_app(100, 100);
    act(&mut app, &[Action::Open, Action::Right]);
    let id = trajectory(0).id;
    let commands = app.update(char_key('1'));
    assert_eq!(
        commands,
        vec![Command::SaveLabel {
            id,
            draft: LabelDraft {
                step: 1,
                kind: ErrorKind::Calculation,
                status: LabelStatus::Confirmed,
                note: None
            },
        }]
    );
    for (digit, kind) in [
        ('2', ErrorKind::Reasoning),
        ('3', ErrorKind::Understanding),
        ('4', ErrorKind::Format),
    ] {
        let commands = app.update(char_key(digit));
        assert!(
            matches!(&commands[0], Command::SaveLabel { draft, .. } if draft.kind == kind && draft.step == 1)
        );
    }
    saved(
        &mut app,
        trajectory(0),
        vec![label(1, ErrorKind::Calculation, LabelStatus::Confirmed)],
        0,
    );
    assert_eq!(
        app.tabs
            .rollouts
            .trajectory
            .open
            .as_ref()
            .unwrap()
            .trajectory()
            .labels
            .len(),
        1
    );
    assert_eq!(
        app.tabs.rollouts.list.rows[0].confirmed, 1,
        "the list row shows the new label"
    );
    let commands = app.update(char_key('1'));
    assert_eq!(
        commands,
        vec![Command::RemoveLabels {
            id,
            step: 1,
            kind: Some(ErrorKind::Calculation)
        }]
    );
}

#[test]
fn labels_need_a_turn_and_keymaps_rebind_keys() {
    let mut app = listed_app(100, 100);
    act(&mut app, &[Action::Open]);
    act(&mut app, &[Action::Left]);
    assert!(
        app.update(char_key('1')).is_empty(),
        "the prompt section has no turn to label"
    );
    let mut app = app_with_keymap();
    let tag = list_tag(&app.start());
    app.update(Msg::Engine(Update::Window(rollscope::engine::Window {
        tag,
        start: 0,
        rows: summaries(4),
        matching: Some(4),
        stored: Some(4),
    })));
    assert!(app.update(char_key('x')).is_empty(), "x is bound to quit");
    assert!(app.quit);
}

fn app_with_keymap() -> rollscope::tui::App {
    let keymap = rollscope::tui::keymap::Keymap::from_toml("[keys]\n\"x\" = \"quit\"\n").unwrap();
    let mut config =
        rollscope::tui::AppConfig::new("test", ratatui::layout::Rect::new(0, 0, 100, 30));
    config.keymap = keymap;
    rollscope::tui::App::new(config)
}

#[test]
fn in_the_list_labels_go_to_the_first_low_scored_turn() {
    let failed = (0..100)
        .find(|&index| trajectory(index).passed() == Some(false))
        .unwrap();
    let mut app = listed_app(100, 100);
    let commands = act(&mut app, &vec![Action::Down; failed as usize]);
    let pruned = app.prune(commands);
    answer_preview(&mut app, &pruned);
    let expected = rollscope::tui::annotate::focus_step(&trajectory(failed), false).unwrap() as u32;
    let commands = app.update(char_key('2'));
    assert!(
        matches!(&commands[0], Command::SaveLabel { id, draft } if *id == trajectory(failed).id && draft.step == expected)
    );
    assert_eq!(
        expected, 1,
        "the synthetic failure's wrong calculation is turn 2"
    );
}

#[test]
fn undo_restores_the_labels_before_the_change() {
    let index = suggested_index();
    let original = trajectory(index).labels.clone();
    let mut app = listed_app(512, 512);
    let commands = act(&mut app, &vec![Action::Down; index as usize]);
    let pruned = app.prune(commands);
    answer_preview(&mut app, &pruned);
    act(&mut app, &[Action::Open]);
    assert_eq!(app.screen(), Screen::Trajectory);
    act(&mut app, &[Action::Right]);
    app.update(char_key('3'));
    let commands = app.update(char_key('u'));
    assert_eq!(
        commands,
        vec![Command::SetLabels {
            id: trajectory(index).id,
            labels: original
        }]
    );
    assert!(
        act(&mut app, &[Action::Undo]).is_empty(),
        "nothing left to undo"
    );
}

#[test]
fn accept_confirms_the_suggestion_on_the_turn() {
    let index = suggested_index();
    let suggestion = trajectory(index).labels[0].clone();
    let mut app = listed_app(512, 512);
    let commands = act(&mut app, &vec![Action::Down; index as usize]);
    let pruned = app.prune(commands);
    answer_preview(&mut app, &pruned);
    act(&mut app, &[Action::Open]);
    let commands = app.update(char_key('a'));
    assert!(commands.is_empty(), "turn 1 has no suggestion");
    assert!(
        app.status
            .notice
            .as_ref()
            .unwrap()
            .text
            .contains("no suggested label")
    );
    for _ in 0..suggestion.step {
        act(&mut app, &[Action::Right]);
    }
    let commands = app.update(char_key('a'));
    assert_eq!(
        commands,
        vec![Command::SaveLabel {
            id: trajectory(index).id,
            draft: LabelDraft {
                step: suggestion.step,
                kind: suggestion.kind,
                status: LabelStatus::Confirmed,
                note: None
            },
        }]
    );
}

#[test]
fn notes_attach_to_the_turns_label() {
    let mut app = listed_app(100, 100);
    act(&mut app, &[Action::Open, Action::Right]);
    app.update(char_key('n'));
    type_text(&mut app, "uses 52");
    assert!(
        app.update(key(KeyCode::Enter)).is_empty(),
        "no label to note yet"
    );
    app.pending_note = None;
    saved(
        &mut app,
        trajectory(0),
        vec![label(1, ErrorKind::Calculation, LabelStatus::Confirmed)],
        0,
    );
    app.update(char_key('n'));
    type_text(&mut app, "uses 52");
    let commands = app.update(key(KeyCode::Enter));
    let Command::SetLabels { labels, .. } = &commands[0] else {
        panic!("expected SetLabels")
    };
    assert_eq!(labels[0].note.as_deref(), Some("uses 52"));
}

#[test]
fn brackets_walk_the_badcase_queue_and_skip_labelled_ones() {
    let mut app = listed_app(512, 512);
    let failures: Vec<(usize, rollscope::trajectory::TrajectoryId)> = summaries(512)
        .iter()
        .enumerate()
        .filter(|(_, summary)| summary.is_unlabelled_failure())
        .map(|(index, summary)| (index, summary.id))
        .collect();
    assert!(
        act(&mut app, &[Action::NextBadcase]).is_empty(),
        "no queue yet"
    );
    let tag = app.tabs.rollouts.list.tag;
    app.update(Msg::Engine(Update::Queue {
        tag,
        entries: failures.clone(),
    }));
    let commands = act(&mut app, &[Action::NextBadcase]);
    assert_eq!(app.screen(), Screen::Trajectory);
    assert_eq!(app.tabs.rollouts.list.cursor, failures[0].0);
    assert!(commands.iter().any(
        |command| matches!(command, Command::LoadTrajectory { id, .. } if *id == failures[0].1)
    ));
    assert_eq!(
        app.queue.progress().unwrap(),
        format!("badcase 1 of {} · 0 labelled", failures.len())
    );
    let second = (failures[1].0 as u64, failures[1].1);
    let mut labelled = trajectory(second.0);
    labelled.labels.clear();
    saved(
        &mut app,
        labelled,
        vec![label(1, ErrorKind::Format, LabelStatus::Confirmed)],
        second.0,
    );
    act(&mut app, &[Action::NextBadcase]);
    assert_eq!(
        app.tabs.rollouts.list.cursor, failures[2].0,
        "the labelled one is skipped"
    );
    act(&mut app, &[Action::PrevBadcase]);
    assert_eq!(app.tabs.rollouts.list.cursor, failures[0].0);
    assert!(act(&mut app, &[Action::PrevBadcase]).is_empty());
    assert!(
        app.status
            .notice
            .as_ref()
            .unwrap()
            .text
            .contains("no unlabelled failure before")
    );
}

#[test]
fn the_next_badcase_opens_at_the_turn_the_label_keys_target() {
    let mut app = listed_app(512, 512);
    let (index, id, focus) = summaries(512)
        .iter()
        .enumerate()
        .filter(|(_, summary)| summary.is_unlabelled_failure())
        .find_map(|(index, summary)| {
            let focus = rollscope::tui::annotate::focus_step(&trajectory(index as u64), false)?;
            (focus > 0).then_some((index, summary.id, focus))
        })
        .expect("a failure whose first low-PRM turn is not the first");
    let tag = app.tabs.rollouts.list.tag;
    app.update(Msg::Engine(Update::Queue {
        tag,
        entries: vec![(index, id)],
    }));
    let commands = act(&mut app, &[Action::NextBadcase]);
    answer_preview(&mut app, &commands);
    assert_eq!(app.screen(), Screen::Trajectory);
    assert_eq!(app.tabs.rollouts.trajectory.id(), Some(id));
    assert_eq!(
        app.tabs.rollouts.trajectory.current_step(),
        Some(focus),
        "`]` opens at the first low-PRM turn"
    );
    let saved = act(&mut app, &[Action::LabelCalculation]);
    assert!(
        saved.iter().any(|command| matches!(
            command,
            Command::SaveLabel { draft, .. } if draft.step as usize == focus
        )),
        "the label key targets the turn shown: {saved:?}"
    );
    act(&mut app, &[Action::Back, Action::Open]);
    assert_eq!(
        app.tabs.rollouts.trajectory.current_step(),
        Some(0),
        "enter still opens at the first turn"
    );
}

#[test]
fn a_note_on_an_unlabelled_turn_is_kept_for_its_label() {
    let mut app = listed_app(100, 100);
    act(&mut app, &[Action::Open, Action::Right]);
    app.update(char_key('n'));
    type_text(&mut app, "uses 52 not 25");
    assert!(app.update(key(KeyCode::Enter)).is_empty());
    let screen = render(&app);
    assert!(
        screen.contains("uses 52 not 25"),
        "the note stays in view\n{screen}"
    );
    assert!(
        app.status
            .notice
            .as_ref()
            .is_some_and(|notice| notice.text.contains("1–4")),
        "the message says how the note is saved"
    );
    let commands = act(&mut app, &[Action::LabelCalculation]);
    let Some(Command::SaveLabel { draft, .. }) = commands.first() else {
        panic!("a label is saved: {commands:?}")
    };
    assert_eq!(draft.kind, ErrorKind::Calculation);
    assert_eq!(draft.note.as_deref(), Some("uses 52 not 25"));
    assert!(app.pending_note.is_none(), "the note went on the label");
}
