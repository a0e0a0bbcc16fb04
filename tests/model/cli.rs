//! The CLI verbs of the model area, run as the real binary.

use crate::common::{fixture_dir, floats, ids, messages, reference};
use assert_cmd::Command;
use rollscope::trajectory::{TokenTrace, Trajectory, TrajectoryId};
use serde_json::Value;
use std::path::Path;

fn rollscope(sessions: &Path) -> Command {
    let mut command = Command::cargo_bin("rollscope").unwrap();
    command.arg("--sessions-dir").arg(sessions);
    command
}

fn json_lines(output: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn init_info_and_generate_work_end_to_end() {
    let sessions = tempfile::tempdir().unwrap();
    rollscope(sessions.path())
        .args(["model", "init", "--seed", "3"])
        .assert()
        .success();
    let dir = sessions.path().join("default/models/base");
    let again = rollscope(sessions.path())
        .args(["model", "init"])
        .assert()
        .failure();
    assert!(String::from_utf8_lossy(&again.get_output().stderr).contains("--force"));
    let info = rollscope(sessions.path())
        .args(["--json", "model", "info"])
        .arg(&dir)
        .assert()
        .success();
    let info = &json_lines(&info.get_output().stdout)[0];
    assert_eq!(info["architecture"], "Qwen2ForCausalLM");
    assert_eq!(info["tokenizer_vocab"], 2048);
    assert_eq!(info["chat_template"], "chat_template.jinja");

    let generate = |extra: &[&str]| {
        let output = rollscope(sessions.path())
            .args([
                "--json",
                "generate",
                "--prompt",
                "What is 3 + 4?",
                "--max-new-tokens",
                "8",
            ])
            .args(extra)
            .assert()
            .success();
        json_lines(&output.get_output().stdout)
    };
    let greedy = generate(&[]);
    assert_eq!(greedy, generate(&[]));
    assert_eq!(greedy[0]["tokens"].as_array().unwrap().len(), 8);
    let sampled = generate(&["--temperature", "1.0", "--seed", "5", "--n", "2"]);
    assert_eq!(sampled.len(), 2);
    assert_eq!(
        sampled,
        generate(&["--temperature", "1.0", "--seed", "5", "--n", "2"])
    );

    let cuda = rollscope(sessions.path())
        .args(["generate", "--prompt", "hi", "--device", "cuda"])
        .assert()
        .failure();
    let message = String::from_utf8_lossy(&cuda.get_output().stderr).to_string();
    if !cfg!(feature = "cuda") {
        assert!(message.contains("--features cuda"), "{message}");
    }
}

/// Scores of the fixture conversation, from its chat template and from a recorded token
/// trace, equal the reference log-probs; against recorded log-probs equal to ours the KL is 0.
#[test]
fn score_reproduces_the_reference_log_probs() {
    let reference = reference("tiny-qwen2");
    let conversation = messages(&reference["conversation"]);
    let mut rendered = Trajectory::new(TrajectoryId(1), conversation.clone());
    rendered
        .extra
        .insert("tools".into(), reference["tools"].clone());
    let input = ids(&reference["input_ids"]);
    let mask: Vec<u8> = ids(&reference["assistant_mask"])
        .iter()
        .map(|&bit| bit as u8)
        .collect();
    let expected = floats(&reference["token_logprobs"]);
    let mut recorded = vec![0f32];
    recorded.extend(expected.iter().map(|&x| x as f32));
    let mut traced = Trajectory::new(TrajectoryId(2), conversation);
    traced.token_trace = Some(TokenTrace {
        token_ids: input.clone(),
        loss_mask: mask.clone(),
        logprobs: recorded,
        entropies: Vec::new(),
    });
    let work = tempfile::tempdir().unwrap();
    let input_path = work.path().join("trajectories.jsonl");
    let lines: Vec<String> = [rendered, traced]
        .iter()
        .map(|t| serde_json::to_string(t).unwrap())
        .collect();
    std::fs::write(&input_path, lines.join("\n") + "\n").unwrap();
    let output_path = work.path().join("scores.jsonl");
    rollscope(work.path())
        .args(["score", "--model"])
        .arg(fixture_dir("tiny-qwen2"))
        .arg("--input")
        .arg(&input_path)
        .arg("--output")
        .arg(&output_path)
        .assert()
        .success();
    let rows = json_lines(&std::fs::read(&output_path).unwrap());
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["source"], "chat_template");
    assert_eq!(rows[1]["source"], "token_trace");
    let masked: Vec<usize> = (1..input.len()).filter(|&t| mask[t] == 1).collect();
    for row in &rows {
        let positions: Vec<usize> = row["positions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(positions, masked);
        for (&t, logprob) in positions.iter().zip(floats(&row["logprobs"])) {
            assert!(
                (logprob - expected[t - 1]).abs() < 1e-4,
                "position {t}: {logprob} vs {}",
                expected[t - 1]
            );
        }
    }
    assert!(rows[0].get("kl_k3").is_none());
    assert!(rows[1]["kl_k3"].as_f64().unwrap().abs() < 1e-8);
    assert!(rows[1]["mean_log_ratio"].as_f64().unwrap().abs() < 1e-4);
}

#[test]
fn bench_model_reports_its_figures() {
    let work = tempfile::tempdir().unwrap();
    let output = rollscope(work.path())
        .args(["--json", "bench", "model", "--model"])
        .arg(fixture_dir("tiny-qwen3"))
        .args([
            "--prompt-tokens",
            "4",
            "--new-tokens",
            "3",
            "--train-batch",
            "2",
            "--train-tokens",
            "8",
            "--repeats",
            "1",
        ])
        .assert()
        .success();
    let summary = &json_lines(&output.get_output().stdout)[0];
    assert_eq!(summary["decode"].as_array().unwrap().len(), 3);
    assert_eq!(summary["ragged"]["sequences"], 128);
    assert_eq!(summary["ragged"]["in_flight"], 64);
    assert!(summary["train_step_ms"].as_f64().unwrap() > 0.0);
    let figures = &summary["figures"];
    for key in [
        "train_step_ms",
        "grpo_step_ms",
        "decode_batch8_tps",
        "decode_batch1_tps",
        "decode_batch64_tps",
        "decode_ragged64_tps",
    ] {
        assert!(figures[key].as_f64().unwrap() > 0.0, "{key}");
    }
}

#[test]
fn bench_all_measures_a_folder_alone_and_will_not_compare_it_with_another_shape() {
    let work = tempfile::tempdir().unwrap();
    let output = rollscope(work.path())
        .args(["--json", "bench", "all", "--model"])
        .arg(fixture_dir("tiny-qwen3"))
        .args(["--pairs", "2", "--repeats", "1", "--store-count", "300"])
        .assert()
        .success();
    let report = &json_lines(&output.get_output().stdout)[0];
    assert_eq!(report["pairs"], 2);
    assert_eq!(report["store"]["trajectories"], 300);
    let rows = report["model"].as_array().unwrap();
    let keys: Vec<&str> = rows
        .iter()
        .map(|row| row["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        [
            "train_step_ms",
            "grpo_step_ms",
            "decode_batch8_tps",
            "decode_batch1_tps",
            "decode_batch64_tps",
            "decode_ragged64_tps"
        ]
    );
    for row in rows {
        assert!(row["rollscope"].as_f64().unwrap() > 0.0, "{row}");
        assert!(
            row["reference"].is_null() && row["time_ratio"].is_null(),
            "{row}"
        );
    }
    assert!(report["grpo"]["grpo_step_ms"].as_f64().unwrap() > 0.0);
    assert!(report["grpo"]["trl"].is_null());
    let refused = rollscope(work.path())
        .args(["bench", "all", "--python", "python3", "--model"])
        .arg(fixture_dir("tiny-qwen3"))
        .assert()
        .failure();
    let message = String::from_utf8_lossy(&refused.get_output().stderr).to_string();
    assert!(message.contains("--model with --python"), "{message}");
}
