//! SWE-agent `.traj` files, one trajectory per file. 1.x: `{history, trajectory, info,
//! replay_config}` where `history` holds OpenAI-style messages with `tool_calls` and tool
//! results carrying `tool_call_ids`. 0.x: the same `history` without tool calls, observations
//! as `user` messages, demonstrations flagged `is_demo`, and `trajectory[].state` a JSON
//! string. The conversation comes from `history` (or, when a file has none, from the
//! `trajectory` steps); everything else is kept in `extra`.

use super::chat::{name_tool_results, read_message};
use super::context::{Context, TaskDraft};
use super::document::read_document;
use super::fields::{Object, element, field, into_array, into_object, take_array, take_string};
use super::intake::Intake;
use super::{ImportError, ImportReport};
use crate::trajectory::{Message, StopReason, Trajectory};
use serde_json::Value;

/// Reads a SWE-agent `.traj` file.
pub fn read(
    context: &mut Context<'_>,
    intake: &mut Intake<'_, '_>,
) -> Result<ImportReport, ImportError> {
    let mut report = ImportReport::default();
    let Some(value) = read_document(context.path, &mut report)? else {
        return Ok(report);
    };
    if let Err(message) = intake.record(value, |value| parse(context, value), &mut report)? {
        report.problem(context.path, None, message);
    }
    Ok(report)
}

fn parse(context: &mut Context<'_>, value: Value) -> Result<Vec<super::Item>, String> {
    let mut object = into_object(value, "")?;
    let messages = match take_array(&mut object, "history", "")? {
        Some(history) => {
            let mut messages = history_messages(history)?;
            append_unlogged_steps(&mut messages, object.get("trajectory"));
            messages
        }
        None => match object.get("trajectory").cloned() {
            Some(steps) => step_messages(steps)?,
            None => return Err("neither `history` nor `trajectory` is there".into()),
        },
    };
    let mut trajectory = context.trajectory(messages);
    apply_info(&mut trajectory, object.get("info"));
    trajectory.extra = object;
    let draft = TaskDraft::from_trajectory(&trajectory, Vec::new());
    Ok(context.with_task(trajectory, draft))
}

/// Messages from `history`; a tool result's single `tool_call_ids` entry becomes its
/// `tool_call_id`.
fn history_messages(history: Vec<Value>) -> Result<Vec<Message>, String> {
    let mut messages = Vec::with_capacity(history.len());
    for (index, entry) in history.into_iter().enumerate() {
        let mut message = read_message(entry, &element("history", index))?;
        if message.tool_call_id.is_none()
            && let Some(Value::Array(ids)) = message.extra.get("tool_call_ids")
            && let [Value::String(id)] = ids.as_slice()
        {
            message.tool_call_id = Some(id.clone());
            message.extra.remove("tool_call_ids");
        }
        messages.push(message);
    }
    name_tool_results(&mut messages);
    Ok(messages)
}

/// Appends the steps `trajectory` holds after the last one `history` logged (SWE-agent 1.x
/// writes the final `submit` step to `trajectory` only): each step's response as an
/// assistant message and its observation as a tool result named by the command it ran.
fn append_unlogged_steps(messages: &mut Vec<Message>, steps: Option<&Value>) {
    let Some(Value::Array(steps)) = steps else {
        return;
    };
    let said = |step: &Value| -> Option<String> {
        ["response", "thought"]
            .iter()
            .find_map(|key| step.get(*key).and_then(Value::as_str))
            .map(|text| text.trim().to_string())
    };
    let logged: std::collections::HashSet<&str> = messages
        .iter()
        .filter(|message| message.role == crate::trajectory::Role::Assistant)
        .map(|message| message.content.trim())
        .collect();
    let Some(last_logged) = steps
        .iter()
        .rposition(|step| said(step).is_some_and(|text| logged.contains(text.as_str())))
    else {
        return;
    };
    let mut unlogged = Vec::new();
    for step in &steps[last_logged + 1..] {
        let Some(response) = step.get("response").and_then(Value::as_str) else {
            continue;
        };
        unlogged.push(Message::assistant(response));
        if let Some(observation) = step.get("observation").and_then(Value::as_str) {
            let mut result = Message::tool(observation);
            result.name = step
                .get("action")
                .and_then(Value::as_str)
                .and_then(|action| action.split_whitespace().next())
                .map(str::to_string);
            unlogged.push(result);
        }
    }
    messages.extend(unlogged);
}

/// Messages rebuilt from `trajectory` steps when there is no `history`: each step's
/// `response` as an assistant message and its `observation` as a user message, as 0.x
/// showed them to the model.
fn step_messages(steps: Value) -> Result<Vec<Message>, String> {
    let mut messages = Vec::new();
    for (index, step) in into_array(steps, "trajectory")?.into_iter().enumerate() {
        let path = element("trajectory", index);
        let mut step: Object = into_object(step, &path)?;
        let response = take_string(&mut step, "response", &path)?.unwrap_or_default();
        let observation = take_string(&mut step, "observation", &path)?;
        messages.push(Message::assistant(response));
        if let Some(observation) = observation {
            messages.push(Message::user(observation));
        }
    }
    if messages.is_empty() {
        return Err(format!("{}: no steps", field("", "trajectory")));
    }
    Ok(messages)
}

/// The stop reason (`info.exit_status`) and the submission as the final answer (SWE-agent
/// and mini-swe-agent write both the same way).
pub fn apply_info(trajectory: &mut Trajectory, info: Option<&Value>) {
    let Some(info) = info else {
        return;
    };
    if let Some(status) = info.get("exit_status").and_then(Value::as_str) {
        trajectory.stop_reason = StopReason::Other(status.to_string());
    }
    if let Some(submission) = info.get("submission").and_then(Value::as_str)
        && !submission.trim().is_empty()
    {
        trajectory.final_answer = Some(submission.to_string());
    }
}
