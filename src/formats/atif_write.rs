//! Writing trajectories as ATIF v1.8 documents, one per JSONL line. Messages become steps by
//! role (system, user, assistant → agent; another role a user step that names it in
//! `extra.role`); tool results join the step before them as its observation (`source_call_id`
//! only when that step made the call, as ATIF requires); a tool call's arguments that are
//! not a JSON object are written as `{"input": text}`. Token ids and log-probs come from the
//! trace: an ATIF-imported step's own span, else each assistant turn's run of trained tokens
//! with everything before it as its prompt. The reward, the task and the run go to `extra`.
//! What an ATIF import kept (session and trajectory ids, the agent, notes, final metrics,
//! each step's timestamp, model and metrics) is written back, so a round trip is equal.

use super::atif_tokens::{TOKEN_SPAN, TokenSpan, step_ids};
use super::chat::calls_with_extras;
use super::fields::Object;
use super::{ExportItem, Format};
use crate::trajectory::{Message, Role, Trajectory};
use serde_json::{Map, Value, json};
use std::io::Write;

/// The schema version written.
pub const SCHEMA_VERSION: &str = "ATIF-v1.8";

/// Root fields an ATIF import keeps in the trajectory's `extra` and writes back.
const ROOT_FIELDS: &[&str] = &[
    "session_id",
    "trajectory_id",
    "notes",
    "final_metrics",
    "continued_trajectory_ref",
];

/// Writes one ATIF document per line; returns how many.
pub fn write(
    items: &mut dyn Iterator<Item = anyhow::Result<ExportItem>>,
    out: &mut dyn Write,
) -> anyhow::Result<usize> {
    super::jsonl::write_records(items, out, document)
}

/// One trajectory as an ATIF document.
pub fn document(item: &ExportItem) -> Value {
    let trajectory = &item.trajectory;
    let from_atif = trajectory.source_format == Format::Atif.name();
    let mut root = Map::new();
    root.insert("schema_version".into(), json!(SCHEMA_VERSION));
    if !from_atif {
        let id = trajectory.id.to_string();
        root.insert("session_id".into(), json!(id));
        root.insert("trajectory_id".into(), json!(id));
    }
    root.insert("agent".into(), agent(item));
    let steps = steps(trajectory);
    root.insert("steps".into(), Value::Array(steps));
    let mut extra = Map::new();
    if from_atif {
        let mut ordered = Map::new();
        ordered.insert("schema_version".into(), json!(SCHEMA_VERSION));
        for key in ROOT_FIELDS {
            if let Some(value) = trajectory.extra.get(*key) {
                ordered.insert((*key).into(), value.clone());
            }
        }
        ordered.append(&mut root);
        root = ordered;
        if let Some(Value::Object(kept)) = trajectory.extra.get("extra") {
            extra.extend(kept.clone());
        }
    } else {
        if let Some(reward) = &trajectory.reward {
            extra.insert("reward".into(), json!(reward.total));
            if !reward.components.is_empty() {
                extra.insert("reward_components".into(), json!(reward.components));
            }
        }
        for (key, value) in [
            ("task_id", trajectory.task_id.as_deref()),
            ("run", trajectory.run.as_deref()),
            ("final_answer", trajectory.final_answer.as_deref()),
        ] {
            if let Some(value) = value {
                extra.insert(key.into(), json!(value));
            }
        }
        if let Some(version) = trajectory.policy_version {
            extra.insert("policy_version".into(), json!(version));
        }
        extra.insert("source_format".into(), json!(trajectory.source_format));
    }
    if !extra.is_empty() {
        root.insert("extra".into(), Value::Object(extra));
    }
    Value::Object(root)
}

/// The agent object: the one an ATIF import kept, else Rollscope's, with the task's tools.
fn agent(item: &ExportItem) -> Value {
    let mut agent = match item.trajectory.extra.get("agent") {
        Some(Value::Object(agent))
            if agent.contains_key("name") && agent.contains_key("version") =>
        {
            agent.clone()
        }
        _ => {
            let mut agent = Map::new();
            agent.insert("name".into(), json!("rollscope"));
            agent.insert("version".into(), json!(env!("CARGO_PKG_VERSION")));
            if let Some(run) = &item.trajectory.run {
                agent.insert("model_name".into(), json!(run));
            }
            agent
        }
    };
    agent.remove("tool_definitions");
    if let Some(task) = &item.task
        && !task.tools.is_empty()
    {
        agent.insert("tool_definitions".into(), Value::Array(task.tools.clone()));
    }
    Value::Object(agent)
}

/// The steps: one per message but tool results, which join the step before them.
fn steps(trajectory: &Trajectory) -> Vec<Value> {
    let mut spans = own_spans(trajectory);
    let mut steps: Vec<Map<String, Value>> = Vec::new();
    let mut calls_of_step: Vec<String> = Vec::new();
    for (index, message) in trajectory.messages.iter().enumerate() {
        if message.role == Role::Tool {
            if steps.is_empty() {
                steps.push(new_step("system", String::new()));
                calls_of_step.clear();
            }
            let step = steps.last_mut().expect("a step");
            let result = observation_result(message, &calls_of_step);
            let observation = step
                .entry("observation")
                .or_insert_with(|| json!({"results": []}));
            if let Some(Value::Array(results)) = observation.get_mut("results") {
                results.push(result);
            }
            continue;
        }
        let mut step = message_step(message);
        calls_of_step = message
            .tool_calls
            .iter()
            .filter_map(|call| call.id.clone())
            .collect();
        if message.role == Role::Assistant
            && let Some(trace) = &trajectory.token_trace
            && let Some(span) = spans.remove(&index)
            && let Some(ids) = step_ids(trace, span)
        {
            let metrics = step
                .entry("metrics")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(metrics) = metrics {
                if let Some(prompt) = ids.prompt {
                    metrics.insert("prompt_token_ids".into(), json!(prompt));
                }
                metrics.insert("completion_token_ids".into(), json!(ids.completion));
                if let Some(logprobs) = ids.logprobs {
                    metrics.insert("logprobs".into(), json!(logprobs));
                }
            }
        }
        steps.push(step);
    }
    steps
        .into_iter()
        .enumerate()
        .map(|(index, mut step)| {
            let mut ordered = Map::new();
            ordered.insert("step_id".into(), json!(index + 1));
            ordered.append(&mut step);
            Value::Object(ordered)
        })
        .collect()
}

/// Where each assistant message's tokens lie: the spans an ATIF import wrote, else the
/// trace's runs of trained tokens in turn order, everything before a run as its prompt.
fn own_spans(trajectory: &Trajectory) -> std::collections::HashMap<usize, TokenSpan> {
    let written: std::collections::HashMap<usize, TokenSpan> = trajectory
        .messages
        .iter()
        .enumerate()
        .filter_map(|(index, message)| TokenSpan::of(message).map(|span| (index, span)))
        .collect();
    if !written.is_empty() {
        return written;
    }
    let Some(trace) = &trajectory.token_trace else {
        return written;
    };
    let logprobs = !trace.logprobs.is_empty();
    trajectory
        .turn_messages()
        .into_iter()
        .zip(trace.policy_runs())
        .map(|(index, run)| {
            let span = TokenSpan {
                prompt_start: Some(0),
                completion_start: run.start,
                completion_end: run.end,
                logprobs,
            };
            (index, span)
        })
        .collect()
}

fn new_step(source: &str, message: String) -> Map<String, Value> {
    let mut step = Map::new();
    step.insert("source".into(), json!(source));
    step.insert("message".into(), json!(message));
    step
}

/// A message as a step, with the fields an ATIF import kept on it.
fn message_step(message: &Message) -> Map<String, Value> {
    let source = match message.role {
        Role::System => "system",
        Role::Assistant => "agent",
        _ => "user",
    };
    let mut step = new_step(source, message.content.clone());
    if let Role::Other(role) = &message.role {
        let mut extra = Map::new();
        extra.insert("role".into(), json!(role));
        step.insert("extra".into(), Value::Object(extra));
    }
    for (key, value) in &message.extra {
        let kept = matches!(
            key.as_str(),
            "timestamp" | "reasoning_effort" | "llm_call_count" | "is_copied_context" | "extra"
        ) || (message.role == Role::Assistant
            && matches!(key.as_str(), "model_name" | "metrics"));
        if kept && key != TOKEN_SPAN {
            step.insert(key.clone(), value.clone());
        }
    }
    if message.role == Role::Assistant {
        if let Some(reasoning) = &message.reasoning {
            step.insert("reasoning_content".into(), json!(reasoning));
        }
        if !message.tool_calls.is_empty() {
            let calls: Vec<Value> = calls_with_extras(message)
                .map(|(index, call, extra)| {
                    let arguments = match call.parsed_arguments() {
                        Some(object @ Value::Object(_)) => object,
                        _ => json!({"input": call.arguments}),
                    };
                    let mut written = Map::new();
                    let id = call.id.clone().unwrap_or_else(|| format!("call_{index}"));
                    written.insert("tool_call_id".into(), json!(id));
                    written.insert("function_name".into(), json!(call.name));
                    written.insert("arguments".into(), arguments);
                    if let Some(extra) = extra {
                        for (key, value) in extra {
                            written.insert(key.clone(), value.clone());
                        }
                    }
                    Value::Object(written)
                })
                .collect();
            step.insert("tool_calls".into(), Value::Array(calls));
        }
    }
    step
}

/// A tool result as an observation result; its call id only when its step made that call.
fn observation_result(message: &Message, calls_of_step: &[String]) -> Value {
    let mut result = Object::new();
    match &message.tool_call_id {
        Some(id) if calls_of_step.contains(id) => {
            result.insert("source_call_id".into(), json!(id));
        }
        _ => {}
    }
    result.insert("content".into(), json!(message.content));
    for key in ["subagent_trajectory_ref", "extra"] {
        if let Some(value) = message.extra.get(key) {
            result.insert(key.into(), value.clone());
        }
    }
    if let Some(id) = &message.tool_call_id
        && !calls_of_step.contains(id)
    {
        let extra = result
            .entry("extra")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(extra) = extra {
            extra.insert("tool_call_id".into(), json!(id));
        }
    }
    Value::Object(result)
}
