//! verl's files. Rollout dumps (`trainer.rollout_data_dir`, one `<step>.jsonl` per step): lines
//! `{input, output, gts, score, step, <reward extras>…}` where `input` is the decoded prompt and
//! `output` the decoded response, turn boundaries gone. Task rows (the parquet its
//! `data_preprocess` scripts write, as JSON): `{data_source, prompt, ability, reward_model
//! {style, ground_truth}, extra_info}`, imported as tasks.

use super::chat::read_messages;
use super::context::{Context, TaskDraft};
use super::document::read_records;
use super::fields::{
    into_object, number, take, take_count, take_number, take_object, take_required,
    take_required_string, text_of,
};
use super::intake::Intake;
use super::{ImportError, ImportReport, Item};
use crate::trajectory::{Message, Reward};
use serde_json::Value;

/// Reads a verl rollout dump. Responses to the same input at the same step are GRPO siblings:
/// they share a `group`, numbered by `sample` in file order.
pub fn read_rollouts(
    context: &mut Context<'_>,
    intake: &mut Intake<'_, '_>,
) -> Result<ImportReport, ImportError> {
    let path = context.path;
    read_records(path, intake, |value| parse_rollout(context, value))
}

fn parse_rollout(context: &mut Context<'_>, value: Value) -> Result<Vec<Item>, String> {
    let mut object = into_object(value, "")?;
    let input = take_required_string(&mut object, "input", "")?;
    let output = take_required_string(&mut object, "output", "")?;
    let ground_truth = take(&mut object, "gts").map(|truth| text_of(&truth));
    let score = take_number(&mut object, "score", "")?;
    let step = take_count(&mut object, "step", "")?;
    let (group, sample) = context.group_sample(step, &input);
    let mut trajectory = context.trajectory(vec![Message::user(input), Message::assistant(output)]);
    trajectory.policy_version = step;
    trajectory.group = Some(group);
    trajectory.sample = Some(sample);
    if let Some(total) = score {
        let mut reward = Reward::scalar(total);
        let numeric: Vec<String> = object
            .iter()
            .filter(|(_, value)| value.is_number())
            .map(|(key, _)| key.clone())
            .collect();
        for key in numeric {
            if let Some(value) = object.remove(&key).as_ref().and_then(number) {
                reward.components.insert(key, value);
            }
        }
        trajectory.reward = Some(reward);
    }
    trajectory.extra = object;
    let draft = TaskDraft::from_trajectory(&trajectory, Vec::new()).answer(ground_truth);
    Ok(context.with_task(trajectory, draft))
}

/// Reads verl task rows as tasks.
pub fn read_tasks(
    context: &mut Context<'_>,
    intake: &mut Intake<'_, '_>,
) -> Result<ImportReport, ImportError> {
    let path = context.path;
    read_records(path, intake, |value| parse_task(context, value))
}

fn parse_task(context: &mut Context<'_>, value: Value) -> Result<Vec<Item>, String> {
    let mut object = into_object(value, "")?;
    let prompt = match take_required(&mut object, "prompt", "")? {
        Value::String(text) => vec![Message::user(text)],
        messages => read_messages(messages, "prompt")?,
    };
    let mut reward_model = take_object(&mut object, "reward_model", "")?.unwrap_or_default();
    let ground_truth = take(&mut reward_model, "ground_truth").map(|truth| text_of(&truth));
    if !reward_model.is_empty() {
        object.insert("reward_model".into(), Value::Object(reward_model));
    }
    let mut extra_info = take_object(&mut object, "extra_info", "")?.unwrap_or_default();
    let reference_solution = take(&mut extra_info, "answer").map(|answer| text_of(&answer));
    if !extra_info.is_empty() {
        object.insert("extra_info".into(), Value::Object(extra_info));
    }
    let source = object
        .get("data_source")
        .and_then(Value::as_str)
        .map(str::to_string);
    let draft = TaskDraft {
        prompt,
        ground_truth,
        reference_solution,
        source,
        extra: object,
        ..TaskDraft::default()
    };
    let task = context.finish_task(draft);
    Ok(context.admit(task))
}
