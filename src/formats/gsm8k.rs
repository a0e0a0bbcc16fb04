//! GSM8K (openai/grade-school-math) rows `{"question", "answer"}`, read by one rule wherever
//! they are used: the import (as tasks), the task sets (`gsm8k:train`, `gsm8k:test`, task
//! files), the embedded tokenizer's corpus and the claims check. The ground truth is the
//! number after the last `####`, thousands separators removed; the whole annotated answer is
//! the reference solution. Both splits ship with Rollscope (MIT, `examples/gsm8k/LICENSE`).

use super::context::{Context, TaskDraft};
use super::document::read_records;
use super::fields::{into_object, take_required_string};
use super::intake::Intake;
use super::{ImportError, ImportReport, Item};
use crate::trajectory::Message;
use serde_json::{Map, Value};

/// GSM8K's train split (7,473 problems), one row per line.
pub const TRAIN: &str = include_str!("../../examples/gsm8k/train.jsonl");
/// GSM8K's test split (1,319 problems), held out: evaluation only.
pub const TEST: &str = include_str!("../../examples/gsm8k/test.jsonl");

/// One GSM8K problem.
#[derive(Clone, Debug, PartialEq)]
pub struct Gsm8kRow {
    /// The question.
    pub question: String,
    /// The worked answer with `<<expr=result>>` calculator annotations and `#### answer`.
    pub answer: String,
}

impl Gsm8kRow {
    /// The row of a JSON object, its two fields taken out (the rest stays for the caller);
    /// the error names the field.
    pub fn take(object: &mut Map<String, Value>) -> Result<Self, String> {
        Ok(Self {
            question: take_required_string(object, "question", "")?,
            answer: take_required_string(object, "answer", "")?,
        })
    }

    /// The row of a JSON value (other fields ignored); the error names the field.
    pub fn from_value(value: &Value) -> Result<Self, String> {
        let mut object = value
            .as_object()
            .cloned()
            .ok_or("not a JSON object with `question` and `answer`")?;
        Self::take(&mut object)
    }

    /// The final answer as written after the last `####` (`1,002`).
    pub fn final_answer(&self) -> Option<&str> {
        self.answer.rsplit_once("####").map(|(_, tail)| tail.trim())
    }

    /// The ground truth: the final answer without thousands separators (`1002`), which must
    /// be a number; the error says what is wrong with `answer`.
    pub fn ground_truth(&self) -> Result<String, String> {
        let written = self.final_answer().ok_or("`answer` has no `#### N` line")?;
        let number: String = written.chars().filter(|&c| c != ',').collect();
        match number.parse::<f64>() {
            Ok(value) if value.is_finite() => Ok(number),
            _ => Err(format!(
                "`answer` ends in `#### {written}`, which is not a number"
            )),
        }
    }
}

/// The rows of a GSM8K JSONL text with their 1-based line numbers (blank lines skipped); the
/// error names `origin` and the line.
pub fn rows(text: &str, origin: &str) -> Result<Vec<(usize, Gsm8kRow)>, String> {
    super::json_lines(text, origin)?
        .into_iter()
        .map(|(line, value)| {
            into_object(value, "")
                .and_then(|mut object| Gsm8kRow::take(&mut object))
                .map(|row| (line, row))
                .map_err(|problem| format!("{origin}:{line}: {problem}"))
        })
        .collect()
}

/// The `(expression, result)` calculator annotations (`<<48/2=24>>`) of a worked answer.
pub fn calculations(answer: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut rest = answer;
    while let Some(start) = rest.find("<<") {
        let after = &rest[start + 2..];
        let Some(end) = after.find(">>") else { break };
        if let Some((expression, result)) = after[..end].split_once('=') {
            found.push((expression.to_string(), result.to_string()));
        }
        rest = &after[end + 2..];
    }
    found
}

/// Reads GSM8K rows as tasks.
pub fn read(
    context: &mut Context<'_>,
    intake: &mut Intake<'_, '_>,
) -> Result<ImportReport, ImportError> {
    let path = context.path;
    read_records(path, intake, |value| parse(context, value))
}

fn parse(context: &mut Context<'_>, value: Value) -> Result<Vec<Item>, String> {
    let mut object = into_object(value, "")?;
    let row = Gsm8kRow::take(&mut object)?;
    let ground_truth = row.ground_truth()?;
    let draft = TaskDraft {
        prompt: vec![Message::user(row.question)],
        ground_truth: Some(ground_truth),
        reference_solution: Some(row.answer),
        extra: object,
        ..TaskDraft::default()
    };
    let task = context.finish_task(draft);
    Ok(context.admit(task))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(answer: &str) -> Gsm8kRow {
        Gsm8kRow {
            question: "q".into(),
            answer: answer.into(),
        }
    }

    #[test]
    fn the_ground_truth_drops_thousands_separators_and_must_be_a_number() {
        let solved = row("so 1,000+2=<<1000+2=1002>>1,002\n#### 1,002");
        assert_eq!(solved.final_answer(), Some("1,002"));
        assert_eq!(solved.ground_truth(), Ok("1002".into()));
        assert_eq!(row("#### -3").ground_truth(), Ok("-3".into()));
        assert_eq!(
            row("no marker").ground_truth(),
            Err("`answer` has no `#### N` line".into())
        );
        assert!(
            row("#### many")
                .ground_truth()
                .unwrap_err()
                .contains("not a number")
        );
        assert_eq!(
            calculations(&solved.answer),
            [("1000+2".to_string(), "1002".to_string())]
        );
    }

    #[test]
    fn the_shipped_splits_read_whole_with_a_ground_truth_each() {
        for (text, origin, count) in [(TRAIN, "train", 7473), (TEST, "test", 1319)] {
            let rows = rows(text, origin).unwrap();
            assert_eq!(rows.len(), count);
            assert!(rows.iter().all(|(_, row)| row.ground_truth().is_ok()));
        }
    }

    #[test]
    fn a_bad_line_is_named() {
        let text = "{\"question\": \"a\", \"answer\": \"#### 1\"}\n\n{\"question\": 5}\n";
        assert_eq!(
            rows(text, "f.jsonl").unwrap_err(),
            "f.jsonl:3: question: expected a string, found a number"
        );
    }
}
