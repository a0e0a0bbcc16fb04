//! TRL's stepwise-supervision type, what its PRMTrainer reads: `{"prompt": str,
//! "completions": [step, …], "labels": [bool, …]}`. On import the steps become spans of one
//! assistant message with scores 1 and 0 (source `trl-stepwise`, since the file does not say
//! who labelled them). On export a step's label is its score ≥ 0.5, taking a human score
//! first, then Monte Carlo, model and rule scores; the completions stop at the first step
//! without a score, and a trajectory whose first step has none is left out.

use super::context::{Context, TaskDraft};
use super::document::read_records;
use super::fields::{
    element, into_array, into_object, number, take_required, take_required_string,
};
use super::intake::Intake;
use super::steps::{solution_message, step_texts};
use super::{ExportItem, ImportError, ImportReport, Item};
use crate::trajectory::{Message, Role, ScoreSource, StepScore, Trajectory};
use serde_json::{Value, json};
use std::io::Write;

/// Reads a TRL stepwise file.
pub fn read(
    context: &mut Context<'_>,
    intake: &mut Intake<'_, '_>,
) -> Result<ImportReport, ImportError> {
    let path = context.path;
    read_records(path, intake, |value| parse(context, value))
}

fn parse(context: &mut Context<'_>, value: Value) -> Result<Vec<Item>, String> {
    let mut object = into_object(value, "")?;
    let prompt = take_required_string(&mut object, "prompt", "")?;
    let mut steps = Vec::new();
    for (index, step) in into_array(
        take_required(&mut object, "completions", "")?,
        "completions",
    )?
    .into_iter()
    .enumerate()
    {
        match step {
            Value::String(text) => steps.push(text),
            other => {
                return Err(format!(
                    "{}: expected a string, found {}",
                    element("completions", index),
                    super::fields::kind(&other)
                ));
            }
        }
    }
    let labels = into_array(take_required(&mut object, "labels", "")?, "labels")?;
    if labels.len() != steps.len() {
        return Err(format!(
            "labels: {} labels for {} completions",
            labels.len(),
            steps.len()
        ));
    }
    let mut step_scores = Vec::new();
    for (index, label) in labels.iter().enumerate() {
        let value =
            number(label).ok_or(format!("{}: expected a boolean", element("labels", index)))?;
        step_scores.push(StepScore {
            step: index as u32,
            value,
            source: ScoreSource::Other("trl-stepwise".into()),
            note: None,
        });
    }
    let solution = solution_message(&steps)?;
    let mut trajectory = context.trajectory(vec![Message::user(prompt), solution]);
    trajectory.step_scores = step_scores;
    trajectory.extra = object;
    let draft = TaskDraft::from_trajectory(&trajectory, Vec::new());
    Ok(context.with_task(trajectory, draft))
}

/// Writes one stepwise line per trajectory with a scored first step; returns how many.
pub fn write(
    items: &mut dyn Iterator<Item = anyhow::Result<ExportItem>>,
    out: &mut dyn Write,
) -> anyhow::Result<usize> {
    let mut written = 0;
    for item in items {
        let trajectory = item?.trajectory;
        let mut completions = Vec::new();
        let mut labels = Vec::new();
        for (step, text) in step_texts(&trajectory).into_iter().enumerate() {
            let Some(score) = best_score(&trajectory, step as u32) else {
                break;
            };
            completions.push(text);
            labels.push(score >= 0.5);
        }
        if completions.is_empty() {
            continue;
        }
        let record =
            json!({"prompt": question(&trajectory), "completions": completions, "labels": labels});
        serde_json::to_writer(&mut *out, &record)?;
        out.write_all(b"\n")?;
        written += 1;
    }
    Ok(written)
}

/// The score that labels a step: a human's first, then Monte Carlo, model, rule, others.
fn best_score(trajectory: &Trajectory, step: u32) -> Option<f64> {
    let rank = |source: &ScoreSource| match source {
        ScoreSource::Human => 0,
        ScoreSource::MonteCarlo => 1,
        ScoreSource::Model => 2,
        ScoreSource::Rule => 3,
        ScoreSource::Other(_) => 4,
    };
    trajectory
        .scores_of_step(step)
        .min_by_key(|score| rank(&score.source))
        .map(|score| score.value)
}

/// The question: the last user message before the first assistant message.
fn question(trajectory: &Trajectory) -> &str {
    trajectory
        .prompt_messages()
        .iter()
        .rev()
        .find(|message| message.role == Role::User)
        .map_or("", |message| message.content.as_str())
}
