//! A session's own error kinds (`[[labels]]` in session.toml) on the command line: labelled
//! by name, filtered by name, counted by `stats`, and refused with the fix when undefined.

use super::{rollscope, stdout, write_native};
use rollscope::trajectory::Trajectory;
use std::path::PathBuf;
use tempfile::TempDir;

const KINDS: &str = r#"
[[labels]]
key = 5
name = "hallucination"
description = "States a number found nowhere in the question or a tool result."
"#;

/// A session of `count` imported trajectories whose session.toml names `KINDS`.
fn session_with_kinds(count: u64) -> (TempDir, PathBuf, Vec<Trajectory>) {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    let input = dir.path().join("in.jsonl");
    let trajectories = write_native(&input, count);
    stdout(rollscope(&sessions).arg("import").arg(&input));
    std::fs::write(sessions.join("default").join("session.toml"), KINDS).unwrap();
    (dir, sessions, trajectories)
}

#[test]
fn a_session_kind_labels_filters_and_counts_by_its_name() {
    let (dir, sessions, trajectories) = session_with_kinds(12);
    let target = &trajectories[3];
    let short = &target.id.to_string()[..8];

    let labelled = stdout(rollscope(&sessions).args([
        "label",
        short,
        "--turn",
        "1",
        "--kind",
        "hallucination",
    ]));
    assert!(labelled.contains("hallucination"), "{labelled}");

    let listed: Vec<serde_json::Value> =
        serde_json::from_str(&stdout(rollscope(&sessions).args([
            "--json",
            "list",
            "--label",
            "hallucination",
        ])))
        .unwrap();
    let ids: Vec<&str> = listed.iter().filter_map(|row| row["id"].as_str()).collect();
    assert_eq!(ids, [target.id.to_string()]);

    let table = stdout(rollscope(&sessions).args(["list", "--label", "label5"]));
    assert!(table.contains("hallucination"), "{table}");
    let shown = stdout(rollscope(&sessions).args(["show", short]));
    assert!(shown.contains("label hallucination"), "{shown}");

    let stats = stdout(rollscope(&sessions).arg("stats"));
    let row = stats
        .lines()
        .find(|line| line.starts_with("hallucination"))
        .unwrap_or_else(|| panic!("no hallucination row in:\n{stats}"));
    let counts: Vec<&str> = row.split_whitespace().skip(1).collect();
    assert_eq!(counts, ["1", "0"], "{row}");

    let exported = dir.path().join("labels.jsonl");
    stdout(
        rollscope(&sessions)
            .args(["labels", "export", "-o"])
            .arg(&exported),
    );
    let text = std::fs::read_to_string(&exported).unwrap();
    assert!(text.contains(r#""kind":"label5""#), "stored by key: {text}");
}

#[test]
fn an_undefined_session_kind_is_refused_with_the_fix() {
    let (_dir, sessions, trajectories) = session_with_kinds(4);
    let short = trajectories[0].id.to_string()[..8].to_string();

    let output = rollscope(&sessions)
        .args(["label", &short, "--turn", "1", "--kind", "label6"])
        .output()
        .unwrap();
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(error.contains("add [[labels]] key = 6"), "{error}");

    let output = rollscope(&sessions)
        .args(["list", "--label", "hallucinations"])
        .output()
        .unwrap();
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        error.contains("--label: unknown error kind `hallucinations`")
            && error.contains("this session's kinds: hallucination"),
        "{error}"
    );

    std::fs::write(
        sessions.join("default").join("session.toml"),
        "[[labels]]\nkey = 3\nname = \"units\"\n",
    )
    .unwrap();
    let output = rollscope(&sessions)
        .args(["label", &short, "--turn", "1", "--kind", "calculation"])
        .output()
        .unwrap();
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(error.contains("session.toml:1"), "{error}");
    assert!(error.contains("key 3 is not one of 5–9"), "{error}");
}
