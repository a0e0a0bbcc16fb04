//! A session's own error kinds in the TUI: read from `[[labels]]` in session.toml, set with
//! keys 5–9, shown by name, listed in the help, refused with the fix when undefined.

use crate::common::*;
use rollscope::curate::labels::LabelKinds;
use rollscope::engine::{Command, Update};
use rollscope::store::Summary;
use rollscope::trajectory::{ErrorKind, KindKey, Label, LabelStatus};
use rollscope::tui::{Action, Msg};

const KINDS: &str = r#"[[labels]]
key = 7
name = "units"

[[labels]]
key = 5
name = "hallucination"
description = "States a number found nowhere in the question or a tool result."
"#;

fn session_kind(digit: u8) -> ErrorKind {
    ErrorKind::Session(KindKey::new(digit).unwrap())
}

fn session_kinds() -> LabelKinds {
    let dir = tempfile::tempdir().unwrap();
    let paths = rollscope::session::SessionPaths::new(dir.path(), "s").unwrap();
    std::fs::create_dir_all(&paths.dir).unwrap();
    std::fs::write(paths.config_path(), KINDS).unwrap();
    let config =
        rollscope::tui::session_app_config(&paths, ratatui::layout::Rect::new(0, 0, 80, 24))
            .unwrap();
    config.label_kinds
}

#[test]
fn session_toml_names_kinds_and_a_bad_entry_names_the_file_and_line() {
    let kinds = session_kinds();
    assert_eq!(
        kinds.kinds()[4..],
        [session_kind(5), session_kind(7)],
        "in key order"
    );
    assert_eq!(kinds.name(session_kind(5)), "hallucination");
    assert_eq!(kinds.name(session_kind(7)), "units");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.toml");
    std::fs::write(
        &path,
        "theme = \"dark\"\n\n[[labels]]\nkey = 5\nname = \"a\"\n\n[[labels]]\nkey = 5\nname = \"b\"\n",
    )
    .unwrap();
    let error = rollscope::session::SessionConfig::load(&path)
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with(&format!("{}:3:", path.display())),
        "{error}"
    );
    assert!(
        error.contains("[[labels]] entry 2 (`b`): key 5 is already `a`"),
        "{error}"
    );
}

#[test]
fn keys_five_to_nine_label_with_the_sessions_kinds_by_name() {
    let mut app = listed_app(100, 100);
    app.label_kinds = session_kinds();
    act(&mut app, &[Action::Open, Action::Right]);
    let id = trajectory(0).id;

    let commands = app.update(char_key('5'));
    assert!(
        matches!(&commands[..], [Command::SaveLabel { id: saved, draft }]
            if *saved == id && draft.kind == session_kind(5) && draft.step == 1
                && draft.status == LabelStatus::Confirmed),
        "{commands:?}"
    );

    let commands = app.update(char_key('6'));
    assert!(commands.is_empty(), "{commands:?}");
    let screen = render(&app);
    assert!(
        screen.contains("key 6 names no error kind here"),
        "{screen}"
    );

    let mut labelled = trajectory(0);
    labelled.labels = vec![Label {
        step: 1,
        kind: session_kind(5),
        status: LabelStatus::Confirmed,
        note: None,
        author: None,
        time: 0,
    }];
    let summary = Summary::of(&labelled, 0);
    assert_eq!(
        summary.confirmed_kinds().collect::<Vec<_>>(),
        [session_kind(5)]
    );
    app.update(Msg::Engine(Update::LabelsSaved {
        id,
        labels: labelled.labels.clone(),
        summary: Box::new(summary),
    }));
    let screen = render(&app);
    assert!(screen.contains("hallucination"), "{screen}");
    assert!(!screen.contains("label5"), "{screen}");
    assert!(
        screen.contains("1-7 label"),
        "the hint counts the session's keys: {screen}"
    );

    app.update(Msg::Action(Action::Help));
    let help = render(&app);
    assert!(
        help.contains("5  hallucination — States a number"),
        "{help}"
    );
    assert!(help.contains("7  units"), "{help}");
}
