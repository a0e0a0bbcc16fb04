//! Metrics rows: TRL's names for a GRPO update and an SFT step, and a metrics.jsonl that
//! `formats::read_metrics` reads back, resumed without duplicated or torn rows.

use rollscope::formats::{MetricsSource, read_metrics};
use rollscope::train::loss::ObjectiveStats;
use rollscope::train::{GrpoIteration, GrpoUpdate, MetricsWriter, SftFigures, metrics_row};
use std::io::Write;

fn update(step: u64) -> GrpoUpdate {
    let iteration = |k: u64| GrpoIteration {
        loss: 0.1 * (step + k) as f64,
        grad_norm: 2.0 + k as f64,
        learning_rate: 1e-5 * (k + 1) as f64,
        objective: ObjectiveStats {
            clip_low: 0.01,
            clip_high: 0.03 * k as f64,
            clip_region: 0.01 + 0.03 * k as f64,
            mean_kl: 0.002,
            tokens: 640.0,
        },
        entropy: 1.5,
    };
    GrpoUpdate {
        iterations: vec![iteration(0), iteration(1)],
    }
}

#[test]
fn grpo_and_sft_figures_carry_the_names_users_know() {
    let values = update(3).metric_values();
    for name in [
        "loss",
        "grad_norm",
        "learning_rate",
        "kl",
        "entropy",
        "clip_ratio/low_mean",
        "clip_ratio/high_mean",
        "clip_ratio/region_mean",
        "policy_tokens",
    ] {
        assert!(values.contains_key(name), "{name} missing");
    }
    assert!(
        (values["loss"] - 0.35).abs() < 1e-12,
        "mean over iterations"
    );
    assert_eq!(values["grad_norm"], 2.5);
    assert_eq!(values["learning_rate"], 2e-5, "the last iteration's rate");
    assert!((values["clip_ratio/region_mean"] - 0.025).abs() < 1e-12);
    let sft = SftFigures {
        loss: 1.25,
        token_accuracy: 0.5,
        grad_norm: 0.75,
        learning_rate: 3e-4,
        tokens: 100,
        padded_tokens: 160,
    }
    .metric_values();
    assert_eq!(sft["mean_token_accuracy"], 0.5);
    assert_eq!(sft["policy_tokens"], 100.0);
}

#[test]
fn metrics_jsonl_reads_back_and_resumes_without_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs/grpo-0001/metrics.jsonl");
    let mut writer = MetricsWriter::open(&path).unwrap();
    let mut rows = Vec::new();
    for step in 1..=5 {
        let mut values = update(step).metric_values();
        values.insert("reward".into(), step as f64 / 10.0);
        values.insert("not_a_number".into(), f64::NAN);
        let row = metrics_row("grpo-0001", step, values);
        writer.append(&row).unwrap();
        rows.push(row);
    }
    drop(writer);
    let read = read_metrics(&path, "other").unwrap();
    assert_eq!(read.source, Some(MetricsSource::Rollscope));
    assert!(read.problems.is_empty(), "{:?}", read.problems);
    assert_eq!(read.rows, rows);
    assert!(!read.rows[0].values.contains_key("not_a_number"));

    let mut torn = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    torn.write_all(b"{\"run\": \"grpo-0001\", \"step\": 6, \"val")
        .unwrap();
    drop(torn);
    let mut resumed = MetricsWriter::resume(&path, 3).unwrap();
    let again = metrics_row("grpo-0001", 4, update(4).metric_values());
    resumed.append(&again).unwrap();
    let read = read_metrics(&path, "other").unwrap();
    assert!(read.problems.is_empty(), "{:?}", read.problems);
    let steps: Vec<u64> = read.rows.iter().map(|row| row.step).collect();
    assert_eq!(steps, vec![1, 2, 3, 4]);
    assert_eq!(read.rows[3], again);
}
