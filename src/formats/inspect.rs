//! Inspect evaluation logs. A `.json` log is one object `{version, eval, plan, results, stats,
//! samples}`; each sample `{id, epoch, input, target, messages, output, scores, events, …}`
//! becomes a trajectory. Inspect messages name a tool call's tool `function` and give its
//! `arguments` as an object; long texts may be stored once as `attachment://<hash>`.
//! Scores `C`/`I` (correct/incorrect) become a verdict, numbers a reward.

use super::chat::{TOOL_CALL_EXTRAS, name_tool_results, read_content, tool_spec};
use super::context::{Context, TaskDraft};
use super::document::read_document;
use super::fields::{
    Object, element, field, into_array, into_object, number, take, take_array,
    take_required_string, take_string, text_of,
};
use super::intake::Intake;
use super::{ImportError, ImportReport, Item};
use crate::trajectory::{Message, Reward, Role, StopReason, ToolCall};
use serde_json::Value;

/// Reads an Inspect `.json` log.
pub fn read(
    context: &mut Context<'_>,
    intake: &mut Intake<'_, '_>,
) -> Result<ImportReport, ImportError> {
    let mut report = ImportReport::default();
    let Some(log) = read_document(context.path, &mut report)? else {
        return Ok(report);
    };
    let mut log = match into_object(log, "") {
        Ok(log) => log,
        Err(message) => {
            report.problem(context.path, None, message);
            return Ok(report);
        }
    };
    let eval = log.remove("eval");
    let samples = match take_array(&mut log, "samples", "") {
        Ok(Some(samples)) if !samples.is_empty() => samples,
        Ok(_) => {
            let message = "the log holds no samples (was it written with --no-log-samples?)";
            report.problem(context.path, None, message.to_string());
            return Ok(report);
        }
        Err(message) => {
            report.problem(context.path, None, message);
            return Ok(report);
        }
    };
    for (index, sample) in samples.into_iter().enumerate() {
        let parse = |sample| parse_sample(context, eval.as_ref(), sample);
        if let Err(message) = intake.record(sample, parse, &mut report)? {
            let message = format!("{}: {message}", element("samples", index));
            report.problem(context.path, None, message);
        }
    }
    Ok(report)
}

/// One sample as a trajectory (and its task), with the log's `eval` header kept in `extra`.
pub fn parse_sample(
    context: &mut Context<'_>,
    eval: Option<&Value>,
    sample: Value,
) -> Result<Vec<Item>, String> {
    let mut sample = into_object(sample, "")?;
    let attachments = sample
        .get("attachments")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut messages_value = take(&mut sample, "messages").ok_or("no `messages` field")?;
    resolve_attachments(&mut messages_value, &attachments);
    let mut messages = Vec::new();
    for (position, message) in into_array(messages_value, "messages")?
        .into_iter()
        .enumerate()
    {
        messages.push(read_message(message, &element("messages", position))?);
    }
    name_tool_results(&mut messages);
    let mut trajectory = context.trajectory(messages);
    trajectory.reward = sample
        .get("scores")
        .and_then(Value::as_object)
        .and_then(reward);
    trajectory.stop_reason = stop_reason(&sample);
    trajectory.timings.total_ms = sample
        .get("total_time")
        .and_then(Value::as_f64)
        .map(|s| s * 1000.0);
    let ground_truth = sample
        .get("target")
        .filter(|target| !target.is_null())
        .map(text_of);
    let mut tools = tools_offered(&sample);
    resolve_attachments(&mut tools, &attachments);
    let tools = into_array(tools, "tools")
        .unwrap_or_default()
        .into_iter()
        .map(tool_spec)
        .collect();
    let task_set = eval
        .and_then(|eval| eval.get("task"))
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Some(eval) = eval {
        sample.insert("eval".into(), eval.clone());
    }
    trajectory.extra = sample;
    let draft = TaskDraft::from_trajectory(&trajectory, tools)
        .answer(ground_truth)
        .source(task_set);
    Ok(context.with_task(trajectory, draft))
}

/// An Inspect chat message: content as text or parts, tool calls naming their tool in
/// `function`, tool results naming it in `function` and failing with `error`.
fn read_message(value: Value, path: &str) -> Result<Message, String> {
    let mut object = into_object(value, path)?;
    let role = take_required_string(&mut object, "role", path)?;
    let mut message = Message::new(Role::from(role), "");
    if let Some(content) = object.remove("content") {
        read_content(&mut message, content, &field(path, "content"))?;
    }
    if let Some(calls) = take_array(&mut object, "tool_calls", path)? {
        let mut extras = Vec::new();
        for (index, call) in calls.into_iter().enumerate() {
            let call_path = element(&field(path, "tool_calls"), index);
            let mut call: Object = into_object(call, &call_path)?;
            let name = take_required_string(&mut call, "function", &call_path)?;
            let arguments =
                take(&mut call, "arguments").unwrap_or_else(|| Value::Object(Object::new()));
            let mut tool_call = ToolCall::from_json_arguments(name, &arguments);
            tool_call.id = take_string(&mut call, "id", &call_path)?;
            message.tool_calls.push(tool_call);
            extras.push(Value::Object(call));
        }
        message
            .extra
            .insert(TOOL_CALL_EXTRAS.into(), Value::Array(extras));
    }
    message.tool_call_id = take_string(&mut object, "tool_call_id", path)?;
    message.name = take_string(&mut object, "function", path)?;
    message.is_error = object.get("error").is_some_and(|error| !error.is_null());
    message.extra.extend(object);
    Ok(message)
}

/// Replaces every string `attachment://<hash>` inside `value` with the attached text.
fn resolve_attachments(value: &mut Value, attachments: &Object) {
    match value {
        Value::String(text) => {
            if let Some(Value::String(attached)) = text
                .strip_prefix("attachment://")
                .and_then(|hash| attachments.get(hash))
            {
                *text = attached.clone();
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| resolve_attachments(item, attachments)),
        Value::Object(object) => object
            .values_mut()
            .for_each(|item| resolve_attachments(item, attachments)),
        _ => {}
    }
}

/// The outcome: the first scorer's value is the total (and verdict, for `C`/`I`); every
/// numeric score is a named component.
fn reward(scores: &Object) -> Option<Reward> {
    let mut reward: Option<Reward> = None;
    for (name, score) in scores {
        let Some((value, verdict)) = score.get("value").and_then(score_value) else {
            continue;
        };
        let reward = reward.get_or_insert_with(|| Reward {
            total: value,
            passed: verdict,
            ..Reward::default()
        });
        reward.components.insert(name.clone(), value);
    }
    reward
}

/// An Inspect score value as a number and a verdict: `C` correct, `I` incorrect, `P` partial
/// (0.5), `N` no answer; numbers and booleans as they are.
fn score_value(value: &Value) -> Option<(f64, Option<bool>)> {
    match value {
        Value::String(letter) => match letter.as_str() {
            "C" => Some((1.0, Some(true))),
            "I" | "N" => Some((0.0, Some(false))),
            "P" => Some((0.5, Some(false))),
            other => other.trim().parse().ok().map(|number| (number, None)),
        },
        Value::Bool(flag) => Some((number(value)?, Some(*flag))),
        _ => number(value).map(|number| (number, None)),
    }
}

/// Why the sample ended: an error, a limit, or the model's own stop reason.
fn stop_reason(sample: &Object) -> StopReason {
    if sample.get("error").is_some_and(|error| !error.is_null()) {
        return StopReason::Error;
    }
    if let Some(limit) = sample.get("limit").filter(|limit| !limit.is_null()) {
        return match limit.get("type").and_then(Value::as_str) {
            Some("message") => StopReason::MaxTurns,
            Some("token") => StopReason::MaxTokens,
            Some("context") => StopReason::MaxContext,
            Some(other) => StopReason::Other(format!("{other}_limit")),
            None => StopReason::Other("limit".into()),
        };
    }
    let model_reason = sample
        .get("output")
        .and_then(|output| output.pointer("/choices/0/stop_reason"))
        .and_then(Value::as_str);
    match model_reason {
        None | Some("stop" | "tool_calls") => StopReason::Answered,
        Some("max_tokens") => StopReason::MaxTokens,
        Some("model_length") => StopReason::MaxContext,
        Some(other) => StopReason::Other(other.to_string()),
    }
}

/// The tools the model was offered: those of the first model call that had any.
fn tools_offered(sample: &Object) -> Value {
    let events = sample
        .get("events")
        .or_else(|| {
            sample
                .get("transcript")
                .and_then(|transcript| transcript.get("events"))
        })
        .and_then(Value::as_array);
    events
        .into_iter()
        .flatten()
        .filter(|event| event.get("event").and_then(Value::as_str) == Some("model"))
        .filter_map(|event| event.get("tools"))
        .find(|tools| tools.as_array().is_some_and(|tools| !tools.is_empty()))
        .cloned()
        .unwrap_or(Value::Array(Vec::new()))
}
