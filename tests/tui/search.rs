//! Full-text search from the TUI against a real engine and store: `/` finds words only a
//! tool result holds, a second `/` replaces the query, `:filter text:` searches too, and the
//! trajectory view marks the hits and jumps between them.

use crate::common::*;
use crossterm::event::KeyCode;
use rollscope::trajectory::TrajectoryId;
use rollscope::tui::Action;
use rollscope::tui::rich::Tone;

/// The id of the trajectory whose tool result says `quokka`.
const SPECIAL: TrajectoryId = TrajectoryId(0x0bad_cafe_0000_0001);

/// A live app over 64 demo rollouts and one whose calculator answered `quokka 42`.
fn live() -> Live {
    let (dir, store) = demo_store(64);
    let mut special = trajectory(5);
    special.id = SPECIAL;
    let result = special
        .messages
        .iter_mut()
        .find(|message| message.role == rollscope::trajectory::Role::Tool)
        .expect("a tool result");
    result.content = "quokka 42".into();
    store.put_trajectories(&[special]).unwrap();
    Live::over(dir, store, 120, 40)
}

/// Types a `/` search (or `:` command) and waits for the list it asks for.
fn submit(live: &mut Live, lead: char, text: &str) {
    live.press(char_key(lead));
    for c in text.chars() {
        live.press(char_key(c));
    }
    live.press(key(KeyCode::Enter));
    let tag = live.app.tabs.rollouts.list.tag;
    live.settle(move |app| {
        let list = &app.tabs.rollouts.list;
        list.tag == tag && list.matching.is_some()
    });
}

#[test]
fn slash_finds_a_word_only_a_tool_result_holds_and_a_second_slash_replaces_it() {
    let mut live = live();
    assert_eq!(live.app.tabs.rollouts.list.matching, Some(65));
    submit(&mut live, '/', "quokka");
    let list = &live.app.tabs.rollouts.list;
    assert_eq!(list.matching, Some(1), "{}", render(&live.app));
    assert_eq!(list.rows[0].id, SPECIAL);
    let screen = render(&live.app);
    assert!(screen.contains(&SPECIAL.short(4)), "{screen}");
    assert!(screen.contains("text:quokka"), "{screen}");

    live.press(char_key('/'));
    let prompt = live.app.prompt.as_ref().expect("the search prompt");
    assert_eq!(
        prompt.input, "quokka",
        "the last search is offered, selected"
    );
    for c in "tool:calculator".chars() {
        live.press(char_key(c));
    }
    live.press(key(KeyCode::Enter));
    let tag = live.app.tabs.rollouts.list.tag;
    live.settle(move |app| {
        app.tabs.rollouts.list.tag == tag && app.tabs.rollouts.list.matching.is_some()
    });
    let listing = &live.app.tabs.rollouts.list.listing;
    assert_eq!(listing.filter.full_text.as_deref(), Some("tool:calculator"));
    assert_eq!(live.app.tabs.rollouts.list.matching, Some(65));

    live.press(char_key('/'));
    for c in "nosuchfield:x".chars() {
        live.press(char_key(c));
    }
    live.press(key(KeyCode::Enter));
    let screen = render(&live.app);
    assert!(screen.contains("no field `nosuchfield`"), "{screen}");
    assert_eq!(
        live.app.tabs.rollouts.list.matching,
        Some(65),
        "a search that does not parse leaves the list as it was"
    );
}

#[test]
fn filter_text_searches_and_the_trajectory_marks_and_jumps_between_hits() {
    let mut live = live();
    submit(&mut live, ':', "filter text:quokka OR \"Final Answer\"");
    assert_eq!(live.app.tabs.rollouts.list.matching, Some(65));
    submit(&mut live, ':', "filter text:quokka");
    assert_eq!(live.app.tabs.rollouts.list.matching, Some(1));
    live.act(&[Action::Open]);
    live.settle(|app| !app.tabs.rollouts.trajectory.hits.is_empty());
    let trajectory = &live.app.tabs.rollouts.trajectory;
    assert_eq!(trajectory.id(), Some(SPECIAL));
    let section = trajectory.section;
    assert_eq!(trajectory.hits, [section], "opened at the only hit");
    let open = trajectory.open.as_ref().expect("open");
    assert!(
        open.sections[section]
            .lines
            .iter()
            .flat_map(|line| &line.pieces)
            .any(|piece| piece.tone == Tone::Hit && piece.text == "quokka"),
        "the word is marked"
    );
    live.act(&[Action::Left, Action::NextHit]);
    assert_eq!(live.app.tabs.rollouts.trajectory.section, section);
    let screen = render(&live.app);
    assert!(screen.contains("search hit 1 of 1"), "{screen}");
    assert!(
        screen.contains("quokka 42") && screen.contains("calculator"),
        "{screen}"
    );
    assert!(
        screen.contains("{/} hit"),
        "the hint names the hit keys: {screen}"
    );
}
