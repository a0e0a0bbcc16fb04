//! TRL's prompt–completion type: `{"prompt", "completion"}` per line, each either a string
//! (standard) or a list of messages (conversational), optionally with `tools`. The export
//! writes the conversational form: `prompt` is everything before the first assistant message,
//! `completion` the rest. TRL's GRPO trainer logs its samples in this shape too
//! (`log_completions=True`: `completions/completions_NNNNN.parquet`, with `step`, `advantage`
//! and a column per reward function): those rows become rollouts of their step, in groups.

use super::chat::{name_tool_results, read_messages, tool_specs, write_message};
use super::context::{Context, TaskDraft};
use super::document::read_records;
use super::fields::{into_object, take, take_required};
use super::intake::Intake;
use super::openai::tools;
use super::{ExportItem, Format, ImportError, ImportReport, Item, ToolArguments};
use crate::trajectory::{Message, Reward, Role, Trajectory};
use serde_json::{Map, Value};
use std::io::Write;

/// Reads a TRL prompt–completion file.
pub fn read(
    context: &mut Context<'_>,
    intake: &mut Intake<'_, '_>,
) -> Result<ImportReport, ImportError> {
    let path = context.path;
    read_records(path, intake, |value| parse(context, value))
}

fn parse(context: &mut Context<'_>, value: Value) -> Result<Vec<Item>, String> {
    let mut object = into_object(value, "")?;
    let prompt = side(
        take_required(&mut object, "prompt", "")?,
        "prompt",
        Role::User,
    )?;
    let completion = side(
        take_required(&mut object, "completion", "")?,
        "completion",
        Role::Assistant,
    )?;
    let tools = match take(&mut object, "tools") {
        Some(tools) => tool_specs(tools, "tools")?,
        None => Vec::new(),
    };
    let draft = TaskDraft {
        prompt: prompt.clone(),
        tools,
        ..TaskDraft::default()
    };
    let prompt_text: Vec<&str> = prompt
        .iter()
        .map(|message| message.content.as_str())
        .collect();
    let prompt_text = prompt_text.join("\n");
    let mut messages = prompt;
    messages.extend(completion);
    name_tool_results(&mut messages);
    let mut trajectory = context.trajectory(messages);
    if let Some(step) = object.get("step").and_then(Value::as_u64)
        && object.contains_key("advantage")
    {
        let (group, sample) = context.group_sample(Some(step), &prompt_text);
        apply_training_log(&mut trajectory, &mut object, step);
        trajectory.group = Some(group);
        trajectory.sample = Some(sample);
    }
    trajectory.extra = object;
    Ok(context.with_task(trajectory, draft))
}

/// What TRL's `log_completions` adds to a pair: the step (the policy version that sampled
/// it), the advantage, and one column per reward function. The reward's total is their sum,
/// as TRL weighs them by default (`reward_weights` of 1).
fn apply_training_log(trajectory: &mut Trajectory, object: &mut Map<String, Value>, step: u64) {
    object.remove("step");
    trajectory.policy_version = Some(step);
    trajectory.advantage = take(object, "advantage").as_ref().and_then(Value::as_f64);
    let rewards: Vec<String> = object
        .iter()
        .filter(|(_, value)| value.is_number())
        .map(|(key, _)| key.clone())
        .collect();
    if rewards.is_empty() {
        return;
    }
    let mut reward = Reward::default();
    for key in rewards {
        if let Some(value) = object.remove(&key).as_ref().and_then(Value::as_f64) {
            reward.total += value;
            reward.components.insert(key, value);
        }
    }
    trajectory.reward = Some(reward);
}

/// One side of the pair: a string is one message of `role`, a list holds messages.
fn side(value: Value, path: &str, role: Role) -> Result<Vec<Message>, String> {
    match value {
        Value::String(text) => Ok(vec![Message::new(role, text)]),
        messages => read_messages(messages, path),
    }
}

/// Writes one conversational `{"prompt", "completion", "tools"?}` line per trajectory that has
/// an assistant message, tool-call arguments as `arguments` says; returns how many were
/// written.
pub fn write(
    items: &mut dyn Iterator<Item = anyhow::Result<ExportItem>>,
    out: &mut dyn Write,
    arguments: ToolArguments,
) -> anyhow::Result<usize> {
    let mut written = 0;
    for item in items {
        let item = item?;
        let trajectory = &item.trajectory;
        let split = trajectory.prompt_messages().len();
        if split == trajectory.messages.len() {
            continue;
        }
        let keep_extra = trajectory.source_format == Format::TrlPromptCompletion.name();
        let write_all = |messages: &[Message]| -> Value {
            messages
                .iter()
                .map(|message| write_message(message, keep_extra, arguments))
                .collect()
        };
        let mut record = Map::new();
        record.insert("prompt".into(), write_all(&trajectory.messages[..split]));
        record.insert(
            "completion".into(),
            write_all(&trajectory.messages[split..]),
        );
        if let Some(tools) = tools(&item) {
            record.insert("tools".into(), tools);
        }
        if keep_extra {
            for (key, value) in &trajectory.extra {
                record.entry(key.clone()).or_insert_with(|| value.clone());
            }
        }
        serde_json::to_writer(&mut *out, &record)?;
        out.write_all(b"\n")?;
        written += 1;
    }
    Ok(written)
}
