//! The view each annotator leaves a session in (tab, filter, sort, cursor, run) is written
//! at quit and is where the next start opens; blind labelling ignores it.

use crate::common::*;
use ratatui::layout::Rect;
use rollscope::engine::{Command, Update, Window};
use rollscope::store::{Outcome, SortKey};
use rollscope::trajectory::{RunKind, RunStatus};
use rollscope::tui::memory::Remembered;
use rollscope::tui::{Action, App, AppConfig, Msg, Tab};

fn window(app: &mut App, commands: &[Command], total: u64) {
    let (tag, window) = commands
        .iter()
        .rev()
        .find_map(|command| match command {
            Command::List { tag, window, .. } => Some((*tag, window.clone())),
            _ => None,
        })
        .expect("a List command");
    let rows = summaries(total);
    let end = window.end.min(rows.len());
    let start = window.start.min(end);
    app.update(Msg::Engine(Update::Window(Window {
        tag,
        start,
        rows: rows[start..end].to_vec(),
        matching: Some(total as usize),
        stored: Some(total as usize),
    })));
}

#[test]
fn the_next_start_opens_on_the_tab_filter_sort_cursor_and_run_left_at_quit() {
    let mut app = app(120, 40);
    let commands = app.start();
    window(&mut app, &commands, 500);
    let commands = act(&mut app, &[Action::Outcome, Action::Sort, Action::Sort]);
    assert_eq!(
        app.tabs.rollouts.list.listing.filter.outcome,
        Some(Outcome::Fail)
    );
    window(&mut app, &commands, 500);
    act(&mut app, &[Action::PageDown; 10]);
    let cursor = app.tabs.rollouts.list.cursor;
    assert!(
        cursor > 100,
        "the cursor is past the first window: {cursor}"
    );
    act(&mut app, &[Action::TabRuns]);
    app.update(Msg::Engine(Update::Runs(vec![
        run_info("grpo-0001", RunKind::Grpo, RunStatus::Done),
        run_info("grpo-0002", RunKind::Grpo, RunStatus::Done),
    ])));
    act(&mut app, &[Action::Up]);
    let left = app.remembered();
    assert_eq!(left.tab, Tab::Runs);
    assert_eq!(left.run.as_deref(), Some("grpo-0001"));

    let dir = tempfile::tempdir().unwrap();
    let path = Remembered::path(dir.path(), Some("ana"));
    assert_eq!(path, dir.path().join("tui").join("ana.json"));
    assert_eq!(
        Remembered::load(&path).unwrap(),
        None,
        "nothing remembered yet"
    );
    left.save(&path).unwrap();
    let remembered = Remembered::load(&path).unwrap().expect("saved");
    assert_eq!(remembered, left);

    let mut config = AppConfig::new("test", Rect::new(0, 0, 120, 40));
    config.remembered = Some(remembered);
    let mut again = App::new(config);
    let commands = again.start();
    assert_eq!(again.tab, Tab::Runs);
    let listed = commands
        .iter()
        .find_map(|command| match command {
            Command::List {
                listing, window, ..
            } => Some((listing.clone(), window.clone())),
            _ => None,
        })
        .expect("the remembered listing");
    assert_eq!(listed.0, app.tabs.rollouts.list.listing);
    assert!(
        listed.1.contains(&cursor),
        "the window holds the cursor's row"
    );
    window(&mut again, &commands, 500);
    assert_eq!(again.tabs.rollouts.list.cursor, cursor);
    assert_eq!(
        again.tabs.rollouts.list.selected().map(|row| row.id),
        Some(summaries(500)[cursor].id)
    );
    again.update(Msg::Engine(Update::Runs(vec![
        run_info("grpo-0001", RunKind::Grpo, RunStatus::Done),
        run_info("grpo-0002", RunKind::Grpo, RunStatus::Done),
    ])));
    assert_eq!(
        again.tabs.runs.selected_run().map(|run| run.id.as_str()),
        Some("grpo-0001")
    );
    assert_ne!(again.tabs.rollouts.list.listing.sort, SortKey::Stored);
}

#[test]
fn a_shrunk_list_keeps_the_cursor_within_it_and_blind_labelling_starts_afresh() {
    let remembered = Remembered {
        tab: Tab::Stats,
        cursor: 450,
        ..Remembered::default()
    };
    let mut config = AppConfig::new("test", Rect::new(0, 0, 120, 40));
    config.remembered = Some(remembered.clone());
    let mut app = App::new(config);
    let commands = app.start();
    window(&mut app, &commands, 30);
    assert_eq!(
        app.tabs.rollouts.list.cursor, 29,
        "the list has 30 rows now"
    );

    let moved = Remembered {
        cursor: 3,
        selected: Some(summaries(30)[7].id),
        ..Remembered::default()
    };
    let mut config = AppConfig::new("test", Rect::new(0, 0, 120, 40));
    config.remembered = Some(moved);
    let mut app = App::new(config);
    let commands = app.start();
    window(&mut app, &commands, 30);
    assert_eq!(
        app.tabs.rollouts.list.cursor, 7,
        "the cursor follows the remembered trajectory to its new row"
    );

    let mut config = AppConfig::new("test", Rect::new(0, 0, 120, 40));
    config.remembered = Some(remembered);
    config.blind = true;
    let mut blind = App::new(config);
    blind.start();
    assert_eq!(blind.tab, Tab::Rollouts);
    assert_eq!(blind.tabs.rollouts.list.cursor, 0);
}

#[test]
fn an_unreadable_remembered_view_names_its_file_and_an_author_cannot_escape_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let path = Remembered::path(dir.path(), Some("../../etc/x y"));
    assert_eq!(path.parent().unwrap(), dir.path().join("tui"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "{ not json").unwrap();
    let error = format!("{:#}", Remembered::load(&path).unwrap_err());
    assert!(error.contains(&path.display().to_string()), "{error}");
}
