//! The `:disagree` queue: the steps where annotators differ, opened one by one at their step
//! with each author's kinds, walked with `]` and `[`, left with `:disagree` again.

use crate::common::*;
use crossterm::event::KeyCode;
use rollscope::curate::agreement::Disagreement;
use rollscope::engine::{Command, Update};
use rollscope::trajectory::ErrorKind;
use rollscope::tui::{App, Msg};
use std::collections::BTreeMap;

fn notice(app: &App) -> String {
    app.status
        .notice
        .as_ref()
        .map_or_else(String::new, |notice| notice.text.clone())
}

fn command(app: &mut App, text: &str) -> Vec<Command> {
    let mut commands = type_text(app, text);
    commands.extend(app.update(key(KeyCode::Enter)));
    commands
}

fn disagreement(index: u64, step: u32, first: &[ErrorKind]) -> Disagreement {
    Disagreement {
        trajectory: trajectory(index).id,
        step,
        kinds: BTreeMap::from([
            ("alice".to_string(), first.to_vec()),
            ("bob".to_string(), Vec::new()),
        ]),
    }
}

#[test]
fn disagree_opens_each_step_where_authors_differ_and_brackets_walk_them() {
    let mut app = listed_app(8, 8);
    let asked = command(&mut app, ":disagree");
    assert!(
        matches!(asked.as_slice(), [Command::FindDisagreements(filter)] if *filter == app.tabs.rollouts.list.listing.filter),
        "{asked:?}"
    );
    let steps = vec![
        disagreement(2, 1, &[ErrorKind::Calculation]),
        disagreement(3, 0, &[ErrorKind::Understanding, ErrorKind::Format]),
    ];
    let opened = app.update(Msg::Engine(Update::Disagreements(steps)));
    answer_preview(&mut app, &opened);
    assert_eq!(app.tabs.rollouts.trajectory.id(), Some(trajectory(2).id));
    assert_eq!(
        app.tabs.rollouts.trajectory.current_step(),
        Some(1),
        "at the step they differ on"
    );
    let said = notice(&app);
    assert!(
        said.contains("disagreement 1 of 2") && said.contains("alice: calculation · bob: no error"),
        "{said}"
    );

    let next = app.update(char_key(']'));
    answer_preview(&mut app, &next);
    assert_eq!(app.tabs.rollouts.trajectory.id(), Some(trajectory(3).id));
    assert_eq!(app.tabs.rollouts.trajectory.current_step(), Some(0));
    assert!(
        notice(&app).contains("understanding+format"),
        "{}",
        notice(&app)
    );
    assert!(app.update(char_key(']')).is_empty());
    assert!(notice(&app).contains("the last step"), "{}", notice(&app));
    let back = app.update(char_key('['));
    answer_preview(&mut app, &back);
    assert_eq!(app.tabs.rollouts.trajectory.id(), Some(trajectory(2).id));

    assert!(command(&mut app, ":disagree").is_empty());
    assert!(notice(&app).contains("left the disagreement queue"));
    assert!(app.disagree.is_none());
    app.update(Msg::Engine(Update::Disagreements(Vec::new())));
    assert!(
        notice(&app).contains("no step where annotators differ"),
        "{}",
        notice(&app)
    );
}
