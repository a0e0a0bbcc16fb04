//! Lookup tasks: questions only the shipped Veltria collection answers, so the policy must
//! use `search` (and, for two-passage questions, arithmetic).

use crate::formats::json_lines;
use crate::trajectory::Task;
use serde::Deserialize;
use serde_json::Value;

/// The shipped questions (see `examples/search/README.md`).
pub const SHIPPED_QUESTIONS: &str = include_str!("../../../examples/search/questions.jsonl");

/// One question of the questions file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Question {
    id: String,
    question: String,
    answer: String,
    documents: Vec<String>,
    difficulty: u32,
}

/// All shipped lookup tasks, with the ids of the passages that answer each in the task's
/// `documents` field.
pub fn shipped() -> anyhow::Result<Vec<Task>> {
    let origin = "examples/search/questions.jsonl";
    let mut tasks = Vec::new();
    for (line, row) in json_lines(SHIPPED_QUESTIONS, origin).map_err(anyhow::Error::msg)? {
        let question: Question = serde_json::from_value(row)
            .map_err(|error| anyhow::anyhow!("{origin}:{line}: {error}"))?;
        let mut task = Task::new(question.id, "lookup", question.question);
        task.reference_solution = Some(format!(
            "The answer is in {}.\n#### {}",
            question.documents.join(" and "),
            question.answer
        ));
        task.ground_truth = Some(question.answer);
        task.difficulty = Some(question.difficulty);
        task.extra
            .insert("documents".into(), Value::from(question.documents));
        tasks.push(task);
    }
    Ok(tasks)
}
