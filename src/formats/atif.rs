//! ATIF, the Agent Trajectory Interchange Format (Harbor's RFC, v1.0–v1.8): one JSON document
//! `{schema_version, session_id, trajectory_id, agent, steps, notes, final_metrics,
//! continued_trajectory_ref, extra, subagent_trajectories}` per trajectory (a file of one, or
//! JSONL of many). A step becomes a message by its `source` (system, user, agent →
//! assistant); an agent step's `tool_calls` its calls, its `reasoning_content` its reasoning,
//! and every step's `observation.results` tool results after it (`source_call_id` → the
//! result's call id). Per-step token ids and log-probs become the trajectory's token trace
//! (`atif_tokens`); the other metrics, timestamps, models and `extra` stay on the message;
//! `is_copied_context` steps are marked so SFT exports leave them out. Embedded subagent
//! trajectories import as trajectories of their own, named from the result that delegated
//! to them. The agent's tool definitions are the task's tools.

use super::atif_tokens::TokenSteps;
use super::chat::{TOOL_CALL_EXTRAS, name_tool_results, read_content};
use super::context::{Context, TaskDraft};
use super::document::read_records;
use super::fields::{
    Object, element, field, into_array, into_object, take, take_array, take_object, take_required,
    take_required_string, take_string,
};
use super::harbor::Trial;
use super::intake::Intake;
use super::{ImportError, ImportReport, Item};
use crate::trajectory::{Message, Role, ToolCall, Trajectory};
use serde_json::Value;

/// Message `extra` key marking a step copied from an earlier trajectory for context (its
/// observation's results carry it too); SFT exports leave such messages out.
pub const COPIED_CONTEXT: &str = "is_copied_context";
/// Tool-result `extra` key naming the trajectories of embedded subagents it delegated to.
pub const SUBAGENT_IDS: &str = "subagent_trajectory_ids";
/// Trajectory `extra` key of a subagent: the ATIF `trajectory_id` of the one it belongs to.
pub const PARENT: &str = "parent_trajectory_id";
/// Step fields kept on the step's message as they are.
const STEP_FIELDS: &[&str] = &[
    "timestamp",
    "model_name",
    "reasoning_effort",
    "llm_call_count",
    "is_copied_context",
    "extra",
];

/// Whether a message was copied from an earlier trajectory for context (SFT exports leave
/// it out, as ATIF requires).
pub fn is_copied_context(message: &Message) -> bool {
    message.extra.get(COPIED_CONTEXT) == Some(&Value::Bool(true))
}

/// Whether a record with these keys is an ATIF trajectory.
pub fn looks_like(has: &impl Fn(&str) -> bool) -> bool {
    has("schema_version") && has("steps") && has("agent")
}

/// Reads a file of ATIF trajectories (one document, a JSON array, or JSONL).
pub fn read(
    context: &mut Context<'_>,
    intake: &mut Intake<'_, '_>,
) -> Result<ImportReport, ImportError> {
    let path = context.path;
    let trial = Trial::around(path);
    read_records(path, intake, |value| parse(context, value, trial.as_ref()))
}

/// One ATIF document (with its Harbor trial's reward and details, when it lies in a trial
/// folder): its subagents first, then itself.
fn parse(
    context: &mut Context<'_>,
    value: Value,
    trial: Option<&Trial>,
) -> Result<Vec<Item>, String> {
    let mut items = Vec::new();
    let mut trajectory = document(context, value, "", None, &mut items)?;
    let mut draft = TaskDraft::from_trajectory(&trajectory, tools_of(&trajectory));
    if let Some(trial) = trial {
        trial.apply(&mut trajectory);
        draft = draft.source(trial.task_source());
    }
    items.extend(context.with_task(trajectory, draft));
    Ok(items)
}

/// Reads one document at `path` into a trajectory; embedded subagents go to `items` first.
fn document(
    context: &mut Context<'_>,
    value: Value,
    path: &str,
    parent: Option<&str>,
    items: &mut Vec<Item>,
) -> Result<Trajectory, String> {
    let mut root = into_object(value, path)?;
    let version = take_required_string(&mut root, "schema_version", path)?;
    if !version.starts_with("ATIF-v") {
        return Err(format!(
            "{}: `{version}` is not a version this reader knows (ATIF-v1.0 to v1.8)",
            field(path, "schema_version")
        ));
    }
    let mut subagents = std::collections::HashMap::new();
    let subagents_path = field(path, "subagent_trajectories");
    let own_id = root
        .get("trajectory_id")
        .and_then(Value::as_str)
        .map(str::to_string);
    for (index, subagent) in take_array(&mut root, "subagent_trajectories", path)?
        .unwrap_or_default()
        .into_iter()
        .enumerate()
    {
        let sub_path = element(&subagents_path, index);
        let key = subagent
            .get("trajectory_id")
            .and_then(Value::as_str)
            .map(str::to_string);
        let mut child = document(context, subagent, &sub_path, own_id.as_deref(), items)?;
        let draft = TaskDraft::from_trajectory(&child, tools_of(&child));
        child.set_content_id();
        if let Some(key) = key {
            subagents.insert(key, child.id.to_string());
        }
        items.extend(context.with_task(child, draft));
    }
    let steps_path = field(path, "steps");
    let steps = into_array(take_required(&mut root, "steps", path)?, &steps_path)?;
    let mut messages = Vec::with_capacity(steps.len() * 2);
    let mut tokens = TokenSteps::default();
    for (index, step) in steps.into_iter().enumerate() {
        let step_path = element(&steps_path, index);
        read_step(step, &step_path, &subagents, &mut messages, &mut tokens)?;
    }
    name_tool_results(&mut messages);
    let mut trajectory = context.trajectory(messages);
    trajectory.token_trace = tokens.finish(&mut trajectory.messages);
    if let Some(parent) = parent {
        trajectory
            .extra
            .insert(PARENT.into(), Value::String(parent.to_string()));
    }
    trajectory.extra.extend(root);
    Ok(trajectory)
}

/// The agent's tool definitions, for the task.
fn tools_of(trajectory: &Trajectory) -> Vec<Value> {
    trajectory
        .extra
        .get("agent")
        .and_then(|agent| agent.get("tool_definitions"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// One step: its message, then a tool result per observation result.
fn read_step(
    step: Value,
    path: &str,
    subagents: &std::collections::HashMap<String, String>,
    messages: &mut Vec<Message>,
    tokens: &mut TokenSteps,
) -> Result<(), String> {
    let mut step = into_object(step, path)?;
    step.remove("step_id");
    let source = take_required_string(&mut step, "source", path)?;
    let role = match source.as_str() {
        "system" => Role::System,
        "user" => Role::User,
        "agent" => Role::Assistant,
        other => {
            return Err(format!(
                "{}: `{other}` is not a step source (system, user or agent)",
                field(path, "source")
            ));
        }
    };
    let mut message = Message::new(role, "");
    if let Some(content) = take(&mut step, "message") {
        read_content(&mut message, content, &field(path, "message"))?;
    }
    message.reasoning = take_string(&mut step, "reasoning_content", path)?;
    if let Some(calls) = take_array(&mut step, "tool_calls", path)? {
        read_calls(&mut message, calls, &field(path, "tool_calls"))?;
    }
    let observation = take_object(&mut step, "observation", path)?;
    if let Some(mut metrics) = take_object(&mut step, "metrics", path)? {
        tokens.read(&mut metrics, &field(path, "metrics"), messages.len())?;
        if !metrics.is_empty() {
            message
                .extra
                .insert("metrics".into(), Value::Object(metrics));
        }
    }
    for key in STEP_FIELDS {
        if let Some(value) = take(&mut step, key) {
            message.extra.insert((*key).into(), value);
        }
    }
    message.extra.extend(step);
    let copied = is_copied_context(&message);
    messages.push(message);
    if let Some(mut observation) = observation {
        let results_path = field(&field(path, "observation"), "results");
        let results = into_array(
            take_required(&mut observation, "results", &field(path, "observation"))?,
            &results_path,
        )?;
        for (index, result) in results.into_iter().enumerate() {
            let result_path = element(&results_path, index);
            let mut result = read_result(result, &result_path, subagents)?;
            if copied {
                result
                    .extra
                    .insert(COPIED_CONTEXT.into(), Value::Bool(true));
            }
            messages.push(result);
        }
    }
    Ok(())
}

/// ATIF tool calls `{tool_call_id, function_name, arguments, extra}`; each call's `extra` is
/// kept in `tool_call_extras`, as the chat reader keeps the fields a call has beyond its own.
fn read_calls(message: &mut Message, calls: Vec<Value>, path: &str) -> Result<(), String> {
    let mut extras = Vec::with_capacity(calls.len());
    for (index, call) in calls.into_iter().enumerate() {
        let path = element(path, index);
        let mut call = into_object(call, &path)?;
        let name = take_required_string(&mut call, "function_name", &path)?;
        let arguments = take(&mut call, "arguments").unwrap_or(Value::Object(Object::new()));
        let mut tool_call = ToolCall::from_json_arguments(name, &arguments);
        tool_call.id = take_string(&mut call, "tool_call_id", &path)?;
        message.tool_calls.push(tool_call);
        extras.push(Value::Object(call));
    }
    if extras
        .iter()
        .any(|extra| extra.as_object().is_some_and(|e| !e.is_empty()))
    {
        message
            .extra
            .insert(TOOL_CALL_EXTRAS.into(), Value::Array(extras));
    }
    Ok(())
}

/// One observation result as a tool result; references to embedded subagents are named by
/// the ids of their trajectories.
fn read_result(
    result: Value,
    path: &str,
    subagents: &std::collections::HashMap<String, String>,
) -> Result<Message, String> {
    let mut result = into_object(result, path)?;
    let mut message = Message::tool("");
    message.tool_call_id = take_string(&mut result, "source_call_id", path)?;
    if let Some(content) = take(&mut result, "content") {
        read_content(&mut message, content, &field(path, "content"))?;
    }
    if let Some(Value::Array(references)) = result.get("subagent_trajectory_ref") {
        let ids: Vec<Value> = references
            .iter()
            .filter_map(|reference| reference.get("trajectory_id").and_then(Value::as_str))
            .filter_map(|key| subagents.get(key))
            .map(|id| Value::String(id.clone()))
            .collect();
        if !ids.is_empty() {
            message.extra.insert(SUBAGENT_IDS.into(), Value::Array(ids));
        }
    }
    message.extra.extend(result);
    Ok(message)
}
