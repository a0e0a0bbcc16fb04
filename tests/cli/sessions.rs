//! Sessions are made by commands that write; a mistyped name in a command that reads is an
//! error naming the sessions there, and makes nothing.

use super::{rollscope, stdout};

#[test]
fn a_mistyped_session_is_refused_with_the_one_meant_and_nothing_is_made() {
    let sessions = tempfile::tempdir().unwrap();
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/formats/openai_chat_tools.jsonl");
    stdout(
        rollscope(sessions.path())
            .args(["--session", "demo", "import"])
            .arg(&file),
    );
    for read_only in [
        &["list"][..],
        &["show", "0"],
        &["stats"],
        &["export", "--format", "openai"],
        &["runs"],
        &["tasks"],
    ] {
        let output = rollscope(sessions.path())
            .args(["--session", "demoo"])
            .args(read_only)
            .output()
            .unwrap();
        assert!(
            !output.status.success(),
            "{read_only:?} succeeded on a typo"
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("there is no session `demoo`"),
            "{read_only:?}: {stderr}"
        );
        assert!(stderr.contains("did you mean `demo`?"), "{stderr}");
        assert!(stderr.contains("the sessions there: demo"), "{stderr}");
    }
    assert!(
        !sessions.path().join("demoo").exists(),
        "a typo made no session"
    );
    let made = stdout(rollscope(sessions.path()).args(["sessions", "new", "team"]));
    assert!(made.contains("session `team` made"), "{made}");
    assert!(sessions.path().join("team/session.toml").is_file());
    let listed = stdout(rollscope(sessions.path()).arg("sessions"));
    assert_eq!(listed, "demo\nteam\n");
    let empty = stdout(rollscope(sessions.path()).args(["--session", "team", "list"]));
    assert!(empty.contains("0 of 0"), "{empty}");
}
