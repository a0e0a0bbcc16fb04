//! Math-Shepherd rows `{input, label, task}`: `input` is the question followed by a solution
//! whose steps (`Step 1: …`) each end with the tag `ки`; `label` is the same text with each tag
//! replaced by `+` or `-`. The labels were made automatically by completing the solution from
//! each step several times and checking whether any completion reaches the right answer, so
//! they become step scores of source `monte_carlo` (1 for `+`, 0 for `-`).

use super::context::{Context, TaskDraft};
use super::document::read_records;
use super::fields::{into_object, take_required_string, take_string};
use super::intake::Intake;
use super::steps::{answer_after, solution_message};
use super::{ImportError, ImportReport, Item};
use crate::trajectory::{Message, ScoreSource, StepScore};
use serde_json::Value;

/// The tag that ends each step in `input`.
const STEP_TAG: &str = "ки";

/// Reads Math-Shepherd rows as one-message solutions with per-step scores.
pub fn read(
    context: &mut Context<'_>,
    intake: &mut Intake<'_, '_>,
) -> Result<ImportReport, ImportError> {
    let path = context.path;
    read_records(path, intake, |value| parse(context, value))
}

fn parse(context: &mut Context<'_>, value: Value) -> Result<Vec<Item>, String> {
    let mut object = into_object(value, "")?;
    let input = take_required_string(&mut object, "input", "")?;
    let label = take_required_string(&mut object, "label", "")?;
    let task_set = take_string(&mut object, "task", "")?;
    let solution_start = input
        .find("Step 1:")
        .ok_or("input: no `Step 1:` starts the solution")?;
    let question = input[..solution_start].trim().to_string();
    let (steps, verdicts) = split_steps(&input, &label, solution_start)?;
    let solution = solution_message(&steps)?;
    let mut trajectory = context.trajectory(vec![Message::user(question), solution]);
    trajectory.step_scores = verdicts
        .iter()
        .enumerate()
        .map(|(step, &good)| StepScore {
            step: step as u32,
            value: if good { 1.0 } else { 0.0 },
            source: ScoreSource::MonteCarlo,
            note: None,
        })
        .collect();
    trajectory.final_answer = steps
        .last()
        .and_then(|step| answer_after(step, "The answer is:"));
    trajectory.extra = object;
    let draft = TaskDraft::from_trajectory(&trajectory, Vec::new()).source(task_set);
    Ok(context.with_task(trajectory, draft))
}

/// The step texts after `start` (tags removed) and each step's `+`/`-` from `label`.
fn split_steps(input: &str, label: &str, start: usize) -> Result<(Vec<String>, Vec<bool>), String> {
    let mut steps = Vec::new();
    let mut verdicts = Vec::new();
    let mut step_start = start;
    for (count, (tag_at, _)) in input.match_indices(STEP_TAG).enumerate() {
        if tag_at < start {
            continue;
        }
        let label_at = tag_at - count * (STEP_TAG.len() - 1);
        let verdict = match label.as_bytes().get(label_at) {
            Some(b'+') => true,
            Some(b'-') => false,
            _ => {
                return Err(format!(
                    "label: no `+` or `-` where input has its tag number {} (byte {label_at})",
                    count + 1
                ));
            }
        };
        steps.push(input[step_start..tag_at].trim().to_string());
        verdicts.push(verdict);
        step_start = tag_at + STEP_TAG.len();
    }
    if steps.is_empty() {
        return Err(format!("input: no step ends with the tag `{STEP_TAG}`"));
    }
    if !input[step_start..].trim().is_empty() {
        steps.push(input[step_start..].trim().to_string());
    }
    Ok((steps, verdicts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_give_steps_and_labels_give_verdicts() {
        let input = "Q? Step 1: a=1 ки\nStep 2: b=2 ки";
        let label = "Q? Step 1: a=1 +\nStep 2: b=2 -";
        let (steps, verdicts) = split_steps(input, label, 3).unwrap();
        assert_eq!(steps, ["Step 1: a=1", "Step 2: b=2"]);
        assert_eq!(verdicts, [true, false]);
        assert!(
            split_steps(input, "Q? Step 1: a=1 ?", 3)
                .unwrap_err()
                .starts_with("label:")
        );
    }
}
