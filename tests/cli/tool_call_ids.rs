//! Tool calls Rollscope writes carry ids, and their results name them, so the OpenAI
//! messages export links each result to its call.

use super::{rollscope, stdout};
use serde_json::Value;
use std::collections::BTreeSet;

/// Asserts every call of a conversation has an id unique in it and every tool message
/// answers an earlier call by id.
pub fn assert_linked(messages: &[Value]) {
    let mut ids = BTreeSet::new();
    let mut calls = 0;
    for message in messages {
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            let id = call["id"]
                .as_str()
                .unwrap_or_else(|| panic!("no id: {call}"));
            assert!(id.starts_with("call_"), "{id}");
            assert!(ids.insert(id.to_string()), "id {id} used twice");
            calls += 1;
        }
        if message["role"] == "tool" {
            let id = message["tool_call_id"]
                .as_str()
                .unwrap_or_else(|| panic!("a tool message without tool_call_id: {message}"));
            assert!(ids.contains(id), "{id} answers no earlier call");
        }
    }
    assert!(calls > 0, "the conversation has tool calls");
}

#[test]
fn demo_data_exports_link_tool_results_to_their_calls() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    stdout(rollscope(&sessions).args(["demo-data", "--count", "24", "--trace-tokens", "16"]));
    let out = dir.path().join("out.jsonl");
    stdout(
        rollscope(&sessions)
            .args(["export", "--format", "openai", "-o"])
            .arg(&out),
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let mut linked = 0;
    for line in text.lines() {
        let record: Value = serde_json::from_str(line).unwrap();
        let messages = record["messages"].as_array().unwrap();
        if messages.iter().any(|m| m["tool_calls"].is_array()) {
            assert_linked(messages);
            linked += 1;
        }
    }
    assert!(linked > 0, "{text}");
}
