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
        assert_eq!(ids, ids_again, "{name}: the same nonce gives the same ids");
        let fresh = super::common::import_with(
            &path,
            rollscope::formats::ImportOptions {
                id_nonce: 8,
                ..options(None)
            },
        )
        .unwrap();
        assert!(
            fresh
                .trajectories
                .iter()
                .zip(&ids)
                .all(|(t, id)| t.id != *id),
            "{name}: a new nonce, new ids"
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
    assert_eq!(total, 192 + 208, "192 trajectories and 208 tasks in all");
}

#[test]
fn the_cli_imports_every_file_with_its_counts() {
    let sessions = tempfile::tempdir().unwrap();
    let files = super::common::data_files();
    let output = assert_cmd::Command::cargo_bin("rollscope")
        .unwrap()
        .arg("--sessions-dir")
        .arg(sessions.path())
        .arg("import")
        .args(&files)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    let expected = [
        (
            "6e44b9__sweagenttestrepo-1c2844.traj",
            "1 trajectories, 1 tasks (swe-agent)",
        ),
        (
            "function_calling_simple.traj",
            "1 trajectories, 1 tasks (swe-agent)",
        ),
        (
            "gsm8k_test_first150.jsonl",
            "0 trajectories, 150 tasks (gsm8k)",
        ),
        ("log_formats.json", "1 trajectories, 1 tasks (inspect)"),
        (
            "log_message_deduplication.eval",
            "1 trajectories, 1 tasks (inspect-eval)",
        ),
        (
            "mini_swe_agent_local_replay.traj.json",
            "1 trajectories, 1 tasks (messages)",
        ),
        (
            "mini_swe_agent_sqlfluff.traj.json",
            "1 trajectories, 1 tasks (mini-swe-agent)",
        ),
        (
            "nemo_gym_single_tool_call_rollouts.jsonl",
            "5 trajectories, 5 tasks (responses)",
        ),
        (
            "openai_chat_tools.jsonl",
            "2 trajectories, 2 tasks (openai)",
        ),
        (
            "openhands_basic_interactions.json",
            "1 trajectories, 1 tasks (openhands)",
        ),
        (
            "openhands_resolver_output.first1.jsonl",
            "1 trajectories, 1 tasks (openhands)",
        ),
        (
            "openhands_wrong_initial_state.json",
            "1 trajectories, 1 tasks (openhands)",
        ),
        (
            "samples_math-aps-tree.first1.jsonl",
            "137 trajectories, 1 tasks (omega-prm)",
        ),
        (
            "samples_math-shepherd.jsonl",
            "7 trajectories, 7 tasks (math-shepherd)",
        ),
        ("samples_prm800k.jsonl", "6 trajectories, 6 tasks (prm800k)"),
        (
            "sharegpt_glaive_toolcall.json",
            "20 trajectories, 19 tasks (sharegpt)",
        ),
        (
            "swe_agent_0x_ctf_networking_1.traj",
            "1 trajectories, 1 tasks (swe-agent)",
        ),
        (
            "tau_bench_airline_one.json",
            "1 trajectories, 1 tasks (tau-bench)",
        ),
        (
            "verl_gsm8k_multiturn_tasks.jsonl",
            "0 trajectories, 5 tasks (verl-tasks)",
        ),
        (
            "verl_rollout_dump_step3.jsonl",
            "4 trajectories, 2 tasks (verl)",
        ),
    ];
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), expected.len(), "{stdout}");
    for (line, (name, counts)) in lines.iter().zip(expected) {
        assert!(line.ends_with(&format!("{name}: {counts}")), "{line}");
    }
}
