//! A prompt keeps every key while it is open: only Esc and Enter close it, Backspace on an
//! empty prompt stays in it, and a search or filter that fails opens again with its text and
//! the whole error, so what was typed never reaches the list's keys.

use crate::common::*;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use proptest::prelude::*;
use rollscope::tui::prompt::PromptKind;
use rollscope::tui::{App, Msg};

/// What the list's keys would change: the tab, the screen, the selected row, the overlays.
fn outside_the_prompt(app: &App) -> String {
    format!(
        "{:?} {:?} {:?} help {} quit {}",
        app.tab,
        app.screen(),
        app.tabs.rollouts.list.selected().map(|row| row.id),
        app.help.is_some(),
        app.quit
    )
}

fn press(app: &mut App, code: KeyCode, modifiers: KeyModifiers) -> Vec<rollscope::engine::Command> {
    app.update(Msg::Key(KeyEvent::new(code, modifiers)))
}

#[test]
fn a_search_typo_stays_in_its_prompt_with_the_whole_error_and_nothing_leaks() {
    let mut app = listed_app(100, 100);
    app.update(Msg::Resize(80, 24));
    let before = outside_the_prompt(&app);
    app.update(char_key('/'));
    let typed = "Final Answer: 359";
    assert!(type_text(&mut app, typed).is_empty());
    let commands = press(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    assert!(
        commands.is_empty(),
        "a query that does not parse runs nothing"
    );
    let prompt = app.prompt.as_ref().expect("the search prompt opens again");
    assert_eq!(
        (prompt.kind, prompt.input.as_str()),
        (PromptKind::Search, typed)
    );
    let error = prompt.error.clone().expect("with the error");
    assert!(error.contains("(use text, role, tool, task)"), "{error}");
    let screen = render(&app);
    let shown: String = screen
        .lines()
        .map(|line| line.trim().trim_start_matches('"').trim_end_matches('"'))
        .flat_map(str::split_whitespace)
        .collect::<Vec<_>>()
        .join(" ");
    let whole: String = error.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        shown.contains(&whole),
        "the whole error is on screen at 80×24:\n{screen}"
    );

    for _ in 0..typed.len() + 3 {
        assert!(press(&mut app, KeyCode::Backspace, KeyModifiers::NONE).is_empty());
        assert!(app.prompt.is_some(), "Backspace never closes the prompt");
    }
    assert_eq!(app.prompt.as_ref().unwrap().input, "");
    assert!(type_text(&mut app, "al Answer: 359\"n1").is_empty());
    let prompt = app.prompt.as_ref().expect("still the search prompt");
    assert_eq!(
        prompt.kind,
        PromptKind::Search,
        "`n` typed no note prompt open"
    );
    assert_eq!(prompt.input, "al Answer: 359\"n1");
    assert_eq!(outside_the_prompt(&app), before);
    press(&mut app, KeyCode::Esc, KeyModifiers::NONE);
    assert!(app.prompt.is_none(), "Esc closes it");
}

#[test]
fn a_filter_that_does_not_parse_opens_again_with_its_text() {
    let mut app = listed_app(100, 100);
    app.update(char_key(':'));
    type_text(&mut app, "filter reward:abc");
    press(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    let prompt = app.prompt.as_ref().expect("the command prompt opens again");
    assert_eq!(prompt.kind, PromptKind::Command);
    assert_eq!(prompt.input, "filter reward:abc");
    assert!(prompt.error.is_some());
    type_text(&mut app, "x");
    assert!(
        app.prompt.as_ref().unwrap().error.is_none(),
        "the next key clears the error"
    );
}

/// Any key but Esc, Enter and ctrl-c (which quits from anywhere), with any modifiers.
fn any_key() -> impl Strategy<Value = (KeyCode, KeyModifiers)> {
    let code = prop_oneof![
        any::<char>().prop_map(KeyCode::Char),
        prop::sample::select(vec![
            '1', '2', '3', '4', 'n', 'q', 'j', 'k', 'g', 'G', '/', ':', '?', 'u', 'a', 'x'
        ])
        .prop_map(KeyCode::Char),
        prop::sample::select(vec![
            KeyCode::Backspace,
            KeyCode::Delete,
            KeyCode::Left,
            KeyCode::Right,
            KeyCode::Up,
            KeyCode::Down,
            KeyCode::Home,
            KeyCode::End,
            KeyCode::PageUp,
            KeyCode::PageDown,
            KeyCode::Tab,
            KeyCode::BackTab,
            KeyCode::Insert,
        ]),
        (1u8..13).prop_map(KeyCode::F),
    ];
    let modifiers = prop::sample::select(vec![
        KeyModifiers::NONE,
        KeyModifiers::SHIFT,
        KeyModifiers::CONTROL,
        KeyModifiers::ALT,
    ]);
    (code, modifiers).prop_filter("ctrl-c quits from anywhere", |(code, modifiers)| {
        !(*code == KeyCode::Char('c') && modifiers.contains(KeyModifiers::CONTROL))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn no_key_typed_into_a_prompt_reaches_the_list(
        lead in prop::sample::select(vec!['/', ':']),
        keys in prop::collection::vec(any_key(), 1..80),
    ) {
        let mut app = listed_app(100, 100);
        let before = outside_the_prompt(&app);
        app.update(char_key(lead));
        let kind = app.prompt.as_ref().map(|prompt| prompt.kind);
        prop_assert!(kind.is_some());
        for (code, modifiers) in keys {
            let commands = press(&mut app, code, modifiers);
            prop_assert!(commands.is_empty(), "{code:?} sent {commands:?}");
            prop_assert_eq!(app.prompt.as_ref().map(|prompt| prompt.kind), kind);
            prop_assert_eq!(outside_the_prompt(&app), before.clone());
        }
        press(&mut app, KeyCode::Esc, KeyModifiers::NONE);
        prop_assert!(app.prompt.is_none());
        prop_assert_eq!(outside_the_prompt(&app), before);
    }
}
