//! OpenAI Responses API items, as NeMo Gym writes rollouts: one JSON line
//! `{responses_create_params{input, tools}, response{output}, reward}`. Input and output are
//! lists of items: `message`, `reasoning` (kept as the next assistant message's reasoning),
//! `function_call` (joins the assistant message it follows) and `function_call_output`
//! (a tool result). A `developer` message becomes a system message, marked `source_role`.

use super::chat::{TOOL_CALL_EXTRAS, name_tool_results, read_content, tool_spec};
use super::context::{Context, TaskDraft};
use super::document::read_records;
use super::fields::{
    Object, element, field, into_array, into_object, take, take_number, take_object,
    take_required_string, take_string, text_of,
};
use super::intake::Intake;
use super::{ImportError, ImportReport, Item};
use crate::trajectory::{Message, Reward, Role, ToolCall};
use serde_json::Value;

/// Reads a file of Responses API rollouts.
pub fn read(
    context: &mut Context<'_>,
    intake: &mut Intake<'_, '_>,
) -> Result<ImportReport, ImportError> {
    let path = context.path;
    read_records(path, intake, |value| parse(context, value))
}

fn parse(context: &mut Context<'_>, value: Value) -> Result<Vec<Item>, String> {
    let mut object = into_object(value, "")?;
    let params_path = "responses_create_params";
    let mut params = take_object(&mut object, params_path, "")?.unwrap_or_default();
    let mut messages = Vec::new();
    if let Some(instructions) = take_string(&mut params, "instructions", params_path)? {
        messages.push(Message::system(instructions));
    }
    let input_path = field(params_path, "input");
    match take(&mut params, "input") {
        Some(Value::String(text)) => messages.push(Message::user(text)),
        Some(items) => read_items(&mut messages, into_array(items, &input_path)?, &input_path)?,
        None => {}
    }
    let tools = match take(&mut params, "tools") {
        Some(tools) => into_array(tools, &field(params_path, "tools"))?
            .into_iter()
            .map(tool_spec)
            .collect(),
        None => Vec::new(),
    };
    let mut response = take_object(&mut object, "response", "")?.unwrap_or_default();
    if let Some(output) = take(&mut response, "output") {
        read_items(
            &mut messages,
            into_array(output, "response.output")?,
            "response.output",
        )?;
    }
    name_tool_results(&mut messages);
    let mut trajectory = context.trajectory(messages);
    trajectory.reward = take_number(&mut object, "reward", "")?.map(Reward::scalar);
    for (key, rest) in [(params_path, params), ("response", response)] {
        if !rest.is_empty() {
            object.insert(key.into(), Value::Object(rest));
        }
    }
    trajectory.extra = object;
    let draft = TaskDraft::from_trajectory(&trajectory, tools);
    Ok(context.with_task(trajectory, draft))
}

/// Appends the messages a list of Responses items describes.
fn read_items(messages: &mut Vec<Message>, items: Vec<Value>, path: &str) -> Result<(), String> {
    for (index, item) in items.into_iter().enumerate() {
        let path = element(path, index);
        let mut item = into_object(item, &path)?;
        let kind = take_string(&mut item, "type", &path)?.unwrap_or_else(|| "message".into());
        match kind.as_str() {
            "message" => read_message_item(messages, item, &path)?,
            "reasoning" => {
                let mut message = Message::assistant("");
                let text = joined_texts(&mut item, "content")
                    .or_else(|| joined_texts(&mut item, "summary"));
                message.reasoning = Some(text.unwrap_or_default());
                if !item.is_empty() {
                    message
                        .extra
                        .insert("reasoning_item".into(), Value::Object(item));
                }
                messages.push(message);
            }
            "function_call" => {
                let name = take_required_string(&mut item, "name", &path)?;
                let arguments =
                    take(&mut item, "arguments").unwrap_or(Value::String(String::new()));
                let mut call = ToolCall::from_json_arguments(name, &arguments);
                call.id = take_string(&mut item, "call_id", &path)?;
                if messages
                    .last()
                    .is_none_or(|last| last.role != Role::Assistant)
                {
                    messages.push(Message::assistant(""));
                }
                if let Some(message) = messages.last_mut() {
                    push_call(message, call, item);
                }
            }
            "function_call_output" => {
                let mut message = Message::tool("");
                message.tool_call_id = take_string(&mut item, "call_id", &path)?;
                match take(&mut item, "output") {
                    Some(Value::String(text)) => message.content = text,
                    Some(parts @ Value::Array(_)) => {
                        read_content(&mut message, parts, &field(&path, "output"))?;
                    }
                    Some(other) => message.content = text_of(&other),
                    None => {}
                }
                message.extra.extend(item);
                messages.push(message);
            }
            other => {
                let mut message = Message::new(Role::Other(other.to_string()), "");
                message.extra.extend(item);
                messages.push(message);
            }
        }
    }
    Ok(())
}

/// A `message` item; an assistant message fills in a reasoning-only message just before it.
fn read_message_item(
    messages: &mut Vec<Message>,
    mut item: Object,
    path: &str,
) -> Result<(), String> {
    let role = take_required_string(&mut item, "role", path)?;
    let mut message = if role == "developer" {
        let mut message = Message::system("");
        message
            .extra
            .insert("source_role".into(), Value::String(role));
        message
    } else {
        Message::new(Role::from(role), "")
    };
    if let Some(content) = item.remove("content") {
        read_content(&mut message, content, &field(path, "content"))?;
    }
    message.extra.extend(item);
    match messages.last_mut() {
        Some(last)
            if message.role == Role::Assistant
                && last.role == Role::Assistant
                && last.content.is_empty()
                && last.tool_calls.is_empty()
                && last.reasoning.is_some() =>
        {
            last.content = message.content;
            last.extra.extend(message.extra);
        }
        _ => messages.push(message),
    }
    Ok(())
}

/// Adds a call to an assistant message, keeping the item's other fields aligned with it.
fn push_call(message: &mut Message, call: ToolCall, rest: Object) {
    let earlier = message.tool_calls.len();
    message.tool_calls.push(call);
    let extras = message
        .extra
        .entry(TOOL_CALL_EXTRAS)
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(extras) = extras {
        extras.resize(earlier, Value::Object(Object::new()));
        extras.push(Value::Object(rest));
    }
}

/// The texts of a list of `{type, text}` parts, joined; `None` when there are none.
fn joined_texts(item: &mut Object, key: &str) -> Option<String> {
    let parts = item.get(key)?.as_array()?;
    let texts: Vec<&str> = parts
        .iter()
        .filter_map(|part| part.get("text")?.as_str())
        .collect();
    if texts.is_empty() {
        return None;
    }
    let text = texts.join("\n");
    item.remove(key);
    Some(text)
}
