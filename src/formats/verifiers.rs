//! verifiers evaluation outputs (Prime Intellect's `vf-eval`): `results.jsonl`, one rollout
//! per row `{id, prompt, completion, answer, task, info, reward, <one column per reward
//! function>, generation_ms, scoring_ms, total_ms}`, with `metadata.json` beside it (env,
//! model, sampling arguments; for `NAME.results.jsonl`, `NAME.metadata.json`). Prompt and
//! completion are chat messages (tool calls may be JSON strings; a tool result without a
//! call id answers the first call still open). The reward's components are the other
//! numeric columns; the rollouts of one example (same prompt and answer) share a group; the
//! answer is the task's ground truth and `info.oai_tools` its tools.

use super::chat::{name_tool_results, read_messages, tool_spec};
use super::context::{Context, TaskDraft};
use super::document::read_records;
use super::fields::{into_object, number, take, take_number, take_required, text_of};
use super::intake::Intake;
use super::{ImportError, ImportReport, Item};
use crate::trajectory::{Message, Reward, Role};
use serde_json::Value;
use std::path::Path;

/// Columns that are not reward functions.
const NOT_REWARDS: &[&str] = &[
    "id",
    "example_id",
    "generation_ms",
    "scoring_ms",
    "total_ms",
];

/// Whether a record with these keys is a verifiers rollout (TRL's completion files have a
/// `step` column and no `reward`).
pub fn looks_like(has: &impl Fn(&str) -> bool) -> bool {
    has("prompt")
        && has("completion")
        && has("reward")
        && !has("step")
        && (has("task") || has("answer") || has("info") || has("example_id"))
}

/// Reads a `results.jsonl`, with the `metadata.json` beside it when there is one.
pub fn read(
    context: &mut Context<'_>,
    intake: &mut Intake<'_, '_>,
) -> Result<ImportReport, ImportError> {
    let path = context.path;
    let metadata = metadata_beside(path);
    read_records(path, intake, |value| {
        parse(context, value, metadata.as_ref())
    })
}

/// The run's `metadata.json`: beside `results.jsonl`, or `NAME.metadata.json` beside
/// `NAME.results.jsonl`.
fn metadata_beside(path: &Path) -> Option<Value> {
    let name = path.file_name()?.to_str()?;
    let beside = match name.strip_suffix("results.jsonl") {
        Some(stem) => path.with_file_name(format!("{stem}metadata.json")),
        None => path.with_file_name("metadata.json"),
    };
    let text = std::fs::read_to_string(beside).ok()?;
    serde_json::from_str(&text).ok()
}

fn parse(
    context: &mut Context<'_>,
    value: Value,
    metadata: Option<&Value>,
) -> Result<Vec<Item>, String> {
    let mut object = into_object(value, "")?;
    let prompt_value = take_required(&mut object, "prompt", "")?;
    let group_key = prompt_value.to_string() + &object.get("answer").map_or(String::new(), text_of);
    let mut messages = match prompt_value {
        Value::String(text) => vec![Message::user(text)],
        prompt => read_messages(prompt, "prompt")?,
    };
    match take_required(&mut object, "completion", "")? {
        Value::String(text) => messages.push(Message::assistant(text)),
        completion => messages.extend(read_messages(completion, "completion")?),
    }
    pair_results_by_position(&mut messages);
    name_tool_results(&mut messages);
    let (group, sample) = context.group_sample(None, &group_key);
    let mut trajectory = context.trajectory(messages);
    trajectory.group = Some(group);
    trajectory.sample = Some(sample);
    if let Some(total) = take_number(&mut object, "reward", "")? {
        let mut reward = Reward::scalar(total);
        let columns: Vec<String> = object
            .iter()
            .filter(|(key, value)| !NOT_REWARDS.contains(&key.as_str()) && number(value).is_some())
            .map(|(key, _)| key.clone())
            .collect();
        for key in columns {
            if let Some(value) = object.remove(&key).as_ref().and_then(number) {
                reward.components.insert(key, value);
            }
        }
        trajectory.reward = Some(reward);
    }
    trajectory.timings.generate_ms = take_number(&mut object, "generation_ms", "")?;
    trajectory.timings.reward_ms = take_number(&mut object, "scoring_ms", "")?;
    trajectory.timings.total_ms = take_number(&mut object, "total_ms", "")?;
    let ground_truth = take(&mut object, "answer").map(|answer| text_of(&answer));
    let tools: Vec<Value> = object
        .get("info")
        .and_then(|info| info.get("oai_tools"))
        .and_then(Value::as_array)
        .map(|tools| tools.iter().cloned().map(tool_spec).collect())
        .unwrap_or_default();
    if let Some(metadata) = metadata {
        object.insert("metadata".into(), metadata.clone());
    }
    let source = metadata
        .and_then(|metadata| metadata.get("env"))
        .or(object.get("task"))
        .and_then(Value::as_str)
        .map(str::to_string);
    trajectory.extra = object;
    let draft = TaskDraft::from_trajectory(&trajectory, tools)
        .answer(ground_truth)
        .source(source);
    Ok(context.with_task(trajectory, draft))
}

/// Gives each tool result without a call id the id of the first call still unanswered
/// before it.
fn pair_results_by_position(messages: &mut [Message]) {
    let mut open: std::collections::VecDeque<String> = std::collections::VecDeque::new();
    for message in messages.iter_mut() {
        match message.role {
            Role::Assistant => {
                open = message
                    .tool_calls
                    .iter()
                    .filter_map(|call| call.id.clone())
                    .collect();
            }
            Role::Tool => match &message.tool_call_id {
                Some(id) => open.retain(|open| open != id),
                None => message.tool_call_id = open.pop_front(),
            },
            _ => {}
        }
    }
}
