//! TRL's own output, as `GRPOTrainer` writes it with `log_completions=True`: the per-step
//! completions parquet files and a checkpoint's `trainer_state.json`, read one by one and as
//! a run's output folder.

use super::common::{data, import_with, options};
use rollscope::formats::{Format, ImportOptions};
use std::collections::BTreeSet;

/// The completions files of the TRL fixture, in step order.
fn completions() -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(data("trl/completions"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    files
}

#[test]
fn each_step_file_is_a_group_of_scored_rollouts_of_its_step() {
    let files = completions();
    assert_eq!(files.len(), 4);
    for path in &files {
        let step: u64 = path.file_stem().unwrap().to_str().unwrap()["completions_".len()..]
            .parse()
            .unwrap();
        let imported = import_with(path, options(None)).unwrap();
        assert!(
            imported.report.problems.is_empty(),
            "{:?}",
            imported.report.problems
        );
        assert_eq!(imported.report.format, Some(Format::TrlPromptCompletion));
        assert_eq!(imported.trajectories.len(), 4, "{}", path.display());
        let groups: BTreeSet<_> = imported.trajectories.iter().map(|t| t.group).collect();
        assert_eq!(groups.len(), 1, "one prompt per step, G = 4");
        let samples: Vec<_> = imported.trajectories.iter().map(|t| t.sample).collect();
        assert_eq!(samples, [Some(0), Some(1), Some(2), Some(3)]);
        for trajectory in &imported.trajectories {
            assert_eq!(trajectory.policy_version, Some(step));
            assert!(trajectory.advantage.is_some());
            let reward = trajectory.reward.as_ref().unwrap();
            let names: Vec<&str> = reward.components.keys().map(String::as_str).collect();
            assert_eq!(
                names,
                ["brevity", "correct"],
                "one column per reward function"
            );
            let sum: f64 = reward.components.values().sum();
            assert_eq!(reward.total, sum);
            assert!(!trajectory.extra.contains_key("step"));
            assert_eq!(trajectory.messages[0].role.as_str(), "user");
            assert_eq!(
                trajectory.messages.last().unwrap().role.as_str(),
                "assistant"
            );
        }
        let advantages: f64 = imported
            .trajectories
            .iter()
            .map(|t| t.advantage.unwrap())
            .sum();
        assert!(
            advantages.abs() < 1e-4,
            "group-normalised advantages sum to 0 (f32): {advantages}"
        );
    }
    let first = import_with(&files[0], options(None)).unwrap();
    let row = &first.trajectories[0];
    assert_eq!(row.messages[0].content, "What is 15 times 17?");
    assert_eq!(row.advantage, Some(0.8823863863945007));
    let reward = row.reward.as_ref().unwrap();
    assert_eq!(reward.components["brevity"], -0.11100000143051147);
    assert_eq!(reward.components["correct"], 0.0);
}

#[test]
fn a_damaged_parquet_file_is_reported_never_half_trusted() {
    let bytes = std::fs::read(&completions()[0]).unwrap();
    for cut in [bytes.len() / 3, bytes.len() - 9, 5] {
        let file = super::common::temp_file(&bytes[..cut], ".parquet");
        match import_with(
            file.path(),
            ImportOptions {
                format: Some(Format::TrlPromptCompletion),
                ..options(None)
            },
        ) {
            Ok(imported) => assert!(
                imported.trajectories.is_empty() || !imported.report.problems.is_empty(),
                "cut at {cut}: rows without a problem"
            ),
            Err(error) => assert!(error.to_string().contains("parquet"), "{error}"),
        }
    }
}

#[test]
fn a_trl_output_folder_imports_as_a_run_with_its_metrics() {
    let sessions = tempfile::tempdir().unwrap();
    let rollscope = |args: &[&str]| {
        let output = assert_cmd::Command::cargo_bin("rollscope")
            .unwrap()
            .arg("--sessions-dir")
            .arg(sessions.path())
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).to_string();
        assert!(output.status.success(), "{args:?}: {stderr}");
        String::from_utf8(output.stdout).unwrap()
    };
    let folder = data("trl");
    let stdout = rollscope(&["import", folder.to_str().unwrap()]);
    assert!(
        stdout.contains("run trl (16 trajectories, 4 metrics rows from"),
        "{stdout}"
    );
    let state: serde_json::Value = serde_json::from_slice(
        &std::fs::read(data("trl/checkpoint-4/trainer_state.json")).unwrap(),
    )
    .unwrap();
    let runs = rollscope(&["runs", "--json"]);
    let run: serde_json::Value = serde_json::from_str(runs.lines().next().unwrap()).unwrap();
    assert_eq!(run["id"], "trl", "the run is named after its folder");
    assert_eq!(run["kind"], "import");
    assert_eq!(run["status"], "done");
    assert_eq!(run["step"], state["global_step"]);
    let listed: serde_json::Value = serde_json::from_str(&rollscope(&[
        "list", "--run", "trl", "--json", "--limit", "100",
    ]))
    .unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 16);
    let watched = rollscope(&["watch", "trl", "--once"]);
    let rewards = state["log_history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|row| row.get("reward").is_some())
        .count();
    assert_eq!(rewards, 4);
    assert!(watched.contains("reward"), "{watched}");
}

#[test]
fn verl_task_rows_read_from_parquet_as_from_json() {
    let json = super::common::import("verl_gsm8k_multiturn_tasks.jsonl");
    let mut parquet = Vec::new();
    rollscope::formats::write_parquet(
        &super::common::read("verl_gsm8k_multiturn_tasks.jsonl"),
        &mut parquet,
    )
    .unwrap();
    let file = super::common::temp_file(&parquet, ".parquet");
    let back = import_with(file.path(), options(None)).unwrap();
    assert!(
        back.report.problems.is_empty(),
        "{:?}",
        back.report.problems
    );
    assert_eq!(
        back.report.format,
        Some(Format::VerlTasks),
        "detected from the column names"
    );
    assert_eq!(back.tasks.len(), json.tasks.len());
    for (a, b) in back.tasks.iter().zip(&json.tasks) {
        assert_eq!(a.id, b.id, "the same prompt, tools and ground truth");
        assert_eq!(a.ground_truth, b.ground_truth);
    }
}
