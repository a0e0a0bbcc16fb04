//! Detection from content: each real file is recognised; the name is only a hint.

use super::common::{data, temp_file};
use rollscope::formats::{Format, ImportError, detect};

#[test]
fn every_real_file_is_recognised_by_its_content() {
    let expected = [
        ("6e44b9__sweagenttestrepo-1c2844.traj", Format::SweAgent),
        ("function_calling_simple.traj", Format::SweAgent),
        ("gsm8k_test_first150.jsonl", Format::Gsm8k),
        (
            "harbor-terminus2-golden-context-summarization.trajectory.json",
            Format::Atif,
        ),
        (
            "llamafactory_reason_tool_use_demo_50.jsonl",
            Format::OpenaiMessages,
        ),
        ("log_formats.json", Format::Inspect),
        ("log_message_deduplication.eval", Format::InspectEval),
        ("mini_swe_agent_local_replay.traj.json", Format::Messages),
        ("mini_swe_agent_sqlfluff.traj.json", Format::MiniSweAgent),
        (
            "nemo_gym_single_tool_call_rollouts.jsonl",
            Format::Responses,
        ),
        (
            "openagents-qa-runner-login-trace.trajectory.json",
            Format::Atif,
        ),
        ("openai_chat_tools.jsonl", Format::OpenaiMessages),
        ("openhands_basic_interactions.json", Format::OpenHands),
        ("openhands_resolver_output.first1.jsonl", Format::OpenHands),
        ("openhands_wrong_initial_state.json", Format::OpenHands),
        ("otel-otlp-kagent-adk-go-1turn.json", Format::Otel),
        ("samples_math-aps-tree.first1.jsonl", Format::OmegaPrm),
        ("samples_math-shepherd.jsonl", Format::MathShepherd),
        ("samples_prm800k.jsonl", Format::Prm800k),
        ("sharegpt_glaive_toolcall.json", Format::Sharegpt),
        ("swe_agent_0x_ctf_networking_1.traj", Format::SweAgent),
        ("tau_bench_airline_one.json", Format::TauBench),
        ("verl_gsm8k_multiturn_tasks.jsonl", Format::VerlTasks),
        ("verl_rollout_dump_step3.jsonl", Format::VerlRollouts),
    ];
    assert_eq!(
        expected.len(),
        super::common::data_files().len(),
        "a new file needs a line here"
    );
    let verifiers = "verifiers/verifiers-math-python-gpt-4.1-mini.results.jsonl";
    assert_eq!(detect(&data(verifiers)).unwrap(), Format::Verifiers);
    for (name, format) in expected {
        assert_eq!(detect(&data(name)).unwrap(), format, "{name}");
        let renamed = temp_file(&std::fs::read(data(name)).unwrap(), ".data");
        assert_eq!(
            detect(renamed.path()).unwrap(),
            format,
            "{name} without its name"
        );
    }
}

#[test]
fn small_records_of_each_remaining_shape_are_recognised() {
    let cases = [
        (
            r#"{"prompt": [{"role": "user", "content": "q"}], "completion": [{"role": "assistant", "content": "a"}]}"#,
            Format::TrlPromptCompletion,
        ),
        (
            r#"{"prompt": "q", "completions": ["a", "b"], "labels": [true, false]}"#,
            Format::TrlStepwise,
        ),
        (
            r#"[{"conversations": [{"from": "human", "value": "hi"}]}]"#,
            Format::Sharegpt,
        ),
        ("\u{feff}{\"messages\": []}\n", Format::OpenaiMessages),
    ];
    for (text, format) in cases {
        assert_eq!(
            detect(temp_file(text.as_bytes(), ".jsonl").path()).unwrap(),
            format,
            "{text}"
        );
    }
}

#[test]
fn unknown_content_names_the_keys_and_the_hint_of_the_name() {
    let file = temp_file(b"{\"alpha\": 1, \"beta\": 2}\n", ".traj");
    let error = detect(file.path()).unwrap_err();
    assert!(matches!(error, ImportError::Unrecognised { .. }));
    let message = error.to_string();
    assert!(message.contains("{alpha, beta}"), "{message}");
    assert!(message.contains("try --format swe-agent"), "{message}");
    assert!(message.contains("--format"), "{message}");
}

#[test]
fn a_record_written_over_several_lines_is_one_record() {
    let pretty = "{\n  \"messages\": [\n    {\"role\": \"user\", \"content\": \"hi\"},\n    {\"role\": \"assistant\", \"content\": \"hello\"}\n  ]\n}\n";
    let file = temp_file(pretty.as_bytes(), ".json");
    assert_eq!(detect(file.path()).unwrap(), Format::OpenaiMessages);
    let imported = super::common::import_with(file.path(), super::common::options(None)).unwrap();
    assert!(
        imported.report.problems.is_empty(),
        "{:?}",
        imported.report.problems
    );
    assert_eq!(imported.trajectories[0].messages[1].content, "hello");
}
