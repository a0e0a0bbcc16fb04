//! ShareGPT as LLaMA-Factory reads it: a JSON array (or JSONL) of
//! `{"conversations": [{"from", "value"}], "tools": "<JSON list>", "system"?}` where `from` is
//! `system`, `human`, `gpt`, `function_call` (a JSON `{name, arguments}` or a list of them)
//! or `observation` (a tool result).

use super::chat::tool_specs;
use super::context::{Context, TaskDraft};
use super::document::read_records;
use super::fields::{element, field, into_array, into_object, take, take_required, take_string};
use super::intake::Intake;
use super::{ExportItem, ImportError, ImportReport, Item};
use crate::trajectory::{Message, Role, ToolCall};
use serde_json::{Map, Value, json};
use std::io::Write;

/// How LLaMA-Factory joins several tool results answering one `function_call` turn.
const OBSERVATION_JOINER: &str = "\n</tool_response>\n<tool_response>\n";

/// Reads a ShareGPT file.
pub fn read(
    context: &mut Context<'_>,
    intake: &mut Intake<'_, '_>,
) -> Result<ImportReport, ImportError> {
    let path = context.path;
    read_records(path, intake, |value| parse(context, value))
}

fn parse(context: &mut Context<'_>, value: Value) -> Result<Vec<Item>, String> {
    let mut object = into_object(value, "")?;
    let turns = into_array(
        take_required(&mut object, "conversations", "")?,
        "conversations",
    )?;
    let tools = match take(&mut object, "tools") {
        Some(tools) => tool_specs(tools, "tools")?,
        None => Vec::new(),
    };
    let mut messages = Vec::new();
    if let Some(system) = take_string(&mut object, "system", "")? {
        messages.push(Message::system(system));
    }
    let mut pending_calls: Vec<String> = Vec::new();
    for (index, turn) in turns.into_iter().enumerate() {
        let path = element("conversations", index);
        let mut turn = into_object(turn, &path)?;
        let from = match take_string(&mut turn, "from", &path)? {
            Some(from) => from,
            None => {
                take_string(&mut turn, "role", &path)?.ok_or(format!("{path}: no `from` field"))?
            }
        };
        let value = match take_string(&mut turn, "value", &path)? {
            Some(value) => value,
            None => take_string(&mut turn, "content", &path)?.unwrap_or_default(),
        };
        let mut message = match from.as_str() {
            "human" | "user" => Message::user(value),
            "gpt" | "assistant" => Message::assistant(value),
            "system" => Message::system(value),
            "function_call" => {
                let message = function_call(&value, &field(&path, "value"))?;
                pending_calls = message
                    .tool_calls
                    .iter()
                    .map(|call| call.name.clone())
                    .collect();
                message
            }
            "observation" | "tool" => {
                let mut message = Message::tool(value);
                if let [name] = pending_calls.as_slice() {
                    message.name = Some(name.clone());
                }
                message
            }
            other => Message::new(Role::Other(other.to_string()), value),
        };
        message.extra.extend(turn);
        messages.push(message);
    }
    let mut trajectory = context.trajectory(messages);
    trajectory.extra = object;
    let draft = TaskDraft::from_trajectory(&trajectory, tools);
    Ok(context.with_task(trajectory, draft))
}

/// An assistant message from a `function_call` value: one call or a list of them.
fn function_call(value: &str, path: &str) -> Result<Message, String> {
    let parsed: Value = serde_json::from_str(value).map_err(|error| {
        format!("{path}: a function_call must hold JSON `{{name, arguments}}`: {error}")
    })?;
    let calls = match parsed {
        Value::Array(calls) => calls,
        single => vec![single],
    };
    let mut message = Message::assistant("");
    for (index, call) in calls.into_iter().enumerate() {
        let path = element(path, index);
        let mut call = into_object(call, &path)?;
        let name =
            take_string(&mut call, "name", &path)?.ok_or(format!("{path}: no `name` field"))?;
        let arguments = take(&mut call, "arguments").unwrap_or_else(|| json!({}));
        message
            .tool_calls
            .push(ToolCall::from_json_arguments(name, &arguments));
    }
    Ok(message)
}

/// Writes trajectories as one LLaMA-Factory ShareGPT JSON array. A trajectory whose turns
/// cannot alternate user-side and assistant-side as LLaMA-Factory requires is left out, as
/// are messages of other roles; text beside tool calls has no place in this format and is
/// dropped. Returns how many records were written.
pub fn write(
    items: &mut dyn Iterator<Item = anyhow::Result<ExportItem>>,
    out: &mut dyn Write,
) -> anyhow::Result<usize> {
    let mut written = 0;
    out.write_all(b"[")?;
    for item in items {
        let Some(record) = record(&item?) else {
            continue;
        };
        out.write_all(if written == 0 { b"\n  " } else { b",\n  " })?;
        serde_json::to_writer(&mut *out, &record)?;
        written += 1;
    }
    out.write_all(b"\n]\n")?;
    Ok(written)
}

/// One ShareGPT record, or `None` when the turns cannot alternate.
fn record(item: &ExportItem) -> Option<Value> {
    let mut turns: Vec<(&'static str, String)> = Vec::new();
    for (index, message) in item.trajectory.messages.iter().enumerate() {
        let (tag, value) = match message.role {
            Role::System if index == 0 => ("system", message.content.clone()),
            Role::User => ("human", message.content.clone()),
            Role::Assistant if message.tool_calls.is_empty() => ("gpt", message.content.clone()),
            Role::Assistant => ("function_call", calls_value(&message.tool_calls)),
            Role::Tool => ("observation", message.content.clone()),
            Role::System | Role::Other(_) => continue,
        };
        match turns.last_mut() {
            Some((last, text)) if *last == tag && tag != "function_call" => {
                text.push_str(if tag == "observation" {
                    OBSERVATION_JOINER
                } else {
                    "\n\n"
                });
                text.push_str(&value);
            }
            _ => turns.push((tag, value)),
        }
    }
    while turns
        .last()
        .is_some_and(|(tag, _)| matches!(*tag, "human" | "observation"))
    {
        turns.pop();
    }
    let dialogue = match turns.first() {
        Some(("system", _)) => &turns[1..],
        _ => &turns[..],
    };
    let alternates = !dialogue.is_empty()
        && dialogue.iter().enumerate().all(|(index, (tag, _))| {
            let user_side = matches!(*tag, "human" | "observation");
            user_side == (index % 2 == 0)
        });
    if !alternates {
        return None;
    }
    let conversations: Vec<Value> = turns
        .into_iter()
        .map(|(tag, value)| json!({"from": tag, "value": value}))
        .collect();
    let mut record = Map::new();
    record.insert("conversations".into(), Value::Array(conversations));
    let tools: Vec<Value> = item
        .task
        .iter()
        .flat_map(|task| &task.tools)
        .map(|tool| tool.get("function").unwrap_or(tool).clone())
        .collect();
    record.insert(
        "tools".into(),
        Value::String(Value::Array(tools).to_string()),
    );
    Some(Value::Object(record))
}

/// A `function_call` value: `{"name", "arguments": {…}}`, or a list of them for parallel calls.
fn calls_value(calls: &[ToolCall]) -> String {
    let written: Vec<Value> = calls
        .iter()
        .map(|call| {
            let arguments = call
                .parsed_arguments()
                .unwrap_or_else(|| json!(call.arguments));
            json!({"name": call.name, "arguments": arguments})
        })
        .collect();
    match written.as_slice() {
        [single] => single.to_string(),
        _ => Value::Array(written).to_string(),
    }
}
