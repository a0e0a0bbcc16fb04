//! GSM8K rows `{"question", "answer"}` (openai/grade-school-math), imported as tasks: the
//! ground truth is the number after `#### ` with thousands separators removed, and the whole
//! annotated answer is the reference solution.

use super::context::{Context, TaskDraft};
use super::document::read_records;
use super::fields::{into_object, take_required_string};
use super::intake::Intake;
use super::{ImportError, ImportReport, Item};
use crate::trajectory::Message;
use serde_json::Value;

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
    let question = take_required_string(&mut object, "question", "")?;
    let answer = take_required_string(&mut object, "answer", "")?;
    let ground_truth = final_number(&answer).ok_or("answer: no `#### <number>` line at its end")?;
    let draft = TaskDraft {
        prompt: vec![Message::user(question)],
        ground_truth: Some(ground_truth),
        reference_solution: Some(answer),
        extra: object,
        ..TaskDraft::default()
    };
    let task = context.finish_task(draft);
    Ok(context.admit(task))
}

/// The number after the last `####`, without thousands separators.
fn final_number(answer: &str) -> Option<String> {
    let (_, after) = answer.rsplit_once("####")?;
    let number: String = after.trim().chars().filter(|&c| c != ',').collect();
    (!number.is_empty()).then_some(number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn final_number_drops_thousands_separators() {
        assert_eq!(
            final_number("so 1,000+2=<<1000+2=1002>>1,002\n#### 1,002"),
            Some("1002".into())
        );
        assert_eq!(final_number("no marker"), None);
    }
}
