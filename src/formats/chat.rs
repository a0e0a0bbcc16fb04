//! OpenAI chat messages, read and written: the shape most formats (OpenAI JSONL, tau-bench,
//! mini-swe-agent, SWE-agent history, TRL, verl prompts) share.

use super::ToolArguments;
use super::fields::{
    Object, element, field, into_array, into_object, take, take_array, take_object,
    take_required_string, take_string,
};
use crate::trajectory::{Message, Role, ToolCall};
use serde_json::{Map, Value, json};

/// Message `extra` key holding content parts that a plain string cannot rebuild (images,
/// annotations, several parts).
pub const CONTENT_PARTS: &str = "content_parts";
/// Message `extra` key holding, per tool call, the fields a `ToolCall` does not name.
pub const TOOL_CALL_EXTRAS: &str = "tool_call_extras";

/// Reads one OpenAI chat message; fields it does not name go to `extra`.
pub fn read_message(value: Value, path: &str) -> Result<Message, String> {
    let mut object = into_object(value, path)?;
    let role = take_required_string(&mut object, "role", path)?;
    let mut message = Message::new(Role::from(role), "");
    if let Some(content) = object.remove("content") {
        read_content(&mut message, content, &field(path, "content"))?;
    }
    for key in ["reasoning_content", "reasoning"] {
        if message.reasoning.is_none() && object.get(key).is_some_and(Value::is_string) {
            message.reasoning = take_string(&mut object, key, path)?;
        }
    }
    if let Some(calls) = take_array(&mut object, "tool_calls", path)? {
        read_tool_calls(&mut message, calls, &field(path, "tool_calls"))?;
    }
    message.tool_call_id = take_string(&mut object, "tool_call_id", path)?;
    message.name = take_string(&mut object, "name", path)?;
    message.extra.extend(object);
    Ok(message)
}

/// Reads an array of OpenAI chat messages.
pub fn read_messages(value: Value, path: &str) -> Result<Vec<Message>, String> {
    into_array(value, path)?
        .into_iter()
        .enumerate()
        .map(|(index, message)| read_message(message, &element(path, index)))
        .collect()
}

/// Sets a message's text from a `content` value: a string, null, or a list of parts. A
/// part's text is under `text`, `value` or `content` whatever its `type`; `reasoning`,
/// `reasoning_text`, `thinking` and `redacted_thinking` parts are the turn's reasoning;
/// `tool_call` parts (`{name, arguments}` inline or as a JSON string under `value`, as
/// LLaMA-Factory writes them) are tool calls. Parts a plain string cannot rebuild (images,
/// several parts, extra fields) are kept under `content_parts` for exports to write back.
pub fn read_content(message: &mut Message, content: Value, path: &str) -> Result<(), String> {
    let parts = match content {
        Value::Null => return Ok(()),
        Value::String(text) => {
            message.content = text;
            return Ok(());
        }
        Value::Array(parts) => parts,
        other => {
            return Err(format!(
                "{path}: expected a string or a list of content parts, found {}",
                super::fields::kind(&other)
            ));
        }
    };
    let mut texts = Vec::new();
    let mut reasoning = Vec::new();
    let mut plain = true;
    for (index, part) in parts.iter().enumerate() {
        let part_path = element(path, index);
        let object = match part {
            Value::Object(object) => object,
            Value::String(text) => {
                texts.push(text.as_str());
                plain = false;
                continue;
            }
            _ => return Err(format!("{part_path}: expected an object or a string")),
        };
        let text = ["text", "value", "content"]
            .iter()
            .find_map(|key| object.get(*key).and_then(Value::as_str));
        match object.get("type").and_then(Value::as_str) {
            Some(kind) if REASONING_PARTS.contains(&kind) => reasoning.extend(
                ["reasoning", "thinking"]
                    .iter()
                    .find_map(|key| object.get(*key).and_then(Value::as_str))
                    .or(text),
            ),
            Some(kind) if CALL_PARTS.contains(&kind) => {
                message.tool_calls.push(tool_call_part(object, &part_path)?);
                plain = false;
            }
            Some("text" | "input_text" | "output_text") => texts.extend(text),
            _ => {
                texts.extend(text);
                plain = false;
            }
        }
        let known = ["type", "text", "reasoning"];
        plain &= object
            .iter()
            .all(|(key, value)| known.contains(&key.as_str()) || is_empty(value));
    }
    plain &= texts.len() <= 1 && reasoning.len() <= 1;
    message.content = texts.join("\n");
    if !reasoning.is_empty() {
        message.reasoning = Some(reasoning.join("\n"));
    }
    if !plain {
        message
            .extra
            .insert(CONTENT_PARTS.into(), Value::Array(parts));
    }
    Ok(())
}

/// A tool call written as a content part: `{id?, name, arguments}` inline, or its `value`
/// (or `text`) a JSON string holding `{name, arguments}`.
fn tool_call_part(part: &Object, path: &str) -> Result<ToolCall, String> {
    let inline;
    let call = match ["value", "text"].iter().find_map(|key| part.get(*key)) {
        Some(Value::String(text)) => {
            inline = serde_json::from_str::<Value>(text).map_err(|error| {
                format!("{path}: a tool call that is not JSON `{{name, arguments}}` ({error})")
            })?;
            inline.as_object().ok_or_else(|| {
                format!("{path}: a tool call that is not a JSON object `{{name, arguments}}`")
            })?
        }
        Some(Value::Object(object)) => object,
        _ => part,
    };
    let name = call
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{path}: a tool call part without a `name`"))?;
    let arguments = call.get("arguments").cloned().unwrap_or(Value::Null);
    let arguments = match arguments {
        Value::Null => Value::Object(Object::new()),
        other => other,
    };
    let mut tool_call = ToolCall::from_json_arguments(name, &arguments);
    tool_call.id = ["id", "call_id"]
        .iter()
        .find_map(|key| call.get(*key).or(part.get(*key)))
        .and_then(Value::as_str)
        .map(str::to_string);
    Ok(tool_call)
}

/// Whether content parts hold a part of one of these types (then the message's calls or
/// reasoning came from them, and an export that writes the parts back must not write them
/// twice).
fn parts_hold(parts: &Value, types: &[&str]) -> bool {
    parts.as_array().is_some_and(|parts| {
        parts.iter().any(|part| {
            part.get("type")
                .and_then(Value::as_str)
                .is_some_and(|kind| types.contains(&kind))
        })
    })
}

const CALL_PARTS: &[&str] = &["tool_call", "function_call"];
const REASONING_PARTS: &[&str] = &[
    "reasoning",
    "reasoning_text",
    "thinking",
    "redacted_thinking",
];

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.is_empty(),
        Value::Object(object) => object.is_empty(),
        _ => false,
    }
}

/// Reads OpenAI tool calls (`{id, type, function: {name, arguments}}`, or the flat
/// `{id, name, arguments}`, or either written as a JSON string, as verifiers does) into the
/// message; other fields go to `tool_call_extras`.
pub fn read_tool_calls(message: &mut Message, calls: Vec<Value>, path: &str) -> Result<(), String> {
    let mut extras = Vec::new();
    for (index, call) in calls.into_iter().enumerate() {
        let path = element(path, index);
        let call = match call {
            Value::String(text) => serde_json::from_str(&text).map_err(|error| {
                format!("{path}: a tool call written as a string that is not JSON ({error})")
            })?,
            other => other,
        };
        let mut object = into_object(call, &path)?;
        let id = take_string(&mut object, "id", &path)?;
        if object.get("type").and_then(Value::as_str) == Some("function") {
            object.remove("type");
        }
        let mut function = match take_object(&mut object, "function", &path)? {
            Some(function) => function,
            None => std::mem::take(&mut object),
        };
        let function_path = field(&path, "function");
        let name = take_required_string(&mut function, "name", &function_path)?;
        let arguments = take(&mut function, "arguments").unwrap_or(Value::String(String::new()));
        let mut call = ToolCall::from_json_arguments(name, &arguments);
        call.id = id;
        message.tool_calls.push(call);
        if !function.is_empty() {
            object.insert("function".into(), Value::Object(function));
        }
        extras.push(Value::Object(object));
    }
    if extras.iter().any(|extra| !is_empty(extra)) {
        message
            .extra
            .insert(TOOL_CALL_EXTRAS.into(), Value::Array(extras));
    }
    Ok(())
}

/// Gives tool results without a `name` the name of the call they answer.
pub fn name_tool_results(messages: &mut [Message]) {
    for index in 0..messages.len() {
        let (earlier, rest) = messages.split_at_mut(index);
        let message = &mut rest[0];
        if message.role != Role::Tool || message.name.is_some() {
            continue;
        }
        let Some(id) = message.tool_call_id.as_deref() else {
            continue;
        };
        message.name = earlier
            .iter()
            .rev()
            .flat_map(|earlier| &earlier.tool_calls)
            .find(|call| call.id.as_deref() == Some(id))
            .map(|call| call.name.clone());
    }
}

/// A tool specification in OpenAI's chat shape `{"type": "function", "function": {…}}`,
/// from that shape, a bare `{name, description, parameters}`, or a Responses API
/// `{"type": "function", "name", …}`.
pub fn tool_spec(value: Value) -> Value {
    match value {
        Value::Object(object) if object.contains_key("function") => Value::Object(object),
        Value::Object(mut object) if object.contains_key("name") => {
            object.remove("type");
            json!({"type": "function", "function": object})
        }
        other => other,
    }
}

/// Tool specifications from a value that may be an array or a string holding one (ShareGPT).
pub fn tool_specs(value: Value, path: &str) -> Result<Vec<Value>, String> {
    let value = match value {
        Value::String(text) if text.trim().is_empty() => return Ok(Vec::new()),
        Value::String(text) => serde_json::from_str(&text)
            .map_err(|error| format!("{path}: the string is not a JSON list of tools: {error}"))?,
        other => other,
    };
    Ok(into_array(value, path)?
        .into_iter()
        .map(tool_spec)
        .collect())
}

/// A message in OpenAI's chat shape, reasoning as `reasoning_content`, tool-call arguments in
/// the form `arguments` asks for. With `keep_extra` (a message read from this same shape), the
/// fields it had are written back too.
pub fn write_message(message: &Message, keep_extra: bool, arguments: ToolArguments) -> Value {
    let mut object = Map::new();
    object.insert("role".into(), json!(message.role.as_str()));
    let parts = message.extra.get(CONTENT_PARTS).filter(|_| keep_extra);
    object.insert(
        "content".into(),
        parts.cloned().unwrap_or_else(|| json!(message.content)),
    );
    if let Some(reasoning) = &message.reasoning
        && !parts.is_some_and(|parts| parts_hold(parts, REASONING_PARTS))
    {
        object.insert("reasoning_content".into(), json!(reasoning));
    }
    if !message.tool_calls.is_empty() && !parts.is_some_and(|parts| parts_hold(parts, CALL_PARTS)) {
        let calls: Vec<Value> = calls_with_extras(message)
            .map(|(_, call, extra)| {
                let mut written = Map::new();
                if let Some(id) = &call.id {
                    written.insert("id".into(), json!(id));
                }
                written.insert("type".into(), json!("function"));
                let function = json!({"name": call.name, "arguments": arguments.write(call)});
                written.insert("function".into(), function);
                if let Some(extra) = extra.filter(|_| keep_extra) {
                    merge(&mut written, extra);
                }
                Value::Object(written)
            })
            .collect();
        object.insert("tool_calls".into(), Value::Array(calls));
    }
    if let Some(id) = &message.tool_call_id {
        object.insert("tool_call_id".into(), json!(id));
    }
    if let Some(name) = &message.name {
        object.insert("name".into(), json!(name));
    }
    if keep_extra {
        for (key, value) in &message.extra {
            if key != CONTENT_PARTS && key != TOOL_CALL_EXTRAS {
                object.insert(key.clone(), value.clone());
            }
        }
    }
    Value::Object(object)
}

/// Each tool call of a message, numbered, with the fields its source wrote beside it
/// (`tool_call_extras`), for exporters that write them back.
pub fn calls_with_extras(
    message: &Message,
) -> impl Iterator<Item = (usize, &ToolCall, Option<&Object>)> {
    let extras = message
        .extra
        .get(TOOL_CALL_EXTRAS)
        .and_then(Value::as_array);
    message
        .tool_calls
        .iter()
        .enumerate()
        .map(move |(index, call)| {
            let extra = extras
                .and_then(|extras| extras.get(index))
                .and_then(Value::as_object);
            (index, call, extra)
        })
}

/// Adds `extra`'s fields to `object`, merging into nested objects (`function`).
fn merge(object: &mut Object, extra: &Object) {
    for (key, value) in extra {
        match (object.get_mut(key), value) {
            (Some(Value::Object(inner)), Value::Object(more)) => merge(inner, more),
            _ => {
                object.insert(key.clone(), value.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::ArgumentsEncoding;

    #[test]
    fn tool_calls_keep_their_extra_fields_through_a_round_trip() {
        let source = json!({
            "role": "assistant", "content": null,
            "tool_calls": [{"index": 0, "id": "c1", "type": "function",
                            "function": {"name": "f", "arguments": "{\"x\": 1}"}}],
            "provider_specific_fields": null
        });
        let message = read_message(source, "messages[1]").unwrap();
        assert_eq!(message.tool_calls[0].name, "f");
        assert_eq!(message.tool_calls[0].encoding, ArgumentsEncoding::String);
        assert_eq!(message.extra[TOOL_CALL_EXTRAS], json!([{"index": 0}]));
        let written = write_message(&message, true, ToolArguments::AsRead);
        assert_eq!(written["tool_calls"][0]["index"], json!(0));
        assert_eq!(read_message(written, "").unwrap(), message);
    }

    #[test]
    fn content_parts_give_text_and_reasoning() {
        let mut message = Message::assistant("");
        let parts =
            json!([{"type": "reasoning", "reasoning": "think"}, {"type": "text", "text": "hi"}]);
        read_content(&mut message, parts, "content").unwrap();
        assert_eq!(message.content, "hi");
        assert_eq!(message.reasoning.as_deref(), Some("think"));
        assert!(message.extra.is_empty());
        let error = read_content(&mut message, json!(3), "messages[0].content").unwrap_err();
        assert!(error.starts_with("messages[0].content: expected a string"));
    }
}
