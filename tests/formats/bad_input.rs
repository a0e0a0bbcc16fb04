//! Broken input: each bad record is reported as `file:line: what is wrong`, the rest imports,
//! `strict` imports nothing, and nothing panics.

use super::common::{data, import_with, options, read, temp_file};
use rollscope::formats::{Format, ImportError, ImportOptions, Problem};
use strum::IntoEnumIterator;

fn strict(format: Option<Format>) -> ImportOptions {
    ImportOptions {
        strict: true,
        ..options(format)
    }
}

fn only_problem(problems: &[Problem]) -> &Problem {
    assert_eq!(problems.len(), 1, "{problems:?}");
    &problems[0]
}

#[test]
fn a_truncated_jsonl_file_keeps_its_complete_lines() {
    let bytes = read("nemo_gym_single_tool_call_rollouts.jsonl");
    let cut = bytes.len() - 500;
    let file = temp_file(&bytes[..cut], ".jsonl");
    let imported = import_with(file.path(), options(None)).unwrap();
    assert_eq!(imported.trajectories.len(), 4);
    let problem = only_problem(&imported.report.problems);
    assert_eq!(problem.line, Some(5));
    let shown = problem.to_string();
    assert!(
        shown.starts_with(&format!("{}:5: ", file.path().display())),
        "{shown}"
    );
    assert!(shown.contains("ends too early"), "{shown}");
    let strict = import_with(file.path(), strict(None)).unwrap();
    assert_eq!((strict.trajectories.len(), strict.tasks.len()), (0, 0));
    assert_eq!(strict.report.problems.len(), 1);
}

#[test]
fn a_truncated_json_array_keeps_its_complete_records() {
    let bytes = read("sharegpt_glaive_toolcall.json");
    let file = temp_file(&bytes[..bytes.len() * 6 / 10], ".json");
    let imported = import_with(file.path(), options(None)).unwrap();
    assert_eq!(imported.report.format, Some(Format::Sharegpt));
    let complete = imported.trajectories.len();
    assert!((8..20).contains(&complete), "{complete}");
    let problem = only_problem(&imported.report.problems);
    assert!(
        problem
            .message
            .starts_with(&format!("record {}: ", complete + 1)),
        "{problem}"
    );
    let text = String::from_utf8_lossy(&bytes[..bytes.len() * 6 / 10]).to_string();
    let cut_record_line = text.lines().count() as u64;
    assert!(problem.line.unwrap() <= cut_record_line, "{problem}");
    assert!(
        import_with(file.path(), strict(None))
            .unwrap()
            .trajectories
            .is_empty()
    );
}

#[test]
fn a_truncated_document_names_the_line_where_it_ends() {
    let bytes = read("function_calling_simple.traj");
    let file = temp_file(&bytes[..bytes.len() / 2], ".traj");
    let imported = import_with(file.path(), options(None)).unwrap();
    assert_eq!(
        imported.report.format,
        Some(Format::SweAgent),
        "detected from the keys before the cut"
    );
    assert!(imported.trajectories.is_empty());
    let problem = only_problem(&imported.report.problems);
    let last_line = String::from_utf8_lossy(&bytes[..bytes.len() / 2])
        .lines()
        .count() as u64;
    assert_eq!(problem.line, Some(last_line), "{problem}");
    assert!(problem.message.contains("truncated"), "{problem}");
}

#[test]
fn a_truncated_eval_archive_still_gives_its_complete_samples() {
    let bytes = read("log_message_deduplication.eval");
    let after_sample = temp_file(&bytes[..6500], ".eval");
    let imported = import_with(after_sample.path(), options(None)).unwrap();
    assert_eq!(imported.report.format, Some(Format::InspectEval));
    assert_eq!(
        imported.trajectories.len(),
        1,
        "{:?}",
        imported.report.problems
    );
    assert_eq!(imported.trajectories[0].messages.len(), 12);
    assert!(
        imported.report.problems[0]
            .message
            .contains("directory cannot be read")
    );
    assert!(
        import_with(after_sample.path(), strict(None))
            .unwrap()
            .trajectories
            .is_empty()
    );

    let inside_sample = temp_file(&bytes[..3000], ".eval");
    let imported = import_with(inside_sample.path(), options(None)).unwrap();
    assert!(imported.trajectories.is_empty());
    let shown: Vec<String> = imported
        .report
        .problems
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        shown.iter().any(|p| p.contains("samples/0_epoch_1.json")),
        "{shown:?}"
    );
}

#[test]
fn wrong_types_name_the_field() {
    let lines = [
        r#"{"messages": [{"role": "user", "content": "fine"}]}"#,
        r#"{"messages": 3}"#,
        r#"{"messages": [{"role": "user", "content": 7}]}"#,
        r#"{"messages": [{"role": "assistant", "tool_calls": [{"id": "c", "function": {"arguments": "{}"}}]}]}"#,
        r#"{"messages": [{"content": "no role"}]}"#,
        r#"["not", "an", "object"]"#,
        r#"{"messages": [{"role": "user", "content": "fine again"}]}"#,
    ];
    let file = temp_file(lines.join("\n").as_bytes(), ".jsonl");
    let imported = import_with(file.path(), options(Some(Format::OpenaiMessages))).unwrap();
    assert_eq!(imported.trajectories.len(), 2);
    let shown: Vec<String> = imported
        .report
        .problems
        .iter()
        .map(ToString::to_string)
        .collect();
    let path = file.path().display();
    assert_eq!(
        shown,
        [
            format!("{path}:2: messages: expected an array, found a number"),
            format!(
                "{path}:3: messages[0].content: expected a string or a list of content parts, found a number"
            ),
            format!("{path}:4: messages[0].tool_calls[0].function: no `name` field"),
            format!("{path}:5: messages[0]: no `role` field"),
            format!("{path}:6: the record: expected an object, found an array"),
        ]
    );
}

#[test]
fn wrong_types_in_other_formats_name_the_field() {
    let cases = [
        (
            Format::Sharegpt,
            r#"[{"conversations": [{"from": "function_call", "value": "not json"}]}]"#,
            "record 1: conversations[0].value: a function_call must hold JSON",
        ),
        (
            Format::TauBench,
            r#"[{"traj": [], "reward": "high"}]"#,
            "record 1: reward: expected a number, found a string",
        ),
        (
            Format::Gsm8k,
            r#"{"question": "q", "answer": "no marker"}"#,
            "`answer` has no `#### N` line",
        ),
        (
            Format::Prm800k,
            r#"{"question": {"problem": "p"}, "label": {"steps": [{"completions": [{"text": "a"}], "chosen_completion": 4}]}}"#,
            "label.steps[0].chosen_completion: 4 is past the 1 completions",
        ),
        (
            Format::MathShepherd,
            r#"{"input": "Q Step 1: a ки", "label": "Q Step 1: a ?"}"#,
            "label: no `+` or `-`",
        ),
        (
            Format::TrlStepwise,
            r#"{"prompt": "p", "completions": ["a"], "labels": [true, false]}"#,
            "labels: 2 labels for 1 completions",
        ),
        (
            Format::VerlRollouts,
            r#"{"input": 1, "output": "o"}"#,
            "input: expected a string, found a number",
        ),
        (
            Format::Responses,
            r#"{"response": {"output": [{"type": "function_call", "arguments": "{}"}]}}"#,
            "response.output[0]: no `name` field",
        ),
        (
            Format::SweAgent,
            r#"{"info": {}}"#,
            "neither `history` nor `trajectory` is there",
        ),
        (
            Format::Inspect,
            r#"{"eval": {}, "samples": [{"messages": [{"role": "tool", "content": {}}]}]}"#,
            "samples[0]: messages[0].content: expected a string or a list",
        ),
    ];
    for (format, text, expected) in cases {
        let file = temp_file(text.as_bytes(), ".data");
        let imported = import_with(file.path(), options(Some(format))).unwrap();
        assert!(imported.trajectories.is_empty(), "{format}");
        let problem = only_problem(&imported.report.problems);
        assert!(problem.message.contains(expected), "{format}: {problem}");
    }
}

#[test]
fn empty_blank_binary_and_folder_inputs_are_refused_clearly() {
    let empty = temp_file(b"", ".jsonl");
    let error = import_with(empty.path(), options(None)).unwrap_err();
    assert!(matches!(error, ImportError::Empty { .. }));
    assert!(error.to_string().contains("the file is empty"));
    assert!(matches!(
        import_with(empty.path(), options(Some(Format::Sharegpt))),
        Err(ImportError::Empty { .. })
    ));

    let blank = temp_file(b"\n\n  \n", ".jsonl");
    let error = import_with(blank.path(), options(None))
        .unwrap_err()
        .to_string();
    assert!(error.contains("only white space"), "{error}");

    let garbage: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let binary = temp_file(&garbage, ".bin");
    let error = import_with(binary.path(), options(None))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("neither JSON, a zip archive nor parquet"),
        "{error}"
    );
    for format in Format::iter() {
        let imported = import_with(binary.path(), options(Some(format))).unwrap();
        assert!(
            imported.trajectories.is_empty() && imported.tasks.is_empty(),
            "{format}"
        );
        assert!(
            !imported.report.problems.is_empty(),
            "{format}: garbage must be reported"
        );
    }

    let folder = data("");
    let error = import_with(&folder, options(None)).unwrap_err().to_string();
    assert!(error.contains("is a folder"), "{error}");
}

#[test]
fn invalid_utf8_is_reported_by_line() {
    let mut bytes = b"{\"question\": \"ok\", \"answer\": \"#### 1\"}\n{\"question\": \"".to_vec();
    bytes.extend_from_slice(&[0xff, 0xfe, b'"']);
    bytes.extend_from_slice(
        b", \"answer\": \"#### 2\"}\n{\"question\": \"also ok\", \"answer\": \"#### 3\"}\n",
    );
    let file = temp_file(&bytes, ".jsonl");
    let imported = import_with(file.path(), options(None)).unwrap();
    assert_eq!(imported.tasks.len(), 2);
    let problem = only_problem(&imported.report.problems);
    assert_eq!(problem.line, Some(2));
    assert!(
        problem.message.contains("invalid UTF-8 at byte 14"),
        "{problem}"
    );
}

#[test]
fn a_50_mb_line_imports_when_valid_and_is_reported_when_not() {
    let huge = "x".repeat(50 << 20);
    let valid = format!(
        "{{\"messages\": [{{\"role\": \"user\", \"content\": \"q\"}}, {{\"role\": \"assistant\", \"content\": \"{huge}\"}}]}}\n{{\"messages\": [{{\"role\": \"user\", \"content\": \"next\"}}]}}\n"
    );
    let file = temp_file(valid.as_bytes(), ".jsonl");
    let imported = import_with(file.path(), options(None)).unwrap();
    assert_eq!(imported.trajectories.len(), 2);
    assert_eq!(imported.trajectories[0].messages[1].content.len(), 50 << 20);

    let broken = format!(
        "{{\"messages\": [{{\"role\": \"user\", \"content\": \"q\"}}]}}\n{{\"messages\": \"{huge}\n{{\"messages\": []}}\n"
    );
    let file = temp_file(broken.as_bytes(), ".jsonl");
    let imported = import_with(file.path(), options(None)).unwrap();
    assert_eq!(imported.trajectories.len(), 2);
    let problem = only_problem(&imported.report.problems);
    assert_eq!(problem.line, Some(2));
    assert!(
        problem.message.contains("EOF while parsing a string"),
        "{problem}"
    );
}

#[test]
fn strict_imports_nothing_and_never_calls_the_sink() {
    let lines = "{\"question\": \"a\", \"answer\": \"#### 1\"}\n{\"question\": 5}\n";
    let file = temp_file(lines.as_bytes(), ".jsonl");
    let mut calls = 0;
    let report = rollscope::formats::import_file(file.path(), strict(None), &mut |_| {
        calls += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!(calls, 0);
    assert_eq!((report.trajectories, report.tasks), (0, 0));
    assert_eq!(only_problem(&report.problems).line, Some(2));
}

#[test]
fn a_failing_sink_stops_the_import_with_its_error() {
    let file = data("samples_prm800k.jsonl");
    let mut seen = 0;
    let result = rollscope::formats::import_file(&file, options(None), &mut |_| {
        seen += 1;
        anyhow::ensure!(seen < 3, "the store is full");
        Ok(())
    });
    match result {
        Err(ImportError::Sink(error)) => assert_eq!(error.to_string(), "the store is full"),
        other => panic!("expected a sink error, got {other:?}"),
    }
    assert_eq!(seen, 3);
}

#[test]
fn a_broken_first_line_does_not_hide_the_rest() {
    let lines = "{\"question\": \"cut\n{\"question\": \"b\", \"answer\": \"#### 2\"}\n{\"question\": \"c\", \"answer\": \"#### 3\"}\n";
    let file = temp_file(lines.as_bytes(), ".jsonl");
    let imported = import_with(file.path(), options(Some(Format::Gsm8k))).unwrap();
    assert_eq!(imported.tasks.len(), 2);
    assert_eq!(only_problem(&imported.report.problems).line, Some(1));
}
