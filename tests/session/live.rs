//! Live: what one process writes reaches another's engine as a change, the TUI asks for what
//! changed again (its cursor kept), and a store written before sessions were shared opens
//! through the server with every label.

use super::common::{cli, connect, demo, failures, session, stdout};
use crate::copy_dir::copy_dir;
use ratatui::layout::Rect;
use rollscope::engine::{Command, Engine, EngineConfig, Update};
use rollscope::store::{Changed, SCHEMA_VERSION};
use rollscope::tui::{App, AppConfig, Msg};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[test]
fn another_process_label_reaches_an_open_engine() {
    let root = tempfile::tempdir().unwrap();
    let paths = session(root.path());
    demo(root.path(), 40);
    let id = failures(root.path(), 1).remove(0);
    let config = EngineConfig {
        annotator: Some("alice".into()),
        ..EngineConfig::default()
    };
    let (engine, updates) = Engine::spawn(Arc::new(connect(&paths)), config).unwrap();
    std::thread::sleep(Duration::from_millis(600));
    while updates.try_recv().is_ok() {}
    let labelled = cli(
        root.path(),
        "carol",
        &["label", &id, "--turn", "1", "--kind", "format"],
    )
    .output()
    .unwrap();
    stdout(labelled);
    let written = Instant::now();
    let changed = loop {
        match updates.recv_timeout(Duration::from_secs(20)) {
            Ok(Update::StoreChanged(changed)) => break changed,
            Ok(_) => {}
            Err(error) => panic!("no change reached the engine: {error}"),
        }
    };
    eprintln!(
        "a label written by another process reached the engine after {} ms",
        written.elapsed().as_millis()
    );
    assert!(changed.labels && !changed.runs, "{changed:?}");
    drop(engine);
}

#[test]
fn the_tui_asks_again_for_what_changed_and_keeps_its_cursor() {
    let mut app = App::new(AppConfig::new("test", Rect::new(0, 0, 120, 40)));
    let start = app.start();
    let tag = start
        .iter()
        .find_map(|command| match command {
            Command::List { tag, .. } => Some(*tag),
            _ => None,
        })
        .expect("the first listing");
    app.tabs.rollouts.list.cursor = 3;
    let commands = app.update(Msg::Engine(Update::StoreChanged(Changed {
        labels: true,
        runs: true,
        ..Changed::default()
    })));
    assert!(
        commands
            .iter()
            .any(|command| matches!(command, Command::List { tag: same, .. } if *same == tag)),
        "the same listing, asked again: {commands:?}"
    );
    assert!(commands.contains(&Command::LoadRuns), "{commands:?}");
    assert_eq!(app.tabs.rollouts.list.cursor, 3);
}

#[test]
fn a_store_written_before_live_sessions_opens_with_every_label() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/stores/before-live");
    let root = tempfile::tempdir().unwrap();
    copy_dir(&fixture.join("store"), &session(root.path()).store_dir());
    let exported = stdout(
        cli(root.path(), "reader", &["labels", "export"])
            .output()
            .unwrap(),
    );
    let mut now: Vec<serde_json::Value> = exported
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let expected = std::fs::read_to_string(fixture.join("labels.jsonl")).unwrap();
    let mut before: Vec<serde_json::Value> = expected
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let key = |value: &serde_json::Value| value.to_string();
    now.sort_by_key(key);
    before.sort_by_key(key);
    assert!(
        before.len() >= 4,
        "the fixture has labels by several authors"
    );
    assert_eq!(now, before, "every label, unchanged");
    let store = connect(&session(root.path()));
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
}
