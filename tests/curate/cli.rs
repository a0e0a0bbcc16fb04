//! The curation verbs of the `rollscope` binary on a demo session.

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

fn rollscope(sessions: &Path, session: &str) -> Command {
    let mut command = Command::cargo_bin("rollscope").unwrap();
    command
        .arg("--sessions-dir")
        .arg(sessions)
        .args(["--session", session])
        .env_remove("ROLLSCOPE_SESSION");
    command
}

fn run(command: &mut Command) -> String {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn stats_suggest_audit_select_export_and_labels_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path();
    run(rollscope(sessions, "a").args(["demo-data", "--count", "256", "--trace-tokens", "16"]));

    let labels = dir.path().join("labels.jsonl");
    run(rollscope(sessions, "a")
        .args(["labels", "export", "--status", "confirmed", "-o"])
        .arg(&labels));
    let exported = std::fs::read_to_string(&labels).unwrap();
    assert!(!exported.is_empty());
    run(rollscope(sessions, "b").args(["demo-data", "--count", "256", "--trace-tokens", "16"]));
    let merged: Value = serde_json::from_str(&run(rollscope(sessions, "b")
        .arg("--json")
        .args(["labels", "import"])
        .arg(&labels)))
    .unwrap();
    assert_eq!(merged["read"], exported.lines().count());
    assert_eq!(
        merged["added"], 0,
        "the demo sets are the same: every label is known"
    );
    assert_eq!(merged["identical"], merged["read"]);

    let suggested = run(rollscope(sessions, "a").args(["suggest", "--fail"]));
    assert!(suggested.contains("suggested labels on"), "{suggested}");

    let stats: Value =
        serde_json::from_str(&run(rollscope(sessions, "a").args(["--json", "stats"]))).unwrap();
    assert_eq!(stats["trajectories"], 256);
    assert!(stats["from_records"].as_bool().unwrap());
    let versions = stats["versions"].as_array().unwrap();
    assert!(!versions.is_empty());
    assert!(versions[0]["pass_at_k"][0]["k"] == 1);
    assert!(stats["kinds"]["calculation"]["suggested"].as_u64().unwrap() > 0);
    let text = run(rollscope(sessions, "a").arg("stats"));
    for heading in [
        "policy version",
        "pass@1",
        "first error at step",
        "suggested-label precision",
    ] {
        assert!(text.contains(heading), "{heading}: {text}");
    }

    let audit: Value =
        serde_json::from_str(&run(rollscope(sessions, "a").args(["--json", "audit"]))).unwrap();
    assert!(audit["audited"].as_u64().unwrap() > 0);

    let preview = run(rollscope(sessions, "a").args(["curate", "--preview", "--per-task", "2"]));
    assert!(
        preview.contains("tasks kept") && preview.contains("≤ 2 per task"),
        "{preview}"
    );
    let out = dir.path().join("best.jsonl");
    let written = run(rollscope(sessions, "a")
        .args(["select", "--format", "rl", "-o"])
        .arg(&out));
    assert!(written.contains("manifest"), "{written}");
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("best.jsonl.manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(manifest["format"], "rl");
    assert_eq!(
        manifest["counts"]["written"],
        manifest["counts"]["selected"]
    );
    let first: Value = serde_json::from_str(
        std::fs::read_to_string(&out)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    for key in ["question", "prompt", "ground_truth", "full_answer"] {
        assert!(first.get(key).is_some(), "{key}: {first}");
    }

    let plain = dir.path().join("plain.jsonl");
    let output = rollscope(sessions, "a")
        .args([
            "export",
            "--format",
            "openai",
            "--tool-arguments",
            "string",
            "--pass",
            "-o",
        ])
        .arg(&plain)
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(dir.path().join("plain.jsonl.manifest.json").is_file());
    let line: Value = serde_json::from_str(
        std::fs::read_to_string(&plain)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert!(line["messages"][3]["tool_calls"][0]["function"]["arguments"].is_string());

    let bad = rollscope(sessions, "b")
        .args(["labels", "import"])
        .arg(dir.path().join("missing.jsonl"))
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("missing.jsonl"));
}

#[test]
fn checks_that_assume_a_math_answer_stay_out_of_agent_transcripts() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path();
    let formats = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/formats");
    for file in [
        "swe_agent_0x_ctf_networking_1.traj",
        "6e44b9__sweagenttestrepo-1c2844.traj",
        "mini_swe_agent_sqlfluff.traj.json",
        "tau_bench_airline_one.json",
    ] {
        run(rollscope(sessions, "a")
            .arg("import")
            .arg(formats.join(file)));
    }
    let stats: Value =
        serde_json::from_str(&run(rollscope(sessions, "a").args(["--json", "stats"]))).unwrap();
    for version in stats["versions"].as_array().unwrap() {
        assert!(
            version["format_correct"].is_null(),
            "no prompt asks for a marked answer, no task lists tools: {version}"
        );
    }
    run(rollscope(sessions, "a").args(["suggest", "--fail"]));
    let failed = run(rollscope(sessions, "a").args(["--json", "list", "--fail"]));
    let listed: Value = serde_json::from_str(&failed).unwrap();
    let tau = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["source_format"] == "tau-bench")
        .expect("the tau-bench run failed");
    let shown = run(rollscope(sessions, "a")
        .arg("show")
        .arg(tau["id"].as_str().unwrap()));
    assert!(
        !shown.contains("ends without an answer"),
        "a finished conversation with no ground truth: {shown}"
    );
}
