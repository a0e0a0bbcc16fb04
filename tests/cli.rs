//! The `rollscope` binary on real files: import, list, show, label, export, delete, compact.

#[path = "cli/config_errors.rs"]
mod config_errors;
#[path = "cli/fork.rs"]
mod fork;
#[path = "cli/label_kinds.rs"]
mod label_kinds;
#[path = "cli/pipes.rs"]
mod pipes;
#[path = "cli/run_ids.rs"]
mod run_ids;
#[path = "cli/search.rs"]
mod search;
#[path = "cli/sessions.rs"]
mod sessions;
#[path = "cli/tool_call_ids.rs"]
mod tool_call_ids;
#[path = "cli/tool_names.rs"]
mod tool_names;
#[path = "cli/watch_trl.rs"]
mod watch_trl;

use assert_cmd::Command;
use rollscope::synthetic::{self, SyntheticSpec};
use std::io::Write;
use std::path::Path;

fn rollscope(sessions: &Path) -> Command {
    let mut command = Command::cargo_bin("rollscope").unwrap();
    command
        .arg("--sessions-dir")
        .arg(sessions)
        .env_remove("ROLLSCOPE_SESSION");
    command
}

fn stdout(command: &mut Command) -> String {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn write_native(path: &Path, count: u64) -> Vec<rollscope::trajectory::Trajectory> {
    let spec = SyntheticSpec {
        count,
        trace_tokens: 50,
        per_step: 8,
        ..SyntheticSpec::default()
    };
    let trajectories: Vec<_> = (0..count)
        .map(|i| synthetic::trajectory(i, &spec))
        .collect();
    let mut file = std::fs::File::create(path).unwrap();
    for trajectory in &trajectories {
        serde_json::to_writer(&mut file, trajectory).unwrap();
        file.write_all(b"\n").unwrap();
    }
    trajectories
}

#[test]
fn import_list_show_label_export_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    let input = dir.path().join("in.jsonl");
    let trajectories = write_native(&input, 24);

    let report = stdout(rollscope(&sessions).arg("import").arg(&input));
    assert!(report.contains("24 trajectories"), "{report}");

    let listed: Vec<serde_json::Value> = serde_json::from_str(&stdout(
        rollscope(&sessions).args(["--json", "list", "--fail"]),
    ))
    .unwrap();
    let failing = trajectories
        .iter()
        .filter(|t| t.passed() == Some(false))
        .count();
    assert_eq!(listed.len(), failing);

    let target = trajectories
        .iter()
        .find(|t| t.passed() == Some(false) && t.labels.is_empty())
        .unwrap();
    let short = &target.id.to_string()[..8];
    let shown = stdout(rollscope(&sessions).args(["show", short]));
    assert!(shown.contains("t1 assistant"), "{shown}");
    assert!(shown.contains("PRM"), "{shown}");
    assert!(
        shown.contains(target.task_id.as_deref().unwrap()),
        "{shown}"
    );

    let labelled = stdout(
        rollscope(&sessions)
            .args([
                "label",
                short,
                "--turn",
                "2",
                "--kind",
                "calculation",
                "--note",
                "used 52",
            ])
            .env("USER", "")
            .env("LOGNAME", ""),
    );
    assert!(labelled.contains("calculation"), "{labelled}");
    let queue: Vec<serde_json::Value> = serde_json::from_str(&stdout(rollscope(&sessions).args([
        "--json",
        "list",
        "--label",
        "calculation",
        "--status",
        "confirmed",
    ])))
    .unwrap();
    assert!(queue.iter().any(|row| row["id"] == target.id.to_string()));

    let exported = dir.path().join("out.jsonl");
    stdout(
        rollscope(&sessions)
            .args(["export", "--format", "rollscope", "-o"])
            .arg(&exported),
    );
    let lines = std::fs::read_to_string(&exported).unwrap();
    assert_eq!(lines.lines().count(), 24);
    let again: rollscope::trajectory::Trajectory = lines
        .lines()
        .map(|line| serde_json::from_str::<rollscope::trajectory::Trajectory>(line).unwrap())
        .find(|t| t.id == target.id)
        .unwrap();
    assert_eq!(again.labels.len(), target.labels.len() + 1);
    let system_user = std::process::Command::new("id")
        .arg("-un")
        .output()
        .unwrap();
    let system_user = String::from_utf8(system_user.stdout).unwrap();
    let added = again
        .labels
        .iter()
        .find(|label| label.note.as_deref() == Some("used 52"))
        .unwrap();
    assert_eq!(
        added.author.as_deref(),
        Some(system_user.trim()).filter(|name| !name.is_empty()),
        "an empty $USER falls back to the system's user name"
    );
    assert_eq!(again.token_trace, target.token_trace);

    let second = tempfile::tempdir().unwrap();
    stdout(rollscope(second.path()).arg("import").arg(&exported));
    let back: Vec<serde_json::Value> =
        serde_json::from_str(&stdout(rollscope(second.path()).args(["--json", "list"]))).unwrap();
    assert_eq!(back.len(), 24);
}

#[test]
fn bad_lines_are_reported_with_their_line_and_the_rest_imports() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    let input = dir.path().join("mixed.jsonl");
    write_native(&input, 3);
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&input)
        .unwrap();
    file.write_all(b"{\"id\": \"broken\n\xff\xfe\n").unwrap();
    drop(file);
    let output = rollscope(&sessions)
        .arg("import")
        .arg(&input)
        .output()
        .unwrap();
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("mixed.jsonl:4:"), "{stderr}");
    assert!(stderr.contains("mixed.jsonl:5: invalid UTF-8"), "{stderr}");
    assert!(String::from_utf8_lossy(&output.stdout).contains("3 trajectories"));

    let strict = rollscope(&dir.path().join("strict"))
        .args(["import", "--strict"])
        .arg(&input)
        .output()
        .unwrap();
    assert!(!strict.status.success());
    let listed = stdout(rollscope(&dir.path().join("strict")).args(["--json", "list"]));
    assert_eq!(
        listed.trim(),
        "[]",
        "--strict imports nothing from a file with problems"
    );
}

#[test]
fn delete_needs_a_filter_and_compact_reports_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    let input = dir.path().join("in.jsonl");
    let trajectories = write_native(&input, 16);
    stdout(rollscope(&sessions).arg("import").arg(&input));
    let refused = rollscope(&sessions).arg("delete").output().unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--all"));
    let deleted = stdout(rollscope(&sessions).args(["delete", "--pass"]));
    let passing = trajectories
        .iter()
        .filter(|t| t.passed() == Some(true))
        .count();
    assert!(
        deleted.contains(&format!("deleted {passing} trajectories")),
        "{deleted}"
    );
    let compacted = stdout(rollscope(&sessions).arg("compact"));
    assert!(
        compacted.contains(&format!("compacted {} trajectories", 16 - passing)),
        "{compacted}"
    );
    let sessions_list = stdout(rollscope(&sessions).arg("sessions"));
    assert_eq!(sessions_list.trim(), "default");
}

#[test]
fn unknown_ids_and_kinds_say_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    stdout(rollscope(&sessions).args(["sessions", "new", "default"]));
    let output = rollscope(&sessions)
        .args(["show", "abcdef"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("no trajectory with id abcdef"));
    let output = rollscope(&sessions)
        .args(["label", "ab", "--turn", "1", "--kind", "typo"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&output.stderr).contains(
        "--kind: unknown error kind `typo`: use calculation, reasoning, understanding, format"
    ));
}

#[test]
fn watch_follows_rows_appended_to_a_verl_metrics_file() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("verl.jsonl");
    std::fs::write(
        &path,
        "{\"step\": 1, \"data\": {\"critic/score/mean\": 0.25}}\n",
    )
    .unwrap();
    let once = stdout(rollscope(dir.path()).args(["watch", "--once"]).arg(&path));
    assert!(once.contains("0.25"), "{once}");

    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("rollscope"))
        .args(["watch", "--every", "0.05"])
        .arg(&path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let (sender, lines) = std::sync::mpsc::channel();
    let output = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(output).lines().map_while(Result::ok) {
            let _ = sender.send(line);
        }
    });
    let wait = std::time::Duration::from_secs(30);
    for _ in 0..2 {
        lines
            .recv_timeout(wait)
            .expect("the header and the first row");
    }
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(b"{\"step\": 2, \"data\": {\"critic/score/mean\": 0.75}}\n")
        .unwrap();
    let next = lines.recv_timeout(wait).expect("the appended row");
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        next.trim_start().starts_with('2') && next.contains("0.75"),
        "{next}"
    );
}
