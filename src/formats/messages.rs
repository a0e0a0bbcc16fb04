//! A bare JSON array of chat messages, `[{role, content}, …]`, with no envelope: one
//! trajectory per file. mini-swe-agent's replay files and many hand-written transcripts have
//! this shape; the messages are read as OpenAI messages (tool calls and the `tool` role
//! included), and observations a harness wrote as `user` messages stay `user` messages.

use super::chat::{name_tool_results, read_messages};
use super::context::{Context, TaskDraft};
use super::document::read_single;
use super::intake::Intake;
use super::{ImportError, ImportReport, Item};
use serde_json::Value;

/// Reads a file holding one JSON array of messages.
pub fn read(
    context: &mut Context<'_>,
    intake: &mut Intake<'_, '_>,
) -> Result<ImportReport, ImportError> {
    let path = context.path;
    read_single(path, intake, |value| parse(context, value))
}

fn parse(context: &mut Context<'_>, value: Value) -> Result<Vec<Item>, String> {
    if !value.is_array() {
        return Err("expected a JSON array of messages `[{role, content}, …]`".into());
    }
    let mut messages = read_messages(value, "")?;
    if messages.is_empty() {
        return Err("the array holds no messages".into());
    }
    name_tool_results(&mut messages);
    let trajectory = context.trajectory(messages);
    let draft = TaskDraft::from_trajectory(&trajectory, Vec::new());
    Ok(context.with_task(trajectory, draft))
}
