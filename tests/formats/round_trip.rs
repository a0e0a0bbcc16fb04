//! Export then import gives the same trajectories: exactly for Rollscope's own format, up to
//! ids and `source_format` for OpenAI messages, and the same conversation for the others.

use super::common::{Imported, export_with, import, import_with, options, temp_file};
use rollscope::formats::{ExportOptions, Format, ToolArguments};
use rollscope::trajectory::{Message, Trajectory};

/// Writes `imported` in `format` and reads the result back (format detected).
fn through(format: Format, imported: &Imported) -> (Imported, usize) {
    through_with(format, &ExportOptions::default(), imported)
}

/// Writes tool-call arguments as the source did, so nothing about them changes.
fn as_read() -> ExportOptions {
    ExportOptions {
        tool_arguments: ToolArguments::AsRead,
    }
}

/// `through` with export options.
fn through_with(format: Format, export: &ExportOptions, imported: &Imported) -> (Imported, usize) {
    let (text, written) = export_with(format, export, imported.export_items());
    let file = temp_file(text.as_bytes(), ".jsonl");
    let back = import_with(file.path(), options(None)).unwrap();
    assert!(
        back.report.problems.is_empty(),
        "{:?}",
        back.report.problems
    );
    assert_eq!(back.report.format, Some(format));
    (back, written)
}

/// The trajectory with the id and source format of `like`.
fn as_if(mut trajectory: Trajectory, like: &Trajectory) -> Trajectory {
    trajectory.id = like.id;
    trajectory.source_format = like.source_format.clone();
    trajectory
}

#[test]
fn rollscope_format_round_trips_every_file_exactly() {
    for path in super::common::data_files() {
        let name = path.file_name().unwrap().to_str().unwrap();
        let imported = import(name);
        if imported.trajectories.is_empty() {
            continue; // task rows only (GSM8K, verl tasks): an export writes trajectories
        }
        let (back, written) = through(Format::Rollscope, &imported);
        assert_eq!(written, imported.trajectories.len(), "{name}");
        assert_eq!(back.trajectories, imported.trajectories, "{name}");
        let referenced: Vec<_> = imported
            .trajectories
            .iter()
            .map(|t| imported.task_of(t).clone())
            .collect();
        for task in &referenced {
            assert!(
                back.tasks.contains(task),
                "{name}: task {} travels with its trajectories",
                task.id
            );
        }
    }
}

#[test]
fn openai_messages_round_trip_up_to_ids() {
    let imported = import("openai_chat_tools.jsonl");
    let (back, written) = through_with(Format::OpenaiMessages, &as_read(), &imported);
    assert_eq!(written, 2);
    assert_eq!(back.tasks, imported.tasks);
    for (again, first) in back.trajectories.iter().zip(&imported.trajectories) {
        assert_eq!(again.id, first.id, "the same content, the same id");
        assert_eq!(&as_if(again.clone(), first), first);
    }
}

#[test]
fn openai_messages_with_parts_reasoning_and_object_arguments_round_trip() {
    let lines = [
        r#"{"messages": [{"role": "system", "content": "Use the calculator."}, {"role": "user", "content": [{"type": "text", "text": "What is 2+2?"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]}, {"role": "assistant", "content": null, "reasoning_content": "Add them.", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "calculator", "arguments": {"expression": "2+2"}}}]}, {"role": "tool", "tool_call_id": "c1", "content": "4"}, {"role": "assistant", "content": "4", "weight": 1}], "tools": [{"type": "function", "function": {"name": "calculator", "parameters": {"type": "object"}}}], "id": "row-1"}"#,
        r#"{"messages": [{"role": "user", "content": "twice"}, {"role": "assistant", "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "f", "arguments": "\"{\\\"x\\\": 1}\""}}]}]}"#,
    ];
    let file = temp_file(lines.join("\n").as_bytes(), ".jsonl");
    let imported = import_with(file.path(), options(None)).unwrap();
    assert!(
        imported.report.problems.is_empty(),
        "{:?}",
        imported.report.problems
    );
    let first = &imported.trajectories[0];
    assert_eq!(first.messages[1].content, "What is 2+2?");
    assert_eq!(first.messages[2].reasoning.as_deref(), Some("Add them."));
    assert_eq!(first.messages[3].name.as_deref(), Some("calculator"));
    assert_eq!(first.extra["id"], "row-1");
    let (back, _) = through_with(Format::OpenaiMessages, &as_read(), &imported);
    for (again, first) in back.trajectories.iter().zip(&imported.trajectories) {
        assert_eq!(&as_if(again.clone(), first), first);
    }
}

/// What any conversation format must carry: roles, text, reasoning, calls and their links.
fn conversation(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .map(|m| {
            let calls: Vec<String> = m
                .tool_calls
                .iter()
                .map(|c| format!("{:?} {} {:?}", c.id, c.name, c.parsed_arguments()))
                .collect();
            format!(
                "{} {:?} {:?} {calls:?} {:?} {:?}",
                m.role, m.content, m.reasoning, m.tool_call_id, m.name
            )
        })
        .collect()
}

#[test]
fn conversations_from_every_agent_format_survive_an_openai_export() {
    for name in [
        "tau_bench_airline_one.json",
        "nemo_gym_single_tool_call_rollouts.jsonl",
        "mini_swe_agent_sqlfluff.traj.json",
        "log_message_deduplication.eval",
        "function_calling_simple.traj",
        "sharegpt_glaive_toolcall.json",
    ] {
        let imported = import(name);
        let (back, written) = through(Format::OpenaiMessages, &imported);
        assert_eq!(written, imported.trajectories.len(), "{name}");
        for (again, first) in back.trajectories.iter().zip(&imported.trajectories) {
            assert_eq!(
                conversation(&again.messages),
                conversation(&first.messages),
                "{name}"
            );
            assert_eq!(
                back.task_of(again).tools,
                imported.task_of(first).tools,
                "{name}"
            );
        }
    }
}

#[test]
fn trl_prompt_completion_round_trips_the_conversation() {
    let imported = import("tau_bench_airline_one.json");
    let (back, written) = through(Format::TrlPromptCompletion, &imported);
    assert_eq!(written, 1);
    assert_eq!(
        conversation(&back.trajectories[0].messages),
        conversation(&imported.trajectories[0].messages)
    );
    assert_eq!(back.task_of(&back.trajectories[0]).prompt.len(), 2);
}

#[test]
fn sharegpt_round_trips_llama_factory_records() {
    let imported = import("sharegpt_glaive_toolcall.json");
    let (back, written) = through(Format::Sharegpt, &imported);
    assert_eq!(written, 20);
    for (again, first) in back.trajectories.iter().zip(&imported.trajectories) {
        assert_eq!(again.messages, first.messages);
        assert_eq!(back.task_of(again).tools, imported.task_of(first).tools);
    }
}

#[test]
fn stepwise_labels_follow_the_step_scores() {
    let imported = import("samples_prm800k.jsonl");
    let (back, written) = through(Format::TrlStepwise, &imported);
    assert_eq!(written, 6);
    for (again, first) in back.trajectories.iter().zip(&imported.trajectories) {
        assert_eq!(again.messages[1].content, first.messages[1].content);
        assert_eq!(again.messages[1].spans, first.messages[1].spans);
        let labels: Vec<f64> = again.step_scores.iter().map(|s| s.value).collect();
        let expected: Vec<f64> = first
            .step_scores
            .iter()
            .map(|s| if s.value >= 0.5 { 1.0 } else { 0.0 })
            .collect();
        assert_eq!(labels, expected);
    }
}

/// A message as the comparison sees it: role, text, and each tool call's name and arguments.
type Turn = (String, String, Vec<(String, String)>);

/// The export in `format` of `imported`, as JSONL and as parquet, each imported back.
/// Tool-call arguments are written as strings: in parquet the objects of one column share
/// one set of keys (a key a call lacks reads back as null, as in 🤗 datasets).
fn jsonl_and_parquet(format: Format, imported: &Imported) -> (Imported, Imported) {
    let strings = ExportOptions {
        tool_arguments: ToolArguments::String,
    };
    let (text, _) = export_with(format, &strings, imported.export_items());
    let jsonl = temp_file(text.as_bytes(), ".jsonl");
    let mut parquet = Vec::new();
    rollscope::formats::write_parquet(text.as_bytes(), &mut parquet).unwrap();
    let parquet = temp_file(&parquet, ".parquet");
    let read = |path: &std::path::Path| {
        let back = import_with(path, options(None)).unwrap();
        assert!(
            back.report.problems.is_empty(),
            "{:?}",
            back.report.problems
        );
        assert_eq!(back.report.format, Some(format));
        back
    };
    (read(jsonl.path()), read(parquet.path()))
}

#[test]
fn parquet_exports_read_back_as_their_jsonl_does() {
    for path in super::common::data_files() {
        let name = path.file_name().unwrap().to_str().unwrap();
        let imported = import(name);
        if imported.trajectories.is_empty() {
            continue;
        }
        for format in [
            Format::OpenaiMessages,
            Format::Rl,
            Format::TrlPromptCompletion,
        ] {
            let (jsonl, parquet) = jsonl_and_parquet(format, &imported);
            assert_eq!(
                parquet.trajectories.len(),
                jsonl.trajectories.len(),
                "{name} {format}"
            );
            for (a, b) in parquet.trajectories.iter().zip(&jsonl.trajectories) {
                let talk = |t: &Trajectory| -> Vec<Turn> {
                    t.messages
                        .iter()
                        .map(|m| {
                            let calls = m
                                .tool_calls
                                .iter()
                                .map(|c| (c.name.clone(), c.arguments.clone()))
                                .collect();
                            (m.role.as_str().to_string(), m.content.clone(), calls)
                        })
                        .collect()
                };
                assert_eq!(talk(a), talk(b), "{name} {format}: the same conversation");
                assert_eq!(a.reward, b.reward, "{name} {format}");
            }
            assert_eq!(parquet.tasks.len(), jsonl.tasks.len(), "{name} {format}");
        }
    }
}
