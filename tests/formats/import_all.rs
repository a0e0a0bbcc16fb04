//! Every real file imports without problems, through the library and through the CLI.

use super::common::{import, options};

#[test]
fn every_file_imports_without_problems_and_ids_are_stable() {
    let mut total = 0;
    for path in super::common::data_files() {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let first = import(&name);
        let again = super::common::import_with(&path, options(None)).unwrap();
        let ids: Vec<_> = first.trajectories.iter().map(|t| t.id).collect();
        let ids_again: Vec<_> = again.trajectories.iter().map(|t| t.id).collect();
        assert_eq!(
            ids, ids_again,
            "{name}: the same content gives the same ids"
        );
        let elsewhere = tempfile::tempdir().unwrap();
        let copy = elsewhere.path().join(format!("copy-of-{name}"));
        std::fs::copy(&path, &copy).unwrap();
        let copied = super::common::import_with(&copy, options(None)).unwrap();
        let copied_ids: Vec<_> = copied.trajectories.iter().map(|t| t.id).collect();
        assert_eq!(
            ids, copied_ids,
            "{name}: a copy under another name, the same ids"
        );
        let records: std::collections::HashSet<String> = first
            .trajectories
            .iter()
            .map(|t| {
                let mut t = t.clone();
                t.id = rollscope::trajectory::TrajectoryId(0);
                serde_json::to_string(&t).unwrap()
            })
            .collect();
        let distinct: std::collections::HashSet<_> = ids.iter().collect();
        assert_eq!(
            distinct.len(),
            records.len(),
            "{name}: records that differ, ids that differ; equal records, one id"
        );
        for trajectory in &first.trajectories {
            assert!(
                trajectory.task_id.is_some(),
                "{name}: every trajectory refers to a task"
            );
            assert_eq!(
                trajectory.source_format,
                first.report.format.unwrap().name()
            );
            let json = serde_json::to_string(trajectory).unwrap();
            let back: rollscope::trajectory::Trajectory = serde_json::from_str(&json).unwrap();
            assert_eq!(
                &back, trajectory,
                "{name}: survives the store's serialisation"
            );
        }
        total += first.trajectories.len() + first.tasks.len();
    }
    assert_eq!(total, 245 + 258, "245 trajectories and 258 tasks in all");
}

/// What the CLI prints for each real file: trajectories, tasks, format.
const EXPECTED: &[(&str, usize, usize, &str)] = &[
    ("6e44b9__sweagenttestrepo-1c2844.traj", 1, 1, "swe-agent"),
    ("function_calling_simple.traj", 1, 1, "swe-agent"),
    ("gsm8k_test_first150.jsonl", 0, 150, "gsm8k"),
    (
        "harbor-terminus2-golden-context-summarization.trajectory.json",
        1,
        1,
        "atif",
    ),
    (
        "llamafactory_reason_tool_use_demo_50.jsonl",
        50,
        47,
        "openai",
    ),
    ("log_formats.json", 1, 1, "inspect"),
    ("log_message_deduplication.eval", 1, 1, "inspect-eval"),
    ("mini_swe_agent_local_replay.traj.json", 1, 1, "messages"),
    ("mini_swe_agent_sqlfluff.traj.json", 1, 1, "mini-swe-agent"),
    (
        "nemo_gym_single_tool_call_rollouts.jsonl",
        5,
        5,
        "responses",
    ),
    (
        "openagents-qa-runner-login-trace.trajectory.json",
        1,
        1,
        "atif",
    ),
    ("openai_chat_tools.jsonl", 2, 2, "openai"),
    ("openhands_basic_interactions.json", 1, 1, "openhands"),
    ("openhands_resolver_output.first1.jsonl", 1, 1, "openhands"),
    ("openhands_wrong_initial_state.json", 1, 1, "openhands"),
    ("otel-otlp-kagent-adk-go-1turn.json", 1, 1, "otel"),
    ("samples_math-aps-tree.first1.jsonl", 137, 1, "omega-prm"),
    ("samples_math-shepherd.jsonl", 7, 7, "math-shepherd"),
    ("samples_prm800k.jsonl", 6, 6, "prm800k"),
    ("sharegpt_glaive_toolcall.json", 20, 19, "sharegpt"),
    ("swe_agent_0x_ctf_networking_1.traj", 1, 1, "swe-agent"),
    ("tau_bench_airline_one.json", 1, 1, "tau-bench"),
    ("verl_gsm8k_multiturn_tasks.jsonl", 0, 5, "verl-tasks"),
    ("verl_rollout_dump_step3.jsonl", 4, 2, "verl"),
];

/// Imports `files` into the session under `sessions`; the CLI's printed lines.
fn cli_import(sessions: &std::path::Path, files: &[std::path::PathBuf]) -> Vec<String> {
    let output = assert_cmd::Command::cargo_bin("rollscope")
        .unwrap()
        .arg("--sessions-dir")
        .arg(sessions)
        .arg("import")
        .args(files)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    stdout.lines().map(str::to_string).collect()
}

#[test]
fn the_cli_imports_every_file_with_its_counts_and_a_second_import_adds_nothing() {
    let sessions = tempfile::tempdir().unwrap();
    let files = super::common::data_files();
    let lines = cli_import(sessions.path(), &files);
    assert_eq!(lines.len(), EXPECTED.len(), "{lines:?}");
    for (line, (name, trajectories, tasks, format)) in lines.iter().zip(EXPECTED) {
        let repeated = if *name == "sharegpt_glaive_toolcall.json" {
            ", 1 already stored"
        } else {
            ""
        };
        let new = trajectories - repeated.len().min(1);
        let counts = format!(
            "{name}: {trajectories} trajectories ({new} new{repeated}), {tasks} tasks ({format})"
        );
        assert!(line.ends_with(&counts), "{line}");
    }
    let again = cli_import(sessions.path(), &files);
    for (line, (name, trajectories, tasks, format)) in again.iter().zip(EXPECTED) {
        let stored = match trajectories {
            0 => String::new(),
            count => format!(", {count} already stored"),
        };
        let counts = format!(
            "{name}: {trajectories} trajectories (0 new{stored}), {tasks} tasks ({format})"
        );
        assert!(line.ends_with(&counts), "the second import: {line}");
    }
    let repeated_in_sharegpt = 1;
    let total: usize = EXPECTED
        .iter()
        .map(|(_, trajectories, ..)| trajectories)
        .sum::<usize>()
        - repeated_in_sharegpt;
    let count = assert_cmd::Command::cargo_bin("rollscope")
        .unwrap()
        .arg("--sessions-dir")
        .arg(sessions.path())
        .args(["list", "--json", "--limit", "100000"])
        .output()
        .unwrap();
    let listed: Vec<serde_json::Value> = serde_json::from_slice(&count.stdout).unwrap();
    assert_eq!(
        listed.len(),
        total,
        "each record stored once (ShareGPT's file holds one record twice)"
    );
}

#[test]
fn a_changed_file_adds_only_its_changed_records() {
    let sessions = tempfile::tempdir().unwrap();
    let source = super::common::data("sharegpt_glaive_toolcall.json");
    let folder = tempfile::tempdir().unwrap();
    let copy = folder.path().join("renamed.json");
    std::fs::copy(&source, &copy).unwrap();
    let first = cli_import(sessions.path(), std::slice::from_ref(&copy));
    assert!(
        first[0].ends_with("20 trajectories (19 new, 1 already stored), 19 tasks (sharegpt)"),
        "the file holds one record twice: {first:?}"
    );
    let mut records: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(&copy).unwrap()).unwrap();
    records.reverse();
    let last = records[0]["conversations"]
        .as_array_mut()
        .unwrap()
        .last_mut()
        .unwrap();
    let changed = format!("{} (edited)", last["value"].as_str().unwrap());
    last["value"] = serde_json::Value::String(changed);
    let moved = folder.path().join("moved-and-edited.json");
    std::fs::write(&moved, serde_json::to_string(&records).unwrap()).unwrap();
    let again = cli_import(sessions.path(), &[moved]);
    assert!(
        again[0].ends_with("20 trajectories (1 new, 19 already stored), 19 tasks (sharegpt)"),
        "another name, another order, one record changed: {again:?}"
    );
}
