//! GSM8K as a task set: both MIT-licensed splits ship with Rollscope
//! (`examples/gsm8k/train.jsonl` to train on, `test.jsonl` held out for evaluation); any
//! other file of `{"question", "answer"}` lines loads the same way, read by
//! `formats::gsm8k`'s one rule (the ground truth: the number after `####` without thousands
//! separators; the whole annotated answer kept as the reference solution).

use super::Split;
use crate::formats::gsm8k::{Gsm8kRow, TEST, TRAIN};
use crate::formats::json_lines;
use crate::trajectory::Task;
use serde_json::Value;
use std::path::Path;

/// A task from one GSM8K row (`formats::gsm8k`'s rule); the error names the field.
pub fn task_from_row(id: String, row: &Value) -> Result<Task, String> {
    let row = Gsm8kRow::from_value(row)?;
    let ground_truth = row.ground_truth()?;
    let mut task = Task::new(id, "gsm8k", row.question);
    task.ground_truth = Some(ground_truth);
    task.reference_solution = Some(row.answer);
    Ok(task)
}

/// A shipped split: train (7,473 problems, ids `gsm8k-train-0000` on) or test (1,319,
/// `gsm8k-test-0000` on).
pub fn shipped(split: Split) -> anyhow::Result<Vec<Task>> {
    match split {
        Split::Train => parse(TRAIN, "examples/gsm8k/train.jsonl", "train"),
        Split::Eval => parse(TEST, "examples/gsm8k/test.jsonl", "test"),
    }
}

/// A GSM8K-shaped file, ids `gsm8k-<file stem>-0000` on; the error names file and line.
pub fn load(path: &Path) -> anyhow::Result<Vec<Task>> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| anyhow::anyhow!("cannot read {}: {error}", path.display()))?;
    let stem = path
        .file_stem()
        .map_or("file".into(), |stem| stem.to_string_lossy().into_owned());
    parse(&text, &path.display().to_string(), &stem)
}

fn parse(text: &str, origin: &str, split: &str) -> anyhow::Result<Vec<Task>> {
    let mut tasks = Vec::new();
    for (line, row) in json_lines(text, origin).map_err(anyhow::Error::msg)? {
        let id = format!("gsm8k-{split}-{:04}", tasks.len());
        let task = task_from_row(id, &row)
            .map_err(|problem| anyhow::anyhow!("{origin}:{line}: {problem}"))?;
        tasks.push(task);
    }
    Ok(tasks)
}
