//! Update tests for moving around: tabs, the list, the prompt, filters, sorting, screens.

use crate::common::*;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rollscope::engine::{Command, Update};
use rollscope::store::{Outcome, SortKey};
use rollscope::tui::{Action, App, Msg, Screen, Tab};

#[test]
fn start_lists_the_first_page_and_loads_runs() {
    let mut app = app(120, 40);
    let commands = app.start();
    match &commands[0] {
        Command::List {
            listing, window, ..
        } => {
            assert!(listing.filter.is_empty());
            assert_eq!(window.start, 0);
            assert!(
                window.end > app.tabs.rollouts.list.height,
                "fetches beyond the visible rows"
            );
        }
        other => panic!("expected List, got {other:?}"),
    }
    assert_eq!(commands[1], Command::LoadRuns);
}

#[test]
fn windows_of_older_listings_are_dropped() {
    let mut app = listed_app(1000, 200);
    let old = app.tabs.rollouts.list.tag;
    act(&mut app, &[Action::Outcome]);
    assert_ne!(app.tabs.rollouts.list.tag, old);
    let commands = app.update(Msg::Engine(Update::Window(rollscope::engine::Window {
        tag: old,
        start: 0,
        rows: summaries(3),
        matching: Some(3),
        stored: Some(3),
    })));
    assert!(commands.is_empty());
    assert!(
        app.tabs.rollouts.list.rows.is_empty(),
        "the stale window was ignored"
    );
}

#[test]
fn moving_down_previews_and_pages_past_the_loaded_rows() {
    let mut app = listed_app(1000, 200);
    assert_eq!(app.tabs.rollouts.list.cursor, 0);
    let commands = act(&mut app, &[Action::Down]);
    assert_eq!(app.tabs.rollouts.list.cursor, 1);
    assert!(
        matches!(commands.as_slice(), [Command::LoadTrajectory { id, .. }] if *id == trajectory(1).id)
    );
    act(&mut app, &[Action::Up, Action::Up]);
    assert_eq!(
        app.tabs.rollouts.list.cursor, 0,
        "the cursor stops at the top"
    );
    let mut commands = Vec::new();
    for _ in 0..30 {
        commands.extend(act(&mut app, &[Action::PageDown]));
        if commands
            .iter()
            .any(|command| matches!(command, Command::Page { .. }))
        {
            break;
        }
    }
    assert!(
        app.tabs.rollouts.list.cursor >= 200 - app.tabs.rollouts.list.height,
        "no fetch while the rows are loaded"
    );
    let page = commands.iter().find_map(|command| match command {
        Command::Page { window, .. } => Some(window.clone()),
        _ => None,
    });
    let window = page.expect("a page request once the view leaves the loaded rows");
    assert!(window.contains(&app.tabs.rollouts.list.cursor));
    assert_eq!(app.tabs.rollouts.list.requested, Some(window));
    act(&mut app, &[Action::Bottom]);
    assert_eq!(app.tabs.rollouts.list.cursor, 999);
    act(&mut app, &[Action::Top]);
    assert_eq!(
        (app.tabs.rollouts.list.cursor, app.tabs.rollouts.list.top),
        (0, 0)
    );
}

#[test]
fn prune_keeps_only_the_last_preview_load() {
    let mut app = listed_app(1000, 200);
    let commands = act(&mut app, &[Action::Down, Action::Down, Action::Down]);
    let loads = |commands: &[Command]| {
        commands
            .iter()
            .filter(|command| matches!(command, Command::LoadTrajectory { .. }))
            .count()
    };
    assert_eq!(loads(&commands), 3);
    let pruned = app.prune(commands);
    assert_eq!(loads(&pruned), 1);
    assert!(matches!(&pruned[0], Command::LoadTrajectory { id, .. } if *id == trajectory(3).id));
}

#[test]
fn mouse_wheel_moves_three_rows_a_notch_and_resize_refits() {
    let mut app = listed_app(1000, 200);
    app.update(Msg::Scroll(1));
    assert_eq!(app.tabs.rollouts.list.cursor, 3);
    app.update(Msg::Scroll(-1));
    assert_eq!(app.tabs.rollouts.list.cursor, 0);
    let before = app.tabs.rollouts.list.height;
    app.update(Msg::Resize(200, 80));
    assert!(app.tabs.rollouts.list.height > before);
    assert_eq!(app.viewport.height, 80);
}

#[test]
fn tabs_cycle_and_load_what_they_show() {
    let mut app = listed_app(100, 100);
    assert_eq!(act(&mut app, &[Action::NextTab]), vec![Command::LoadRuns]);
    assert_eq!(app.tab, Tab::Runs);
    let commands = act(&mut app, &[Action::NextTab]);
    assert_eq!(app.tab, Tab::Stats);
    assert!(matches!(
        commands.as_slice(),
        [Command::LoadOverview { .. }]
    ));
    assert!(
        act(&mut app, &[Action::TabCurate]).is_empty(),
        "the overview is already on its way"
    );
    assert_eq!(app.tab, Tab::Curate);
    act(
        &mut app,
        &[Action::PrevTab, Action::PrevTab, Action::PrevTab],
    );
    assert_eq!(app.tab, Tab::Rollouts);
    app.update(key(KeyCode::F(2)));
    assert_eq!(app.tab, Tab::Runs);
    app.update(Msg::Key(KeyEvent::new(
        KeyCode::BackTab,
        KeyModifiers::SHIFT,
    )));
    assert_eq!(app.tab, Tab::Rollouts);
}

#[test]
fn help_scrolls_to_its_last_row_at_80x24_and_any_other_key_closes_it() {
    let mut app = app(80, 24);
    let key = |code| Msg::Key(KeyEvent::new(code, KeyModifiers::NONE));
    app.update(char_key('?'));
    let top = render(&app);
    assert!(top.contains("next row") && top.contains("scroll"), "{top}");
    assert!(!top.contains("quit  "), "the last rows are below: {top}");
    app.update(key(KeyCode::End));
    let bottom = render(&app);
    assert!(
        bottom.contains(":help") && bottom.contains(":q"),
        "{bottom}"
    );
    assert!(!bottom.contains("next row"), "{bottom}");
    app.update(key(KeyCode::Down));
    assert_eq!(render(&app), bottom, "never past the last page");
    app.update(key(KeyCode::PageUp));
    app.update(key(KeyCode::Home));
    assert_eq!(render(&app), top);
    app.update(char_key('x'));
    assert!(app.help.is_none(), "any other key closes help");
    assert_eq!(app.tab, Tab::Rollouts);
}

#[test]
fn quit_help_and_ctrl_c() {
    let mut app = listed_app(10, 10);
    app.update(char_key('?'));
    assert!(app.help.is_some());
    app.update(char_key('q'));
    assert!(
        app.help.is_none() && !app.quit,
        "a key closes help without acting"
    );
    app.update(char_key('q'));
    assert!(app.quit);
    let mut app = listed_app(10, 10);
    app.update(char_key(':'));
    app.update(Msg::Key(KeyEvent::new(
        KeyCode::Char('c'),
        KeyModifiers::CONTROL,
    )));
    assert!(app.quit, "ctrl-c quits even from the prompt");
}

#[test]
fn search_prompt_relists_with_text() {
    let mut app = listed_app(100, 100);
    app.update(char_key('/'));
    assert!(app.prompt.is_some());
    type_text(&mut app, "apples");
    app.update(key(KeyCode::Backspace));
    let commands = app.update(key(KeyCode::Enter));
    assert!(app.prompt.is_none());
    match commands.as_slice() {
        [Command::List { listing, .. }] => {
            assert_eq!(listing.filter.full_text.as_deref(), Some("apple"))
        }
        other => panic!("expected a List, got {other:?}"),
    }
    app.update(char_key('/'));
    app.update(key(KeyCode::Esc));
    assert!(app.prompt.is_none(), "esc cancels");
}

#[test]
fn a_second_search_replaces_the_recalled_query_unless_it_is_edited() {
    let search = |app: &mut App, keys: &[Msg]| -> Option<String> {
        app.update(char_key('/'));
        for key in keys {
            app.update(key.clone());
        }
        let commands = app.update(key(KeyCode::Enter));
        match commands.as_slice() {
            [Command::List { listing, .. }] => listing.filter.full_text.clone(),
            other => panic!("expected a List, got {other:?}"),
        }
    };
    let typed = |text: &str| text.chars().map(char_key).collect::<Vec<_>>();
    let mut app = listed_app(100, 100);
    assert_eq!(
        search(&mut app, &typed("oranges")).as_deref(),
        Some("oranges")
    );
    app.update(char_key('/'));
    assert_eq!(
        app.prompt.as_ref().map(|p| p.input.as_str()),
        Some("oranges")
    );
    assert!(
        render(&app).contains("/oranges"),
        "the last query is recalled"
    );
    app.update(key(KeyCode::Esc));
    assert_eq!(
        search(&mut app, &typed("marbles")).as_deref(),
        Some("marbles")
    );
    let mut appended = vec![key(KeyCode::End)];
    appended.extend(typed(" red"));
    assert_eq!(search(&mut app, &appended).as_deref(), Some("marbles red"));
    assert_eq!(
        search(&mut app, &[key(KeyCode::Backspace)]),
        None,
        "cleared"
    );
}

#[test]
fn command_prompt_filters_sorts_themes_and_quits() {
    let mut app = listed_app(100, 100);
    app.update(char_key(':'));
    type_text(&mut app, "filter fail run:grpo-0001 label:calc");
    let commands = app.update(key(KeyCode::Enter));
    let Command::List { listing, .. } = &commands[0] else {
        panic!("expected a List")
    };
    assert_eq!(listing.filter.outcome, Some(Outcome::Fail));
    assert_eq!(listing.filter.run.as_deref(), Some("grpo-0001"));
    app.update(char_key(':'));
    type_text(&mut app, "sort reward desc");
    let commands = app.update(key(KeyCode::Enter));
    let Command::List { listing, .. } = &commands[0] else {
        panic!("expected a List")
    };
    assert_eq!((listing.sort, listing.descending), (SortKey::Reward, true));
    assert_eq!(
        listing.filter.outcome,
        Some(Outcome::Fail),
        "sorting keeps the filter"
    );
    app.update(char_key(':'));
    type_text(&mut app, "theme light");
    app.update(key(KeyCode::Enter));
    assert_eq!(app.theme.name, "light");
    app.update(char_key(':'));
    type_text(&mut app, "theme nope");
    app.update(key(KeyCode::Enter));
    assert!(
        app.status
            .notice
            .as_ref()
            .is_some_and(|notice| notice.error)
    );
    app.update(char_key(':'));
    type_text(&mut app, "filter step:x");
    assert!(app.update(key(KeyCode::Enter)).is_empty());
    let prompt = app
        .prompt
        .as_ref()
        .expect("the filter's prompt opens again");
    assert_eq!(prompt.input, "filter step:x");
    assert!(prompt.error.as_ref().unwrap().contains("whole number"));
    app.update(key(KeyCode::Esc));
    app.update(char_key(':'));
    type_text(&mut app, "q");
    app.update(key(KeyCode::Enter));
    assert!(app.quit);
}

#[test]
fn open_by_id_goes_through_locate() {
    let mut app = listed_app(100, 100);
    app.update(char_key(':'));
    type_text(&mut app, "open 1f3a");
    let commands = app.update(key(KeyCode::Enter));
    let Command::Locate { tag, prefix, .. } = &commands[0] else {
        panic!("expected Locate")
    };
    assert_eq!(prefix, "1f3a");
    let id = trajectory(5).id;
    let commands = app.update(Msg::Engine(Update::Located {
        tag: *tag,
        id,
        index: Some(5),
    }));
    assert_eq!(app.screen(), Screen::Trajectory);
    assert!(
        matches!(commands.as_slice(), [Command::LoadTrajectory { id: loaded, .. }] if *loaded == id)
    );
    answer_preview(&mut app, &commands);
    assert_eq!(app.tabs.rollouts.trajectory.id(), Some(id));

    app.update(char_key(':'));
    type_text(&mut app, "goto 1f3a");
    let commands = app.update(key(KeyCode::Enter));
    let Command::Locate { tag, .. } = &commands[0] else {
        panic!("expected Locate")
    };
    app.update(Msg::Engine(Update::Located {
        tag: *tag,
        id,
        index: Some(42),
    }));
    assert_eq!(
        (app.screen(), app.tabs.rollouts.list.cursor),
        (Screen::List, 42)
    );
}

#[test]
fn sort_reverse_outcome_and_unlabelled_relist() {
    let mut app = listed_app(100, 100);
    let listing = |commands: &[Command]| match &commands[0] {
        Command::List { listing, .. } => listing.clone(),
        other => panic!("expected List, got {other:?}"),
    };
    let sorted = listing(&act(&mut app, &[Action::Sort]));
    assert_eq!((sorted.sort, sorted.descending), (SortKey::Reward, true));
    let reversed = listing(&act(&mut app, &[Action::Reverse]));
    assert!(!reversed.descending);
    assert_eq!(
        listing(&act(&mut app, &[Action::Outcome])).filter.outcome,
        Some(Outcome::Fail)
    );
    assert_eq!(
        listing(&act(&mut app, &[Action::Outcome])).filter.outcome,
        Some(Outcome::Pass)
    );
    assert_eq!(
        listing(&act(&mut app, &[Action::Outcome])).filter.outcome,
        None
    );
    assert!(
        listing(&act(&mut app, &[Action::Unlabelled]))
            .filter
            .unlabelled_failures
    );
    assert!(matches!(
        act(&mut app, &[Action::Refresh]).as_slice(),
        [Command::List { .. }]
    ));
}
