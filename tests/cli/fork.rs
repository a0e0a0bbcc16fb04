//! `rollscope fork` on the blind set's real two-turn failures, imported without token traces:
//! success from a turn with its interval, success-from-here stored on the parent, an edited
//! tool result, children repeatable by seed, and a bad turn refused before any run starts.

use super::{rollscope, stdout};
use serde_json::Value;
use std::path::Path;

const BLIND: &str = "tests/data/blind/trajectories.jsonl";

/// The id of the first trajectory of the blind set with exactly two turns, and its tool result.
fn two_turn_failure() -> (String, String) {
    let text = std::fs::read_to_string(BLIND).unwrap();
    text.lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|record| record.get("messages").is_some())
        .find_map(|record| {
            let messages = record["messages"].as_array().unwrap();
            let turns = messages.iter().filter(|m| m["role"] == "assistant").count();
            let result = messages.iter().find(|m| m["role"] == "tool")?;
            (turns == 2).then(|| {
                (
                    record["id"].as_str().unwrap().to_string(),
                    result["content"].as_str().unwrap().to_string(),
                )
            })
        })
        .unwrap()
}

fn json(sessions: &Path, args: &[&str]) -> Value {
    let text = stdout(rollscope(sessions).arg("--json").args(args));
    serde_json::from_str(text.trim()).unwrap()
}

fn run_count(sessions: &Path) -> usize {
    stdout(rollscope(sessions).arg("runs"))
        .lines()
        .filter(|line| line.starts_with("rollout-"))
        .count()
}

#[test]
fn fork_continues_a_real_failure_from_its_turns_and_stores_success_from_here() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path();
    stdout(rollscope(sessions).args(["model", "init"]));
    stdout(rollscope(sessions).args(["import", BLIND]));
    let (id, result) = two_turn_failure();

    let outcome = json(sessions, &["fork", &id, "--all-turns", "-n", "3"]);
    let parent = &outcome["parents"][0];
    assert_eq!(parent["parent"], id.as_str());
    assert_eq!(parent["passed"], false);
    let forks = parent["forks"].as_array().unwrap();
    assert_eq!(forks.len(), 2, "one fork per turn");
    for (index, fork) in forks.iter().enumerate() {
        assert_eq!(fork["turn"], index + 1);
        assert_eq!(fork["success"]["total"], 3);
        assert_eq!(fork["children"].as_array().unwrap().len(), 3);
        assert_eq!(
            fork["prefix"], "rendered",
            "imported without tokens: rendered again"
        );
    }
    let run = outcome["run"].as_str().unwrap();
    let listed = stdout(rollscope(sessions).args(["list", "--run", run]));
    assert!(
        listed.contains("6 matching") || listed.lines().count() == 7,
        "{listed}"
    );

    let stored = json(sessions, &["show", &id]);
    let monte_carlo: Vec<&Value> = stored["step_scores"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|score| score["source"] == "monte_carlo")
        .collect();
    assert_eq!(
        monte_carlo.len(),
        2,
        "after turn 1 (forks from turn 2), after turn 2 (its verdict)"
    );
    let after_first = forks[1]["success"]["passed"].as_f64().unwrap() / 3.0;
    assert_eq!(monte_carlo[0]["step"], 0);
    assert!((monte_carlo[0]["value"].as_f64().unwrap() - after_first).abs() < 1e-12);
    assert_eq!(monte_carlo[1]["value"], 0.0);

    let edit_fork = [
        "fork",
        &id,
        "--observation",
        "1=4242",
        "-n",
        "2",
        "--seed",
        "3",
    ];
    let edited = json(sessions, &edit_fork);
    let fork = &edited["parents"][0]["forks"][0];
    assert_eq!(
        fork["turn"], 2,
        "an edited result continues from the next turn"
    );
    let child_id = fork["children"][0].as_str().unwrap().to_string();
    let child = json(sessions, &["show", &child_id]);
    let tool = child["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert_eq!(tool["content"], "4242");
    assert_eq!(child["fork"]["edits"][0]["original"], result.as_str());
    assert_eq!(child["fork"]["parent"], id.as_str());
    let shown = stdout(rollscope(sessions).args(["show", &child_id]));
    assert!(
        shown.contains("fork of") && shown.contains("edited (was:"),
        "{shown}"
    );

    let again = json(sessions, &edit_fork);
    assert_eq!(
        again["parents"][0]["forks"][0]["children"], fork["children"],
        "the same seed, the same children"
    );
    let rerun = json(sessions, &["show", &child_id]);
    assert_eq!(rerun["messages"], child["messages"]);

    let parent = json(sessions, &["show", &id]);
    let branches = parent["branches"].as_array().unwrap();
    assert_eq!(branches.len(), 4, "two turns, then the edited fork twice");
    assert_eq!(branches[0]["turn"], 1);
    assert_eq!(branches[2]["edited"], true);
    assert_eq!(branches[2]["children"], fork["children"]);
    let shown = stdout(rollscope(sessions).args(["show", &id]));
    assert!(shown.contains("branch       from t2 × 2"), "{shown}");

    let runs = run_count(sessions);
    let output = rollscope(sessions)
        .args(["fork", &id, "--turn", "5"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        error.contains("turn 5 does not exist") && error.contains("2 turn(s)"),
        "{error}"
    );
    assert_eq!(run_count(sessions), runs, "a refused fork starts no run");
}
