//! Exports have the shapes the tools that read them document.

use super::common::{export, export_with, import};
use rollscope::formats::{ExportOptions, Format, ToolArguments};
use serde_json::{Value, json};

fn lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn openai_export_is_what_trl_and_openai_read() {
    for name in [
        "tau_bench_airline_one.json",
        "log_message_deduplication.eval",
        "sharegpt_glaive_toolcall.json",
    ] {
        let imported = import(name);
        let (text, written) = export(Format::OpenaiMessages, imported.export_items());
        let records = lines(&text);
        assert_eq!(records.len(), written);
        for record in &records {
            let keys: Vec<&String> = record.as_object().unwrap().keys().collect();
            assert_eq!(keys[0], "messages", "{name}");
            assert!(
                keys.iter()
                    .all(|key| ["messages", "tools"].contains(&key.as_str())),
                "{name}: {keys:?}"
            );
            for tool in record
                .get("tools")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                assert_eq!(tool["type"], "function");
                assert!(tool["function"]["name"].is_string());
            }
            for message in record["messages"].as_array().unwrap() {
                assert!(
                    message["role"].is_string() && message["content"].is_string(),
                    "{name}: {message}"
                );
                for call in message
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    assert_eq!(call["type"], "function");
                    assert!(call["function"]["name"].is_string());
                    assert!(
                        call["function"]["arguments"].is_object(),
                        "{name}: arguments as a JSON object, as TRL documents: {call}"
                    );
                }
                if message["role"] == "tool" {
                    assert!(message["name"].is_string(), "{name}: {message}");
                }
            }
        }
    }
    let inspect = import("log_message_deduplication.eval");
    let (text, _) = export(Format::OpenaiMessages, inspect.export_items());
    let record = &lines(&text)[0];
    assert_eq!(
        record["messages"][1]["tool_calls"][0],
        json!({"id": "hardcoded_0", "type": "function", "function": {"name": "bash", "arguments": {"cmd": "ls"}}})
    );
    assert_eq!(record["messages"][2]["tool_call_id"], "hardcoded_0");
    assert_eq!(record["messages"][2]["name"], "bash");
    assert_eq!(record["tools"][0]["function"]["name"], "bash");
    let as_openai = ExportOptions {
        tool_arguments: ToolArguments::String,
    };
    let (text, _) = export_with(Format::OpenaiMessages, &as_openai, inspect.export_items());
    assert_eq!(
        lines(&text)[0]["messages"][1]["tool_calls"][0]["function"]["arguments"],
        json!("{\"cmd\":\"ls\"}"),
        "OpenAI's API writes arguments as a JSON string"
    );
}

#[test]
fn trl_prompt_completion_splits_at_the_first_assistant_message() {
    let imported = import("openai_chat_tools.jsonl");
    let (text, written) = export(Format::TrlPromptCompletion, imported.export_items());
    assert_eq!(written, 2);
    let record = &lines(&text)[0];
    let roles = |key: &str| -> Vec<Value> {
        record[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].clone())
            .collect()
    };
    assert_eq!(roles("prompt"), [json!("system"), json!("user")]);
    assert_eq!(roles("completion"), [json!("assistant")]);
    assert_eq!(
        record["completion"][0]["tool_calls"][0]["function"]["name"],
        "takeoff_drone"
    );
    assert_eq!(record["tools"].as_array().unwrap().len(), 16);
    let gsm8k_like = import("samples_math-shepherd.jsonl");
    let (text, _) = export(Format::TrlPromptCompletion, gsm8k_like.export_items());
    assert_eq!(lines(&text)[0]["completion"][0]["role"], "assistant");
}

#[test]
fn sharegpt_export_alternates_as_llama_factory_requires() {
    let imported = import("function_calling_simple.traj");
    let (text, written) = export(Format::Sharegpt, imported.export_items());
    assert_eq!(written, 1);
    let records: Value = serde_json::from_str(&text).unwrap();
    let turns = records[0]["conversations"].as_array().unwrap();
    let tags: Vec<&str> = turns.iter().map(|t| t["from"].as_str().unwrap()).collect();
    assert_eq!(
        tags[..4],
        ["system", "human", "function_call", "observation"]
    );
    assert_eq!(
        tags.last(),
        Some(&"function_call"),
        "a trailing tool result has nothing to train on"
    );
    assert_eq!(tags.len(), 11);
    let call: Value = serde_json::from_str(turns[2]["value"].as_str().unwrap()).unwrap();
    assert_eq!(
        call,
        json!({"name": "find_file", "arguments": {"file_name": "missing_colon.py"}})
    );
    let tools: Value = serde_json::from_str(records[0]["tools"].as_str().unwrap()).unwrap();
    assert_eq!(tools, json!([]));

    let tau = import("tau_bench_airline_one.json");
    let (text, written) = export(Format::Sharegpt, tau.export_items());
    assert_eq!(written, 1);
    let records: Value = serde_json::from_str(&text).unwrap();
    let turns = records[0]["conversations"].as_array().unwrap();
    for (index, turn) in turns.iter().skip(1).enumerate() {
        let user_side = matches!(turn["from"].as_str(), Some("human" | "observation"));
        assert_eq!(user_side, index % 2 == 0, "turn {index}: {turn}");
    }

    let verl_tasks_only = import("verl_rollout_dump_step3.jsonl");
    let (_, written) = export(Format::Sharegpt, verl_tasks_only.export_items());
    assert_eq!(written, 4);
}

#[test]
fn stepwise_export_writes_steps_and_boolean_labels() {
    let imported = import("samples_math-shepherd.jsonl");
    let (text, written) = export(Format::TrlStepwise, imported.export_items());
    assert_eq!(written, 7);
    let record = &lines(&text)[0];
    assert!(
        record["prompt"]
            .as_str()
            .unwrap()
            .starts_with("Janet pays $40/hour")
    );
    assert_eq!(record["labels"], json!([true, true, true, true, false]));
    assert_eq!(
        record["completions"][4],
        "Step 5: She spends 260 * 52 = <<260*52=13520>>13520 on music lessons in a year. The answer is: 13520"
    );
    let unscored = import("openai_chat_tools.jsonl");
    let (_, written) = export(Format::TrlStepwise, unscored.export_items());
    assert_eq!(
        written, 0,
        "trajectories without step scores have no labels to write"
    );
}

#[test]
fn import_only_formats_are_refused_for_export() {
    let imported = import("openai_chat_tools.jsonl");
    let mut out = Vec::new();
    let mut items = imported.export_items().into_iter().map(Ok);
    let error = rollscope::formats::export(Format::TauBench, &mut items, &mut out).unwrap_err();
    assert!(
        error.to_string().contains("tau-bench cannot be exported"),
        "{error}"
    );
}
