//! Exports of a store: every format re-imports (through `formats::import_file`) to the same
//! conversations, the OpenAI-messages file has the shape TRL documents, and the manifest
//! traces the file back.

use crate::common::{apples, call, result, rollout, store};
use rollscope::curate::{ExportRequest, Manifest, SelectionRules, export_selection};
use rollscope::formats::{ExportOptions, Format, ImportOptions, Item, ToolArguments, import_file};
use rollscope::store::{Filter, Store};
use rollscope::trajectory::{Message, Task, TokenTrace, Trajectory};
use serde_json::Value;
use std::path::Path;

/// Rollouts of two policy versions with tool calls, results linked by id, reasoning, and a
/// token trace on the first.
fn rollouts(task: &Task) -> Vec<Trajectory> {
    let mut thinking = Message::assistant("Final Answer: 42");
    thinking.reasoning = Some("The tool said 42.".into());
    let mut all = vec![
        rollout(
            task,
            1,
            vec![call(1, "I add them.", "17+25"), result(1, "42"), thinking],
            Some(true),
        ),
        rollout(
            task,
            2,
            vec![
                call(1, "First the sum.", "17+25"),
                result(1, "42"),
                call(2, "Check it.", "42-25"),
                result(2, "17"),
                Message::assistant("He has 42 apples.\nFinal Answer: 42"),
            ],
            Some(true),
        ),
        rollout(
            task,
            3,
            vec![Message::assistant("Final Answer: 41")],
            Some(false),
        ),
    ];
    for (index, trajectory) in all.iter_mut().enumerate() {
        trajectory.run = Some("grpo-a".into());
        trajectory.policy_version = Some(index as u64 % 2);
        trajectory.step_scores = vec![crate::common::score(
            0,
            0.5 + 0.1 * index as f64,
            rollscope::trajectory::ScoreSource::Rule,
        )];
    }
    all[0].token_trace = Some(TokenTrace {
        token_ids: vec![5, 6, 7, 8],
        loss_mask: vec![0, 1, 1, 1],
        logprobs: vec![0.0, -0.5, -0.25, -1.0],
        entropies: Vec::new(),
    });
    all
}

fn filled() -> (tempfile::TempDir, Store, Task, Vec<Trajectory>) {
    let (dir, store) = store();
    let task = apples();
    let trajectories = rollouts(&task);
    store.put_tasks(std::slice::from_ref(&task)).unwrap();
    store.put_trajectories(&trajectories).unwrap();
    (dir, store, task, trajectories)
}

fn export(
    store: &Store,
    dir: &Path,
    format: Format,
    options: ExportOptions,
    selection: Option<SelectionRules>,
) -> rollscope::curate::ExportReport {
    let request = ExportRequest {
        filter: Filter::default(),
        selection,
        format,
        options,
        path: dir.join(format!("out/{}.jsonl", format.name())),
        session: Some("test".into()),
        repairs: Vec::new(),
    };
    export_selection(store, &request, &mut |_, _| {}).unwrap()
}

fn import(path: &Path) -> (Vec<Trajectory>, Vec<Task>) {
    let mut trajectories = Vec::new();
    let mut tasks = Vec::new();
    let report = import_file(path, ImportOptions::default(), &mut |item| {
        match item {
            Item::Trajectory(trajectory) => trajectories.push(*trajectory),
            Item::Task(task) => tasks.push(*task),
        }
        Ok(())
    })
    .unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    (trajectories, tasks)
}

/// What a conversation format carries: roles, text, reasoning, calls (name and arguments as
/// values), and, with `ids`, the call ids and links.
fn conversation(trajectory: &Trajectory, ids: bool) -> Vec<String> {
    trajectory
        .messages
        .iter()
        .map(|m| {
            let calls: Vec<String> = m
                .tool_calls
                .iter()
                .map(|c| {
                    format!(
                        "{:?} {} {:?}",
                        c.id.as_ref().filter(|_| ids),
                        c.name,
                        c.parsed_arguments()
                    )
                })
                .collect();
            format!(
                "{} {:?} {:?} {calls:?} {:?} {:?}",
                m.role,
                m.content,
                m.reasoning,
                m.tool_call_id.as_ref().filter(|_| ids),
                m.name
            )
        })
        .collect()
}

#[test]
fn every_export_re_imports_to_the_same_trajectories() {
    let (dir, store, task, originals) = filled();
    let report = export(
        &store,
        dir.path(),
        Format::Rollscope,
        ExportOptions::default(),
        None,
    );
    let (back, tasks) = import(&report.path);
    assert_eq!(
        back, originals,
        "our own format is exact, token traces included"
    );
    assert_eq!(tasks, std::slice::from_ref(&task));

    for (format, arguments, ids) in [
        (Format::OpenaiMessages, ToolArguments::Object, true),
        (Format::OpenaiMessages, ToolArguments::String, true),
        (Format::TrlPromptCompletion, ToolArguments::Object, true),
        (Format::Rl, ToolArguments::Object, false),
    ] {
        let options = ExportOptions {
            tool_arguments: arguments,
        };
        let report = export(&store, dir.path(), format, options, None);
        assert_eq!(report.manifest.counts.written, 3, "{format}");
        let (back, tasks) = import(&report.path);
        assert_eq!(back.len(), 3, "{format}");
        for (again, first) in back.iter().zip(&originals) {
            assert_eq!(
                conversation(again, ids),
                conversation(first, ids),
                "{format} {arguments:?}"
            );
            assert_eq!(again.source_format, format.name());
        }
        assert_eq!(tasks[0].tools, task.tools, "{format}");
        if format == Format::Rl {
            assert_eq!(tasks[0].ground_truth.as_deref(), Some("42"));
        }
    }

    let report = export(
        &store,
        dir.path(),
        Format::Sharegpt,
        ExportOptions::default(),
        None,
    );
    let (back, _) = import(&report.path);
    assert_eq!(back.len(), 3);
    for (again, first) in back.iter().zip(&originals) {
        let mut expected = first.clone();
        for message in &mut expected.messages {
            message.reasoning = None;
            if !message.tool_calls.is_empty() {
                message.content.clear();
            }
        }
        assert_eq!(
            conversation(again, false),
            conversation(&expected, false),
            "ShareGPT keeps no reasoning and no text beside a function call"
        );
    }
}

#[test]
fn the_openai_export_has_the_shape_trl_documents() {
    let (dir, store, _, originals) = filled();
    let report = export(
        &store,
        dir.path(),
        Format::OpenaiMessages,
        ExportOptions::default(),
        None,
    );
    let text = std::fs::read_to_string(&report.path).unwrap();
    let records: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(records.len(), originals.len());
    for record in &records {
        let keys: Vec<&str> = record
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["messages", "tools"]);
        for tool in record["tools"].as_array().unwrap() {
            assert_eq!(tool["type"], "function");
            assert!(tool["function"]["name"].is_string());
            assert_eq!(tool["function"]["parameters"]["type"], "object");
        }
        let messages = record["messages"].as_array().unwrap();
        assert_eq!(messages[0]["role"], "user");
        let mut index = 0;
        while index < messages.len() {
            let message = &messages[index];
            index += 1;
            let Some(calls) = message.get("tool_calls").and_then(Value::as_array) else {
                continue;
            };
            assert_eq!(message["role"], "assistant");
            for call in calls {
                assert_eq!(call["type"], "function");
                assert!(
                    call["function"]["arguments"].is_object(),
                    "TRL's arguments are objects: {call}"
                );
                let answer = &messages[index];
                index += 1;
                assert_eq!(
                    answer["role"], "tool",
                    "each call is followed by its result, in order"
                );
                assert_eq!(answer["name"], call["function"]["name"]);
                assert_eq!(answer["tool_call_id"], call["id"]);
                assert!(answer["content"].is_string());
            }
        }
    }
    let second = &records[1]["messages"];
    assert_eq!(
        second[1]["tool_calls"][0]["function"]["arguments"],
        serde_json::json!({"expression": "17+25"})
    );
    assert_eq!(second[3]["tool_calls"][0]["id"], "call_2_0");
    assert_eq!(second[4]["content"], "17");
    assert_eq!(
        records[0]["messages"][3]["reasoning_content"],
        "The tool said 42."
    );
}

#[test]
fn the_manifest_traces_a_selection_back() {
    let (dir, store, _, originals) = filled();
    let rules = SelectionRules::default();
    let report = export(
        &store,
        dir.path(),
        Format::OpenaiMessages,
        ExportOptions::default(),
        Some(rules.clone()),
    );
    assert_eq!(
        report.manifest_path,
        report.path.with_file_name("openai.jsonl.manifest.json")
    );
    assert!(!report.path.with_file_name("openai.jsonl.partial").exists());
    let manifest = Manifest::read(&report.manifest_path).unwrap();
    assert_eq!(manifest, report.manifest);
    manifest.verify(&report.path).unwrap();
    assert_eq!(manifest.rollscope_version, env!("CARGO_PKG_VERSION"));
    assert!(chrono::DateTime::parse_from_rfc3339(&manifest.created_at).is_ok());
    assert_eq!(
        (manifest.file.as_str(), manifest.format.as_str()),
        ("openai.jsonl", "openai")
    );
    assert_eq!(manifest.session.as_deref(), Some("test"));
    assert_eq!(manifest.selection, Some(rules.clone()));
    assert_eq!(manifest.selection_description, Some(rules.describe()));
    assert_eq!(manifest.filter, Filter::default());
    assert_eq!(manifest.counts.matched, 3);
    assert_eq!(
        manifest.counts.selected, 1,
        "best of the three samples of the one task"
    );
    assert_eq!(manifest.counts.written, 1);
    let preview = manifest.preview.as_ref().unwrap();
    assert_eq!(
        (preview.tasks, preview.tasks_kept, preview.capped),
        (1, 1, 1)
    );
    // The passing samples have PRM 0.5 and 0.6: the second (policy version 1) is kept.
    assert_eq!(manifest.sources.len(), 1);
    assert_eq!(manifest.sources[0].run, "grpo-a");
    assert_eq!(manifest.sources[0].versions, [1]);
    let written = std::fs::read_to_string(&report.path).unwrap();
    assert!(
        written.contains("Check it."),
        "the kept sample is {}",
        originals[1].id
    );
    std::fs::write(&report.path, "changed").unwrap();
    assert!(
        manifest
            .verify(&report.path)
            .unwrap_err()
            .to_string()
            .contains("does not match its manifest")
    );
}

#[test]
fn import_only_formats_are_refused_with_the_list_of_export_formats() {
    let (dir, store, _, _) = filled();
    let request = ExportRequest {
        filter: Filter::default(),
        selection: None,
        format: Format::TauBench,
        options: ExportOptions::default(),
        path: dir.path().join("x.json"),
        session: None,
        repairs: Vec::new(),
    };
    let error = export_selection(&store, &request, &mut |_, _| {})
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("tau-bench cannot be written") && error.contains("rl"),
        "{error}"
    );
    assert!(!dir.path().join("x.json").exists());
}
