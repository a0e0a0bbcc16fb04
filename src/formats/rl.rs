//! RL task rows, one per line: `{"question", "prompt", "ground_truth", "full_answer"}` — what
//! GRPO samples from (`prompt`, as chat messages) and verifies against (`ground_truth`), with a
//! worked solution (`full_answer`), as the seed recipe's RL data has them; `tools` is added
//! when the task offers any.
//!
//! `full_answer` is the completion as the chat templates write it: assistant text, each tool
//! call as `<tool_call>\n{"name", "arguments"}\n</tool_call>`, each result as
//! `<tool_response>\n…\n</tool_response>`, reasoning as `<think>\n…\n</think>`, joined by
//! newlines. Reading splits it back into messages (the k-th result answers the k-th call of
//! the turn before; call ids are not kept, nor text around the parts' edges). The task gets
//! the row's `full_answer` as its reference solution.

use super::chat::{read_messages, tool_specs, write_message};
use super::context::{Context, TaskDraft};
use super::document::read_records;
use super::fields::{into_object, take, take_required_string, take_string, text_of};
use super::intake::Intake;
use super::openai::tools;
use super::{ExportItem, Format, ImportError, ImportReport, Item, ToolArguments};
use crate::trajectory::{Message, Role, ToolCall};
use serde_json::{Map, Value, json};
use std::io::Write;

const CALL_OPEN: &str = "<tool_call>";
const CALL_CLOSE: &str = "</tool_call>";
const RESPONSE_OPEN: &str = "<tool_response>";
const RESPONSE_CLOSE: &str = "</tool_response>";
const THINK_OPEN: &str = "<think>";
const THINK_CLOSE: &str = "</think>";

/// Reads RL task rows as a task and a trajectory each.
pub fn read(
    context: &mut Context<'_>,
    intake: &mut Intake<'_, '_>,
) -> Result<ImportReport, ImportError> {
    let path = context.path;
    read_records(path, intake, |value| parse(context, value))
}

fn parse(context: &mut Context<'_>, value: Value) -> Result<Vec<Item>, String> {
    let mut object = into_object(value, "")?;
    let question = take_string(&mut object, "question", "")?;
    let prompt = match take(&mut object, "prompt") {
        Some(Value::String(text)) => vec![Message::user(text)],
        Some(messages) => read_messages(messages, "prompt")?,
        None => vec![Message::user(
            question
                .clone()
                .ok_or("the record has neither `prompt` nor `question`")?,
        )],
    };
    let asked = prompt
        .iter()
        .rev()
        .find(|message| message.role == Role::User)
        .map(|message| message.content.as_str());
    if let Some(question) = question.filter(|question| Some(question.as_str()) != asked) {
        object.insert("question".into(), Value::String(question));
    }
    let ground_truth = take(&mut object, "ground_truth").map(|truth| text_of(&truth));
    let full_answer = take_required_string(&mut object, "full_answer", "")?;
    let tools = match take(&mut object, "tools") {
        Some(tools) => tool_specs(tools, "tools")?,
        None => Vec::new(),
    };
    let mut messages = prompt.clone();
    messages.extend(read_completion(&full_answer)?);
    let mut trajectory = context.trajectory(messages);
    trajectory.extra = object;
    let draft = TaskDraft {
        prompt,
        tools,
        ground_truth,
        reference_solution: Some(full_answer),
        ..TaskDraft::default()
    };
    Ok(context.with_task(trajectory, draft))
}

/// Splits a `full_answer` into assistant and tool messages.
fn read_completion(text: &str) -> Result<Vec<Message>, String> {
    let mut messages: Vec<Message> = Vec::new();
    let mut turn: Option<Message> = None;
    let mut rest = text;
    loop {
        let call = rest.find(CALL_OPEN);
        let response = rest.find(RESPONSE_OPEN);
        let next = match (call, response) {
            (Some(c), Some(r)) => Some(c.min(r)),
            (c, r) => c.or(r),
        };
        let Some(at) = next else {
            add_text(&mut turn, rest);
            break;
        };
        add_text(&mut turn, &rest[..at]);
        if Some(at) == call {
            let (body, after) = block(&rest[at + CALL_OPEN.len()..], CALL_CLOSE, "tool_call")?;
            let call = read_call(body)?;
            turn.get_or_insert_with(|| Message::assistant(""))
                .tool_calls
                .push(call);
            rest = after;
        } else {
            let (body, after) = block(
                &rest[at + RESPONSE_OPEN.len()..],
                RESPONSE_CLOSE,
                "tool_response",
            )?;
            if let Some(done) = turn.take() {
                messages.push(done);
            }
            let mut result = Message::tool(trim_newline(body));
            result.name = answered_call(&messages);
            messages.push(result);
            rest = after;
        }
    }
    messages.extend(turn);
    Ok(messages)
}

/// Text of an assistant turn: a leading `<think>` block becomes its reasoning.
fn add_text(turn: &mut Option<Message>, text: &str) {
    let text = text.trim();
    if text.is_empty() {
        return;
    }
    let message = turn.get_or_insert_with(|| Message::assistant(""));
    let mut text = text;
    if message.content.is_empty()
        && message.reasoning.is_none()
        && let Some(inner) = text.strip_prefix(THINK_OPEN)
        && let Some(close) = inner.find(THINK_CLOSE)
    {
        message.reasoning = Some(trim_newline(&inner[..close]).to_string());
        text = inner[close + THINK_CLOSE.len()..].trim();
    }
    if !message.content.is_empty() && !text.is_empty() {
        message.content.push('\n');
    }
    message.content.push_str(text);
}

/// The text up to `close`, and the rest after it.
fn block<'a>(text: &'a str, close: &str, tag: &str) -> Result<(&'a str, &'a str), String> {
    let end = text
        .find(close)
        .ok_or_else(|| format!("full_answer: a <{tag}> block has no {close}"))?;
    Ok((&text[..end], &text[end + close.len()..]))
}

/// A call block's `{"name", "arguments"}`.
fn read_call(body: &str) -> Result<ToolCall, String> {
    let value: Value = serde_json::from_str(body.trim())
        .map_err(|error| format!("full_answer: a <tool_call> block is not JSON: {error}"))?;
    let name = value
        .get("name")
        .and_then(Value::as_str)
        .ok_or("full_answer: a <tool_call> block has no `name` string")?;
    let arguments = value.get("arguments").cloned().unwrap_or_else(|| json!({}));
    Ok(ToolCall::from_json_arguments(name, &arguments))
}

/// The name of the call a new tool result answers: the k-th result after an assistant turn
/// answers its k-th call.
fn answered_call(messages: &[Message]) -> Option<String> {
    let results = messages
        .iter()
        .rev()
        .take_while(|message| message.role == Role::Tool)
        .count();
    let turn = messages.iter().rev().nth(results)?;
    turn.tool_calls.get(results).map(|call| call.name.clone())
}

/// The text without one leading and one trailing newline.
fn trim_newline(text: &str) -> &str {
    let text = text.strip_prefix('\n').unwrap_or(text);
    text.strip_suffix('\n').unwrap_or(text)
}

/// Writes one row per trajectory that has a completion; returns how many were written.
pub fn write(
    items: &mut dyn Iterator<Item = anyhow::Result<ExportItem>>,
    out: &mut dyn Write,
) -> anyhow::Result<usize> {
    let mut written = 0;
    for item in items {
        let item = item?;
        let trajectory = &item.trajectory;
        let split = trajectory.prompt_messages().len();
        if split == trajectory.messages.len() {
            continue;
        }
        let keep_extra = trajectory.source_format == Format::Rl.name();
        let prompt = &trajectory.messages[..split];
        let question = match &item.task {
            Some(task) => task.question().to_string(),
            None => prompt
                .iter()
                .rev()
                .find(|message| message.role == Role::User)
                .map_or_else(String::new, |message| message.content.clone()),
        };
        let ground_truth = item
            .task
            .as_ref()
            .and_then(|task| task.ground_truth.clone());
        let mut record = Map::new();
        record.insert("question".into(), json!(question));
        let prompt: Vec<Value> = prompt
            .iter()
            .map(|message| write_message(message, keep_extra, ToolArguments::Object))
            .collect();
        record.insert("prompt".into(), Value::Array(prompt));
        record.insert("ground_truth".into(), json!(ground_truth));
        record.insert(
            "full_answer".into(),
            json!(completion_text(&trajectory.messages[split..])),
        );
        if let Some(tools) = tools(&item) {
            record.insert("tools".into(), tools);
        }
        if keep_extra {
            for (key, value) in &trajectory.extra {
                record.entry(key.clone()).or_insert_with(|| value.clone());
            }
        }
        serde_json::to_writer(&mut *out, &record)?;
        out.write_all(b"\n")?;
        written += 1;
    }
    Ok(written)
}

/// The completion as one text, in the chat templates' tool-call notation.
fn completion_text(messages: &[Message]) -> String {
    let parts: Vec<String> = messages
        .iter()
        .map(|message| match message.role {
            Role::Assistant => {
                let mut parts = Vec::new();
                if let Some(reasoning) = &message.reasoning {
                    parts.push(format!("{THINK_OPEN}\n{reasoning}\n{THINK_CLOSE}"));
                }
                if !message.content.is_empty() {
                    parts.push(message.content.clone());
                }
                for call in &message.tool_calls {
                    let body =
                        json!({"name": call.name, "arguments": ToolArguments::Object.write(call)});
                    parts.push(format!("{CALL_OPEN}\n{body}\n{CALL_CLOSE}"));
                }
                parts.join("\n")
            }
            Role::Tool => format!("{RESPONSE_OPEN}\n{}\n{RESPONSE_CLOSE}", message.content),
            _ => message.content.clone(),
        })
        .collect();
    parts.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completions_split_back_into_turns() {
        let mut call = Message::assistant("I add them.");
        call.tool_calls.push(ToolCall::from_json_arguments(
            "calculator",
            &json!({"expression": "17+25"}),
        ));
        let mut think = Message::assistant("Final Answer: 42");
        think.reasoning = Some("It said 42.".into());
        let mut result = Message::tool("42");
        result.name = Some("calculator".into());
        let messages = vec![call, result, think];
        let text = completion_text(&messages);
        assert!(text.contains("<tool_call>\n{\"name\":\"calculator\",\"arguments\":{\"expression\":\"17+25\"}}\n</tool_call>"));
        assert_eq!(read_completion(&text).unwrap(), messages);
        assert!(read_completion("<tool_call>{\"name\": 3}</tool_call>").is_err());
        assert!(
            read_completion("text <tool_response> open")
                .unwrap_err()
                .contains("</tool_response>")
        );
    }
}
