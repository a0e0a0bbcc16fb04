//! OpenAI chat messages JSONL, one conversation per line: `{"messages": [...], "tools": [...]}`
//! with assistant `tool_calls` and `tool` results, as OpenAI's fine-tuning API, TRL's
//! SFTTrainer and OpenRLHF read it. Arguments may be JSON strings or objects on import. The
//! export writes them as `ToolArguments` says: by default as JSON objects, the shape TRL
//! documents for conversational tool-calling datasets (OpenAI's API writes JSON strings:
//! `ToolArguments::String`; `AsRead` keeps each call's own form). Conversations read from this
//! format get their unnamed fields back. An object re-imports with the same value, written
//! compactly.

use super::chat::{name_tool_results, read_messages, tool_specs, write_message};
use super::context::{Context, TaskDraft};
use super::document::read_records;
use super::fields::{into_object, take, take_required};
use super::intake::Intake;
use super::{ExportItem, Format, ImportError, ImportReport, Item, ToolArguments};
use crate::trajectory::{Message, Role};
use serde_json::{Map, Value};
use std::io::Write;

/// Reads an OpenAI messages file (JSONL, or a JSON array of records).
pub fn read(
    context: &mut Context<'_>,
    intake: &mut Intake<'_, '_>,
) -> Result<ImportReport, ImportError> {
    let path = context.path;
    read_records(path, intake, |value| parse(context, value))
}

fn parse(context: &mut Context<'_>, value: Value) -> Result<Vec<Item>, String> {
    let mut object = into_object(value, "")?;
    let mut messages = read_messages(take_required(&mut object, "messages", "")?, "messages")?;
    name_tool_results(&mut messages);
    let tools = match take(&mut object, "tools") {
        Some(tools) => tool_specs(tools, "tools")?,
        None => Vec::new(),
    };
    let mut trajectory = context.trajectory(messages);
    trajectory.extra = object;
    let draft = TaskDraft::from_trajectory(&trajectory, tools);
    Ok(context.with_task(trajectory, draft))
}

/// Writes one `{"messages", "tools"}` line per trajectory. Trajectories read from this format
/// get back the fields the data model does not name; others are written plainly.
pub fn write(
    items: &mut dyn Iterator<Item = anyhow::Result<ExportItem>>,
    out: &mut dyn Write,
    arguments: ToolArguments,
) -> anyhow::Result<usize> {
    super::jsonl::write_records(items, out, |item| record(item, arguments))
}

fn record(item: &ExportItem, arguments: ToolArguments) -> Value {
    let keep_extra = item.trajectory.source_format == Format::OpenaiMessages.name();
    let source = &item.trajectory.messages;
    let messages = source
        .iter()
        .enumerate()
        .map(|(index, message)| {
            let mut written = write_message(message, keep_extra, arguments);
            if message.role == Role::Tool
                && message.name.is_none()
                && let Some(name) = called_name(&source[..index], message.tool_call_id.as_deref())
            {
                written["name"] = Value::String(name.to_string());
            }
            written
        })
        .collect();
    let mut record = Map::new();
    record.insert("messages".into(), Value::Array(messages));
    if let Some(tools) = tools(item) {
        record.insert("tools".into(), tools);
    }
    if keep_extra {
        for (key, value) in &item.trajectory.extra {
            record.entry(key.clone()).or_insert_with(|| value.clone());
        }
    }
    Value::Object(record)
}

/// The name of the call with this id among earlier messages (TRL's tool messages carry the
/// tool's name).
fn called_name<'a>(earlier: &'a [Message], id: Option<&str>) -> Option<&'a str> {
    let id = id?;
    earlier
        .iter()
        .rev()
        .flat_map(|message| &message.tool_calls)
        .find(|call| call.id.as_deref() == Some(id))
        .map(|call| call.name.as_str())
}

/// The task's tools as an OpenAI `tools` list, when it offers any.
pub fn tools(item: &ExportItem) -> Option<Value> {
    let tools = &item.task.as_ref()?.tools;
    (!tools.is_empty()).then(|| Value::Array(tools.clone()))
}
