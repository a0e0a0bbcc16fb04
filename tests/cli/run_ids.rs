//! Run ids are taken from the store in one request, so processes starting runs at once never
//! share an id.

use super::{rollscope, stdout};

/// Run ids come from the store in one request: six rollout processes started at once on one
/// session (their endpoint refuses, so each stores its failed attempts at once) make six
/// runs under six ids, none overwriting another's record.
#[test]
fn six_rollout_processes_at_once_take_six_run_ids() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    let made = rollscope(&sessions)
        .args(["sessions", "new", "default"])
        .output()
        .unwrap();
    assert!(made.status.success());
    let children: Vec<_> = (0..6)
        .map(|_| {
            std::process::Command::new(assert_cmd::cargo::cargo_bin("rollscope"))
                .arg("--sessions-dir")
                .arg(&sessions)
                .args(["rollout", "--endpoint", "http://127.0.0.1:9/v1", "-n", "2"])
                .args(["--tasks", "arith:1:eval"])
                .env_remove("ROLLSCOPE_SESSION")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut said = Vec::new();
    for child in children {
        let output = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            output.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let run = stdout.split(':').next().unwrap().trim().to_string();
        assert!(run.starts_with("rollout-"), "{stdout}");
        said.push(run);
    }
    said.sort();
    said.dedup();
    assert_eq!(said.len(), 6, "each process names its own run: {said:?}");
    let listed = stdout(rollscope(&sessions).args(["--json", "runs"]));
    let runs: Vec<serde_json::Value> = listed
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let mut stored: Vec<&str> = runs.iter().map(|run| run["id"].as_str().unwrap()).collect();
    stored.sort();
    assert_eq!(stored, said, "every run's record is stored");
}
