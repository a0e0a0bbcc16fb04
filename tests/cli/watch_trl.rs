//! `rollscope watch` on TRL's real `trainer_state.json` as TRL rewrites it: new log rows,
//! evaluation rows that share a step with a training row, and a rewrite of the same length.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::sync::mpsc::Receiver;
use std::time::Duration;

const STATE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/formats/trl/checkpoint-4/trainer_state.json"
);

/// TRL's state with the first `rows` rows of its log history and then `extra` rows.
fn state(rows: usize, extra: &[Value]) -> String {
    let mut state: Value = serde_json::from_str(&std::fs::read_to_string(STATE).unwrap()).unwrap();
    let history = state["log_history"].as_array_mut().unwrap();
    history.truncate(rows);
    history.extend(extra.iter().cloned());
    serde_json::to_string_pretty(&state).unwrap()
}

fn rewrite(path: &Path, text: &str) {
    std::thread::sleep(Duration::from_millis(30));
    std::fs::write(path, text).unwrap();
}

/// The `watch` process, killed when the test ends, passed or failed.
struct Watching(std::process::Child);

impl Drop for Watching {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn next_rows(lines: &Receiver<String>, count: usize) -> Vec<Value> {
    (0..count)
        .map(|_| {
            let line = lines
                .recv_timeout(Duration::from_secs(30))
                .expect("a printed row");
            serde_json::from_str(&line).unwrap()
        })
        .collect()
}

#[test]
fn watch_follows_trl_rewrites_eval_rows_and_same_length_rewrites() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trainer_state.json");
    std::fs::write(&path, state(3, &[])).unwrap();
    let mut child = Watching(
        std::process::Command::new(assert_cmd::cargo::cargo_bin("rollscope"))
            .args(["--json", "watch", "--every", "0.05"])
            .arg(&path)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let (sender, lines) = std::sync::mpsc::channel();
    let output = child.0.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(output).lines().map_while(Result::ok) {
            let _ = sender.send(line);
        }
    });
    let first = next_rows(&lines, 3);
    assert_eq!(first[2]["step"], 3);

    let eval = json!({"epoch": 0.125, "eval_loss": 0.75, "eval_runtime": 0.25, "step": 4});
    rewrite(&path, &state(4, &[eval]));
    let added = next_rows(&lines, 2);
    assert_eq!(added[0]["step"], 4);
    assert_eq!(added[1]["step"], 4, "the eval row shares the step");
    assert_eq!(added[1]["values"]["eval_loss"], 0.75);

    let before = state(
        4,
        &[json!({"epoch": 0.125, "eval_loss": 0.75, "eval_runtime": 0.25, "step": 4})],
    );
    let after = state(
        4,
        &[json!({"epoch": 0.125, "eval_loss": 0.25, "eval_runtime": 0.75, "step": 4})],
    );
    assert_eq!(before.len(), after.len());
    rewrite(&path, &after);
    let again = next_rows(&lines, 5);
    drop(child);
    assert_eq!(again[4]["values"]["eval_loss"], 0.25, "the rewrite is seen");
}
