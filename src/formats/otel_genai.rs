//! A trace's GenAI spans as one conversation. Model calls (`gen_ai.operation.name` chat,
//! generate_content or text_completion, or OpenInference's LLM kind) give the messages:
//! `gen_ai.system_instructions`, `gen_ai.input.messages` and `gen_ai.output.messages` (JSON
//! `[{role, parts: [{type: text | reasoning | tool_call | tool_call_response, …}]}]`), the
//! older indexed `gen_ai.prompt.N.*` / `gen_ai.completion.N.*` attributes, OpenInference's
//! `llm.input_messages.N.message.*`, or `gen_ai.*.message` / `gen_ai.choice` events. Each
//! call's input continues the conversation so far (only what is new is added) and its output
//! follows. Tool spans (`execute_tool`, or OpenInference's TOOL kind) give the results their
//! model call did not see, and every result its time. Token usage, the model and the finish
//! reason stay on each assistant message; the trace id, service and agent on the trajectory.

use super::context::{Context, TaskDraft};
use super::otel_span::Span;
use super::{Item, chat};
use crate::trajectory::{Message, Role, ToolCall, Trajectory};
use serde_json::{Map, Value, json};

/// Attributes that hold a JSON list of messages (or instruction parts) as a string.
const MESSAGE_ATTRIBUTES: &[&str] = &[
    "gen_ai.system_instructions",
    "gen_ai.input.messages",
    "gen_ai.output.messages",
];

/// The text a trace holds, for the loss rule: every span's attributes and events, with the
/// message attributes parsed from their JSON strings.
pub fn source_text(spans: &[Span]) -> Value {
    let spans: Vec<Value> = spans
        .iter()
        .map(|span| {
            let mut attributes = span.attributes.clone();
            for key in MESSAGE_ATTRIBUTES {
                if let Some(Value::String(text)) = attributes.get(*key)
                    && let Ok(parsed) = serde_json::from_str::<Value>(text)
                {
                    attributes.insert((*key).into(), parsed);
                }
            }
            json!({"name": span.name, "attributes": attributes})
        })
        .collect();
    Value::Array(spans)
}

/// The trajectory of one trace.
pub fn trajectory(
    context: &mut Context<'_>,
    trace_id: &str,
    spans: &[Span],
) -> Result<Vec<Item>, String> {
    let mut messages: Vec<Message> = Vec::new();
    let mut model_calls = 0;
    for span in spans.iter().filter(|span| is_model_call(span)) {
        model_calls += 1;
        let (input, output) = call_messages(span)?;
        add_continuation(&mut messages, input);
        let first_output = messages.len();
        messages.extend(output);
        if let Some(answer) = messages[first_output..]
            .iter_mut()
            .find(|message| message.role == Role::Assistant)
        {
            answer.extra.extend(call_details(span));
        }
    }
    if model_calls == 0 {
        return Err(
            "no GenAI model call in this trace (gen_ai.operation.name chat, \
                    generate_content or text_completion)"
                .into(),
        );
    }
    for span in spans.iter().filter(|span| is_tool_call(span)) {
        add_tool_span(&mut messages, span);
    }
    chat::name_tool_results(&mut messages);
    let mut trajectory = context.trajectory(messages);
    describe(&mut trajectory, trace_id, spans);
    let draft = TaskDraft::from_trajectory(&trajectory, Vec::new());
    Ok(context.with_task(trajectory, draft))
}

fn operation(span: &Span) -> &str {
    span.attributes
        .get("gen_ai.operation.name")
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn kind(span: &Span) -> &str {
    span.attributes
        .get("openinference.span.kind")
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn is_model_call(span: &Span) -> bool {
    matches!(
        operation(span),
        "chat" | "generate_content" | "text_completion"
    ) || kind(span) == "LLM"
}

fn is_tool_call(span: &Span) -> bool {
    operation(span) == "execute_tool" || kind(span) == "TOOL"
}

/// A model call's input and output messages, from whichever convention it was written in.
fn call_messages(span: &Span) -> Result<(Vec<Message>, Vec<Message>), String> {
    let attribute = |key: &str| span.attributes.get(key);
    let mut input = Vec::new();
    if let Some(instructions) = attribute("gen_ai.system_instructions") {
        let parts = parsed(instructions);
        let mut system = Message::system("");
        chat::read_content(&mut system, parts, "gen_ai.system_instructions")?;
        input.push(system);
    }
    if let Some(messages) = attribute("gen_ai.input.messages") {
        input.extend(genai_messages(&parsed(messages), "gen_ai.input.messages")?);
        let output = match attribute("gen_ai.output.messages") {
            Some(messages) => genai_messages(&parsed(messages), "gen_ai.output.messages")?,
            None => Vec::new(),
        };
        return Ok((input, output));
    }
    for (prefix, inner) in [("gen_ai.prompt", ""), ("llm.input_messages", "message.")] {
        let found = indexed_messages(&span.attributes, prefix, inner);
        if !found.is_empty() {
            input.extend(found);
            let (output_prefix, output_inner) = if prefix == "gen_ai.prompt" {
                ("gen_ai.completion", "")
            } else {
                ("llm.output_messages", "message.")
            };
            let output = indexed_messages(&span.attributes, output_prefix, output_inner);
            return Ok((input, output));
        }
    }
    Ok(event_messages(span, input))
}

/// A JSON string parsed (other values as they are).
fn parsed(value: &Value) -> Value {
    match value {
        Value::String(text) => serde_json::from_str(text).unwrap_or_else(|_| value.clone()),
        other => other.clone(),
    }
}

/// Messages in the GenAI JSON shape `[{role, parts, finish_reason?, name?}]`; a message's
/// `tool_call_response` parts become tool results of their own.
fn genai_messages(value: &Value, path: &str) -> Result<Vec<Message>, String> {
    let Value::Array(entries) = value else {
        return Err(format!("{path}: expected a JSON list of messages"));
    };
    let mut messages = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let entry_path = format!("{path}[{index}]");
        let role = entry.get("role").and_then(Value::as_str).unwrap_or("user");
        let parts = entry
            .get("parts")
            .or(entry.get("content"))
            .cloned()
            .unwrap_or(Value::Null);
        let (responses, rest): (Vec<Value>, Vec<Value>) = match parts {
            Value::Array(parts) => parts.into_iter().partition(|part| {
                part.get("type").and_then(Value::as_str) == Some("tool_call_response")
            }),
            other => (Vec::new(), vec![other]),
        };
        for response in responses {
            let mut result = Message::tool(response_text(response.get("response")));
            result.tool_call_id = response
                .get("id")
                .and_then(Value::as_str)
                .map(str::to_string);
            result.name = response
                .get("name")
                .and_then(Value::as_str)
                .map(str::to_string);
            messages.push(result);
        }
        if rest.is_empty() || (role == "tool" && rest.iter().all(Value::is_null)) {
            continue;
        }
        let mut message = Message::new(Role::from(role.to_string()), "");
        let content = match rest.as_slice() {
            [Value::String(text)] => Value::String(text.clone()),
            [Value::Null] => Value::Null,
            _ => Value::Array(rest),
        };
        chat::read_content(&mut message, content, &format!("{entry_path}.parts"))?;
        if let Some(reason) = entry.get("finish_reason") {
            message.extra.insert("finish_reason".into(), reason.clone());
        }
        messages.push(message);
    }
    Ok(messages)
}

/// A tool response as text: a string as it is, a value nested under one `output`, `result`
/// or `content` key unwrapped, anything else as JSON.
fn response_text(response: Option<&Value>) -> String {
    let mut value = response.cloned().unwrap_or(Value::Null);
    loop {
        value = match value {
            Value::String(text) => return text,
            Value::Null => return String::new(),
            Value::Object(object) if object.len() == 1 => {
                let (key, inner) = object.into_iter().next().expect("one entry");
                if matches!(key.as_str(), "output" | "result" | "content") {
                    inner
                } else {
                    return json!({ key: inner }).to_string();
                }
            }
            other => return other.to_string(),
        };
    }
}

/// Messages written as indexed attributes: `PREFIX.N.INNERrole`, `…content`, and tool calls
/// as `…tool_calls.M.name` / `.arguments` / `.id` (OpenInference nests them one level more,
/// under `tool_call.function.`).
fn indexed_messages(attributes: &Map<String, Value>, prefix: &str, inner: &str) -> Vec<Message> {
    let mut messages = Vec::new();
    for index in 0.. {
        let base = format!("{prefix}.{index}.{inner}");
        let text = |key: &str| {
            attributes
                .get(&format!("{base}{key}"))
                .map(|value| match value {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                })
        };
        let (Some(role), content) = (text("role"), text("content")) else {
            break;
        };
        let mut message = Message::new(Role::from(role), content.unwrap_or_default());
        for call in 0.. {
            let call_base = format!("tool_calls.{call}.");
            let name = text(&format!("{call_base}name"))
                .or_else(|| text(&format!("{call_base}tool_call.function.name")));
            let Some(name) = name else {
                break;
            };
            let arguments = text(&format!("{call_base}arguments"))
                .or_else(|| text(&format!("{call_base}tool_call.function.arguments")))
                .unwrap_or_default();
            let mut tool_call = ToolCall::new(name, arguments);
            tool_call.id = text(&format!("{call_base}id"))
                .or_else(|| text(&format!("{call_base}tool_call.id")));
            message.tool_calls.push(tool_call);
        }
        message.tool_call_id = text("tool_call_id");
        messages.push(message);
    }
    messages
}

/// Messages from events: `gen_ai.{system,user,assistant,tool}.message` for the input and
/// `gen_ai.choice` for the output, each event's `content` (and `tool_calls`, `id`).
fn event_messages(span: &Span, mut input: Vec<Message>) -> (Vec<Message>, Vec<Message>) {
    let mut output = Vec::new();
    for (name, body) in &span.events {
        let role = match name.as_str() {
            "gen_ai.system.message" => Role::System,
            "gen_ai.user.message" => Role::User,
            "gen_ai.assistant.message" | "gen_ai.choice" => Role::Assistant,
            "gen_ai.tool.message" => Role::Tool,
            _ => continue,
        };
        let body = body.get("message").unwrap_or(body);
        let mut message = Message::new(role, response_text(body.get("content")));
        if let Some(Value::Array(calls)) = body.get("tool_calls") {
            let _ = chat::read_tool_calls(&mut message, calls.clone(), "tool_calls");
        }
        message.tool_call_id = body.get("id").and_then(Value::as_str).map(str::to_string);
        if name == "gen_ai.choice" {
            output.push(message);
        } else {
            input.push(message);
        }
    }
    (input, output)
}

/// Adds a call's input to the conversation: only the messages after the part it repeats.
fn add_continuation(messages: &mut Vec<Message>, input: Vec<Message>) {
    let same = |a: &Message, b: &Message| {
        a.role == b.role
            && a.content == b.content
            && a.tool_calls.len() == b.tool_calls.len()
            && a.tool_call_id == b.tool_call_id
    };
    let repeated =
        messages.len() <= input.len() && messages.iter().zip(&input).all(|(a, b)| same(a, b));
    let skip = if repeated {
        messages.len()
    } else {
        input
            .iter()
            .take_while(|message| messages.iter().any(|known| same(known, message)))
            .count()
    };
    messages.extend(input.into_iter().skip(skip));
}

/// What a model call says about itself: model, token usage, finish reasons, time.
fn call_details(span: &Span) -> Map<String, Value> {
    let mut details = Map::new();
    for (key, value) in &span.attributes {
        let kept = key.starts_with("gen_ai.usage.")
            || key.starts_with("llm.token_count.")
            || matches!(
                key.as_str(),
                "gen_ai.request.model"
                    | "gen_ai.response.model"
                    | "gen_ai.response.id"
                    | "gen_ai.response.finish_reasons"
                    | "gen_ai.provider.name"
                    | "gen_ai.system"
                    | "llm.model_name"
            );
        if kept {
            details.insert(key.clone(), value.clone());
        }
    }
    details.insert("span_id".into(), json!(span.span_id));
    details.insert("duration_ms".into(), json!(duration_ms(span)));
    details
}

fn duration_ms(span: &Span) -> f64 {
    span.end_ns.saturating_sub(span.start_ns) as f64 / 1e6
}

/// A tool span: its result's time, or the result itself when no model call saw it.
fn add_tool_span(messages: &mut Vec<Message>, span: &Span) {
    let text = |key: &str| {
        span.attributes.get(key).map(|value| match value {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
    };
    let id = text("gen_ai.tool.call.id");
    if let Some(id) = &id
        && let Some(result) = messages
            .iter_mut()
            .find(|message| message.role == Role::Tool && message.tool_call_id.as_ref() == Some(id))
    {
        result.latency_ms = Some(duration_ms(span));
        return;
    }
    let name = text("gen_ai.tool.name").or_else(|| text("tool.name"));
    let output = text("gen_ai.tool.call.result").or_else(|| text("output.value"));
    let Some(output) = output else {
        return;
    };
    let mut result = Message::tool(output);
    result.tool_call_id = id.clone();
    result.name = name;
    result.latency_ms = Some(duration_ms(span));
    let after = id.as_ref().and_then(|id| {
        messages.iter().position(|message| {
            message
                .tool_calls
                .iter()
                .any(|call| call.id.as_ref() == Some(id))
        })
    });
    match after {
        Some(index) => messages.insert(index + 1, result),
        None => messages.push(result),
    }
}

/// The trace's identity and timing on the trajectory.
fn describe(trajectory: &mut Trajectory, trace_id: &str, spans: &[Span]) {
    trajectory.extra.insert("trace_id".into(), json!(trace_id));
    let root = spans
        .iter()
        .find(|span| span.parent.is_empty())
        .or(spans.first());
    if let Some(root) = root {
        trajectory
            .extra
            .insert("root_span".into(), json!(root.name));
    }
    for key in [
        "service.name",
        "gen_ai.agent.name",
        "gen_ai.conversation.id",
    ] {
        if let Some(value) = spans.iter().find_map(|span| span.attributes.get(key)) {
            trajectory.extra.insert(key.into(), value.clone());
        }
    }
    let start = spans.iter().map(|span| span.start_ns).min().unwrap_or(0);
    let end = spans.iter().map(|span| span.end_ns).max().unwrap_or(0);
    trajectory.timings.started_at = i64::try_from(start / 1_000_000).ok();
    trajectory.timings.total_ms = Some(end.saturating_sub(start) as f64 / 1e6);
    let errors: Vec<Value> = spans
        .iter()
        .filter_map(|span| {
            span.status
                .clone()
                .map(|status| json!({"span": span.name, "status": status}))
        })
        .collect();
    if !errors.is_empty() {
        trajectory
            .extra
            .insert("span_status".into(), Value::Array(errors));
    }
}
