//! The loss rule: text a record holds reaches the stored trajectory, or the record is refused
//! naming the field. LLaMA-Factory's content parts (`value`, reasoning, tool calls) are read;
//! text planted where no reader looks, in a record of any real file, is caught.

use super::common::{data, data_files, import, import_with, options, temp_file};
use rollscope::trajectory::Role;
use serde_json::Value;

#[test]
fn llamafactory_parts_give_every_message_its_text_reasoning_and_calls() {
    let name = "llamafactory_reason_tool_use_demo_50.jsonl";
    let text = std::fs::read_to_string(data(name)).unwrap();
    let (mut messages, mut reasoning_parts, mut call_parts) = (0, 0, 0);
    for line in text.lines() {
        let record: Value = serde_json::from_str(line).unwrap();
        for message in record["messages"].as_array().unwrap() {
            messages += 1;
            for part in message["content"].as_array().unwrap() {
                reasoning_parts += usize::from(part["type"] == "reasoning");
                call_parts += usize::from(part["type"] == "tool_call");
            }
        }
    }
    let imported = import(name);
    assert_eq!(imported.trajectories.len(), 50);
    let stored: Vec<_> = imported
        .trajectories
        .iter()
        .flat_map(|t| &t.messages)
        .collect();
    assert_eq!(stored.len(), messages);
    let empty = stored
        .iter()
        .filter(|m| m.content.is_empty() && m.reasoning.is_none() && m.tool_calls.is_empty())
        .count();
    assert_eq!(
        empty, 0,
        "every one of {messages} messages has its text (none had before)"
    );
    let calls: usize = stored.iter().map(|m| m.tool_calls.len()).sum();
    assert_eq!(calls, call_parts, "each tool_call part is a call");
    assert!(
        stored
            .iter()
            .flat_map(|m| &m.tool_calls)
            .all(|c| c.parsed_arguments().is_some())
    );
    let with_reasoning = stored.iter().filter(|m| m.reasoning.is_some()).count();
    assert!(with_reasoning > 0 && with_reasoning <= reasoning_parts);
    for trajectory in &imported.trajectories {
        let task = imported.task_of(trajectory);
        assert!(
            task.prompt
                .iter()
                .any(|m| m.role == Role::User && !m.content.is_empty())
        );
    }
}

/// The file with `{"hidden": {"content": …}}` planted in its first record: a JSONL line, an
/// array's first element (or an Inspect log's first sample), or the document itself.
fn planted(path: &std::path::Path) -> Option<(Vec<u8>, String)> {
    let text = std::fs::read_to_string(path).ok()?;
    let plant = |record: &mut Value| {
        let hidden = serde_json::json!({"content": "words no reader looks for"});
        record
            .as_object_mut()
            .map(|object| object.insert("hidden".into(), hidden))
    };
    if let Ok(mut document) = serde_json::from_str::<Value>(&text) {
        let field = match &mut document {
            Value::Array(records) => {
                plant(records.first_mut()?)?;
                "hidden.content"
            }
            Value::Object(object) if object.contains_key("samples") => {
                plant(object.get_mut("samples")?.get_mut(0)?)?;
                "hidden.content"
            }
            Value::Object(object) if object.contains_key("resourceSpans") => return None,
            record => {
                plant(record)?;
                "hidden.content"
            }
        };
        return Some((serde_json::to_vec(&document).ok()?, field.to_string()));
    }
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut first: Value = serde_json::from_str(lines.first()?).ok()?;
    plant(&mut first)?;
    lines[0] = first.to_string();
    Some((lines.join("\n").into_bytes(), "hidden.content".to_string()))
}

#[test]
fn text_planted_where_no_reader_looks_is_named_in_every_format() {
    let mut checked = 0;
    for path in data_files() {
        let Some((bytes, field)) = planted(&path) else {
            continue;
        };
        let name = path.file_name().unwrap().to_str().unwrap();
        let format = import(name).report.format;
        let suffix = if name.ends_with(".jsonl") {
            ".jsonl"
        } else {
            ".json"
        };
        let file = temp_file(&bytes, suffix);
        let imported = import_with(file.path(), options(format)).unwrap();
        let problem = imported
            .report
            .problems
            .iter()
            .find(|problem| {
                problem
                    .message
                    .contains("not stored anywhere a reader looks")
            })
            .unwrap_or_else(|| panic!("{name}: the planted text went unnoticed"));
        assert!(
            problem.message.contains(&field) && problem.message.contains("words no reader"),
            "{name}: {problem}"
        );
        checked += 1;
    }
    assert!(checked >= 20, "{checked} files checked");
}
