//! GSM8K as a task set: both MIT-licensed splits ship with Rollscope
//! (`examples/gsm8k/train.jsonl` to train on, `test.jsonl` held out for evaluation); any
//! other file of `{"question", "answer"}` lines loads the same way. The ground truth is the
//! number after `####`, written canonically; the whole annotated answer is kept as the
//! reference solution.

use super::Split;
use super::lines::read_lines;
use crate::agent::answer::canonical_number;
use crate::model::embedded::{GSM8K_TEST, GSM8K_TRAIN};
use crate::trajectory::Task;
use serde_json::Value;
use std::path::Path;

/// A task from one GSM8K row; the error names the field that is wrong.
pub fn task_from_row(id: String, row: &Value) -> Result<Task, String> {
    let text = |field: &str| {
        row.get(field)
            .and_then(Value::as_str)
            .ok_or_else(|| format!("`{field}` is missing or not a string"))
    };
    let question = text("question")?;
    let answer = text("answer")?;
    let (_, final_part) = answer
        .rsplit_once("####")
        .ok_or("`answer` has no `#### N` line")?;
    let ground_truth = canonical_number(final_part.trim()).ok_or_else(|| {
        format!(
            "the answer after `####` is not a number: `{}`",
            final_part.trim()
        )
    })?;
    let mut task = Task::new(id, "gsm8k", question);
    task.ground_truth = Some(ground_truth);
    task.reference_solution = Some(answer.to_string());
    Ok(task)
}

/// A shipped split: train (7,473 problems, ids `gsm8k-train-0000` on) or test (1,319,
/// `gsm8k-test-0000` on).
pub fn shipped(split: Split) -> anyhow::Result<Vec<Task>> {
    match split {
        Split::Train => parse(GSM8K_TRAIN, "examples/gsm8k/train.jsonl", "train"),
        Split::Eval => parse(GSM8K_TEST, "examples/gsm8k/test.jsonl", "test"),
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
    for (line, row) in read_lines(text, origin)? {
        let id = format!("gsm8k-{split}-{:04}", tasks.len());
        let task = task_from_row(id, &row)
            .map_err(|problem| anyhow::anyhow!("{origin}:{line}: {problem}"))?;
        tasks.push(task);
    }
    Ok(tasks)
}
