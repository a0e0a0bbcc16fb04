//! PRM800K rows (openai/prm800k): `{question{problem, ground_truth_answer,
//! ground_truth_solution?}, label{steps, finish_reason}, labeler, …}`. Each step offers rated
//! `completions` (rating -1, 0 or 1) and names the one the solution went on with
//! (`chosen_completion`), or a step the labeler wrote (`human_completion`). The solution path
//! becomes one assistant message split into spans, with human step scores 0, 0.5 and 1; the
//! row itself stays in `extra` with every alternative. A step without completions (the row's
//! end) is left out.

use super::context::{Context, TaskDraft};
use super::document::read_records;
use super::fields::{
    element, field, into_object, keep_if_nonempty, take, take_object, take_required_string, text_of,
};
use super::intake::Intake;
use super::steps::{answer_after, solution_message};
use super::{ImportError, ImportReport, Item};
use crate::trajectory::{Message, ScoreSource, StepScore, StopReason};
use serde_json::Value;

/// Reads PRM800K rows as one-message solutions with human step scores.
pub fn read(
    context: &mut Context<'_>,
    intake: &mut Intake<'_, '_>,
) -> Result<ImportReport, ImportError> {
    let path = context.path;
    read_records(path, intake, |value| parse(context, value))
}

fn parse(context: &mut Context<'_>, value: Value) -> Result<Vec<Item>, String> {
    let mut object = into_object(value, "")?;
    let mut question = take_object(&mut object, "question", "")?.ok_or("no `question` field")?;
    let problem = take_required_string(&mut question, "problem", "question")?;
    let ground_truth = take(&mut question, "ground_truth_answer").map(|answer| text_of(&answer));
    let reference_solution =
        take(&mut question, "ground_truth_solution").map(|solution| text_of(&solution));
    keep_if_nonempty(&mut object, "question", question);
    let label = object.get("label").ok_or("no `label` field")?;
    let steps = label
        .get("steps")
        .and_then(Value::as_array)
        .ok_or("label.steps: expected an array")?;
    let mut texts = Vec::new();
    let mut scores = Vec::new();
    for (index, step) in steps.iter().enumerate() {
        let path = element("label.steps", index);
        let Some((text, rating)) = chosen_step(step, &path)? else {
            continue;
        };
        if let Some((value, note)) = rating {
            scores.push(StepScore {
                step: texts.len() as u32,
                value,
                source: ScoreSource::Human,
                note,
            });
        }
        texts.push(text);
    }
    if texts.is_empty() {
        return Err("label.steps: no step has a completion".into());
    }
    let stop_reason = match label.get("finish_reason").and_then(Value::as_str) {
        None | Some("solution") => StopReason::Answered,
        Some(other) => StopReason::Other(other.to_string()),
    };
    let final_answer = texts.last().and_then(|text| answer_after(text, "# Answer"));
    let solution = solution_message(&texts)?;
    let mut trajectory = context.trajectory(vec![Message::user(problem), solution]);
    trajectory.step_scores = scores;
    trajectory.stop_reason = stop_reason;
    trajectory.final_answer = final_answer;
    trajectory.extra = object;
    let mut draft = TaskDraft::from_trajectory(&trajectory, Vec::new()).answer(ground_truth);
    draft.reference_solution = reference_solution;
    Ok(context.with_task(trajectory, draft))
}

/// A step's text and its score (value, note), if it has one.
type ScoredStep = (String, Option<(f64, Option<String>)>);

/// The step on the solution path: the chosen completion, else the labeler's own step
/// (scored 1), else, at the path's end, the first completion rated -1 (or the first one).
/// `None` when the step has nothing.
fn chosen_step(step: &Value, path: &str) -> Result<Option<ScoredStep>, String> {
    let completions = step.get("completions").and_then(Value::as_array);
    let chosen = step
        .get("chosen_completion")
        .filter(|chosen| !chosen.is_null());
    let human = step
        .get("human_completion")
        .filter(|human| human.is_object());
    let completion = match (chosen, human, completions) {
        (Some(chosen), _, Some(completions)) => {
            let index = chosen.as_u64().ok_or(format!(
                "{}: expected a whole number",
                field(path, "chosen_completion")
            ))?;
            let completion = completions.get(index as usize).ok_or(format!(
                "{}: {index} is past the {} completions",
                field(path, "chosen_completion"),
                completions.len()
            ))?;
            (completion, None)
        }
        (_, Some(human), _) => (human, Some("written by the labeler")),
        (None, None, Some(completions)) if !completions.is_empty() => {
            let first_wrong = completions
                .iter()
                .find(|completion| completion.get("rating").and_then(Value::as_i64) == Some(-1));
            (first_wrong.unwrap_or(&completions[0]), None)
        }
        _ => return Ok(None),
    };
    let (completion, note) = completion;
    let text = completion
        .get("text")
        .and_then(Value::as_str)
        .ok_or(format!("{path}: the step's completion has no `text`"))?;
    let score = match (completion.get("rating").and_then(Value::as_i64), note) {
        (Some(rating), _) => Some((rating_value(rating), None)),
        (None, Some(note)) => Some((1.0, Some(note.to_string()))),
        (None, None) => None,
    };
    Ok(Some((text.to_string(), score)))
}

/// A PRM800K rating as a step score: -1 (wrong) 0, 0 (neutral) 0.5, 1 (right) 1.
fn rating_value(rating: i64) -> f64 {
    match rating {
        ..0 => 0.0,
        0 => 0.5,
        1.. => 1.0,
    }
}
