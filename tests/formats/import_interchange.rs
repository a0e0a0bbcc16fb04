//! The interchange formats of 2026: ATIF (Harbor's trajectories and trial folders), OTLP
//! GenAI traces and verifiers outputs, their counts checked against the files themselves.

use super::common::{data, export, import, import_with, options};
use rollscope::formats::Format;
use rollscope::trajectory::{Role, StopReason};
use serde_json::Value;
use std::collections::HashSet;

/// A test file as JSON.
fn json(name: &str) -> Value {
    serde_json::from_slice(&std::fs::read(data(name)).unwrap()).unwrap()
}

/// The file's steps, calls, observation results, results with a call id, and token ids.
fn atif_counts(document: &Value) -> (usize, usize, usize, usize, usize) {
    let steps = document["steps"].as_array().unwrap();
    let mut counts = (steps.len(), 0, 0, 0, 0);
    for step in steps {
        counts.1 += step["tool_calls"].as_array().map_or(0, Vec::len);
        for result in step["observation"]["results"]
            .as_array()
            .into_iter()
            .flatten()
        {
            counts.2 += 1;
            counts.3 += usize::from(result["source_call_id"].is_string());
        }
        let metrics = &step["metrics"];
        counts.4 += metrics["completion_token_ids"]
            .as_array()
            .map_or(0, Vec::len);
    }
    counts
}

#[test]
fn atif_steps_calls_results_and_token_ids_import_as_the_files_hold_them() {
    for name in [
        "harbor-terminus2-golden-context-summarization.trajectory.json",
        "openagents-qa-runner-login-trace.trajectory.json",
    ] {
        let document = json(name);
        let (steps, calls, results, paired, completion_tokens) = atif_counts(&document);
        let imported = import(name);
        assert_eq!(imported.report.format, Some(Format::Atif), "{name}");
        let trajectory = &imported.trajectories[0];
        let messages = &trajectory.messages;
        assert_eq!(
            messages.len(),
            steps + results,
            "{name}: a message per step and result"
        );
        let stored_calls: Vec<_> = messages.iter().flat_map(|m| &m.tool_calls).collect();
        assert_eq!(stored_calls.len(), calls, "{name}");
        let tool_results: Vec<_> = messages.iter().filter(|m| m.role == Role::Tool).collect();
        assert_eq!(tool_results.len(), results, "{name}");
        let call_ids: HashSet<_> = stored_calls
            .iter()
            .filter_map(|c| c.id.as_deref())
            .collect();
        let answered = tool_results
            .iter()
            .filter(|m| {
                m.tool_call_id
                    .as_deref()
                    .is_some_and(|id| call_ids.contains(id))
            })
            .count();
        assert_eq!(
            answered, paired,
            "{name}: results paired with their calls by id"
        );
        let agent_steps = document["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|step| step["source"] == "agent")
            .count();
        assert_eq!(trajectory.turn_count(), agent_steps, "{name}");
        match &trajectory.token_trace {
            Some(trace) => {
                assert_eq!(
                    trace.policy_tokens(),
                    completion_tokens,
                    "{name}: trained tokens"
                );
                trace.validate().unwrap();
            }
            None => assert_eq!(completion_tokens, 0, "{name}"),
        }
        let task = imported.task_of(trajectory);
        assert_eq!(
            task.prompt[0].content, document["steps"][0]["message"],
            "{name}"
        );
    }
}

#[test]
fn harbor_prompts_that_do_not_continue_start_new_stretches_of_the_trace() {
    let document = json("harbor-terminus2-golden-context-summarization.trajectory.json");
    let mut expected = 0;
    for step in document["steps"].as_array().unwrap() {
        let metrics = &step["metrics"];
        if let Some(completion) = metrics["completion_token_ids"].as_array() {
            expected += completion.len() + metrics["prompt_token_ids"].as_array().unwrap().len();
        }
    }
    let imported = import("harbor-terminus2-golden-context-summarization.trajectory.json");
    let trace = imported.trajectories[0].token_trace.as_ref().unwrap();
    assert_eq!(
        trace.len(),
        expected,
        "this file's prompts never continue the one before (its ids are synthetic), so each \
         step's prompt is a stretch of its own"
    );
    assert_eq!(trace.logprobs.len(), trace.len());
}

#[test]
fn atif_round_trips_through_an_export_to_equal_records() {
    for name in [
        "harbor-terminus2-golden-context-summarization.trajectory.json",
        "openagents-qa-runner-login-trace.trajectory.json",
    ] {
        let imported = import(name);
        let (text, written) = export(Format::Atif, imported.export_items());
        assert_eq!(written, 1);
        let document: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(document["schema_version"], "ATIF-v1.8");
        assert_eq!(atif_counts(&document), atif_counts(&json(name)), "{name}");
        let file = super::common::temp_file(text.as_bytes(), ".jsonl");
        let back = import_with(file.path(), options(None)).unwrap();
        assert!(
            back.report.problems.is_empty(),
            "{:?}",
            back.report.problems
        );
        assert_eq!(
            back.trajectories, imported.trajectories,
            "{name}: equal, ids included"
        );
        assert_eq!(back.tasks, imported.tasks, "{name}");
    }
}

#[test]
fn a_harbor_trial_folder_gives_its_trajectory_the_verifiers_rewards() {
    let trial = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(trial.path().join("agent")).unwrap();
    let trajectory = trial.path().join("agent/trajectory.json");
    std::fs::copy(
        data("openagents-qa-runner-login-trace.trajectory.json"),
        &trajectory,
    )
    .unwrap();
    let result = serde_json::json!({
        "task_name": "login-page", "trial_name": "login-page__abc1234", "source": "qa-suite",
        "agent_info": {"name": "openagents-qa-runner", "version": "0.1.0"},
        "verifier_result": {"rewards": {"reward": 1.0, "screenshot": 0.5}},
        "exception_info": null,
        "started_at": "2026-08-26T12:00:00Z", "finished_at": "2026-08-26T12:00:11.5Z",
        "config": {"agent": {"name": "openagents-qa-runner"}}
    });
    std::fs::write(trial.path().join("result.json"), result.to_string()).unwrap();
    let imported = import_with(&trajectory, options(None)).unwrap();
    let trajectory = &imported.trajectories[0];
    let reward = trajectory.reward.as_ref().unwrap();
    assert_eq!(reward.total, 1.0);
    assert_eq!(reward.components["screenshot"], 0.5);
    assert_eq!(trajectory.timings.total_ms, Some(11_500.0));
    assert_eq!(
        trajectory.extra["harbor_trial"]["trial_name"],
        "login-page__abc1234"
    );
    assert_eq!(imported.task_of(trajectory).source, "qa-suite");

    std::fs::remove_file(trial.path().join("result.json")).unwrap();
    std::fs::create_dir_all(trial.path().join("verifier")).unwrap();
    std::fs::write(trial.path().join("verifier/reward.txt"), "0\n").unwrap();
    let imported = import_with(&trial.path().join("agent/trajectory.json"), options(None)).unwrap();
    assert_eq!(imported.trajectories[0].reward.as_ref().unwrap().total, 0.0);
    assert_eq!(imported.trajectories[0].stop_reason, StopReason::Answered);
}

#[test]
fn an_otel_trace_becomes_its_conversation_with_calls_results_and_usage() {
    let imported = import("otel-otlp-kagent-adk-go-1turn.json");
    assert_eq!(imported.report.format, Some(Format::Otel));
    let document = json("otel-otlp-kagent-adk-go-1turn.json");
    let mut trace_ids = HashSet::new();
    let mut model_calls = Vec::new();
    let mut tool_spans = 0;
    for resource in document["resourceSpans"].as_array().unwrap() {
        for scope in resource["scopeSpans"].as_array().unwrap() {
            for span in scope["spans"].as_array().unwrap() {
                trace_ids.insert(span["traceId"].as_str().unwrap().to_string());
                let attribute = |key: &str| {
                    span["attributes"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|a| a["key"] == key)
                        .map(|a| a["value"]["stringValue"].clone())
                };
                match attribute("gen_ai.operation.name").and_then(|v| v.as_str().map(String::from))
                {
                    Some(op) if op == "generate_content" => model_calls.push(span.clone()),
                    Some(op)
                        if op == "execute_tool" && attribute("gen_ai.tool.call.id").is_some() =>
                    {
                        tool_spans += 1
                    }
                    _ => {}
                }
            }
        }
    }
    assert_eq!(
        imported.trajectories.len(),
        trace_ids.len(),
        "one trajectory per trace"
    );
    let trajectory = &imported.trajectories[0];
    assert_eq!(
        trajectory.turn_count(),
        model_calls.len(),
        "one turn per model call"
    );
    let results: Vec<_> = trajectory
        .messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .collect();
    assert_eq!(results.len(), tool_spans, "a result per tool call");
    assert!(
        results
            .iter()
            .all(|r| r.latency_ms.is_some() && r.name.is_some())
    );
    let calls: Vec<_> = trajectory
        .messages
        .iter()
        .flat_map(|m| &m.tool_calls)
        .collect();
    assert_eq!(calls.len(), tool_spans);
    let first = &trajectory.messages[trajectory.turn_messages()[0]];
    assert_eq!(first.extra["gen_ai.usage.input_tokens"], 14745);
    assert!(
        trajectory.messages[0]
            .content
            .starts_with("You are a helpful assistant")
    );
    assert!(
        trajectory
            .messages
            .last()
            .unwrap()
            .content
            .contains("14 pods"),
        "the final answer ends the conversation"
    );
}

#[test]
fn an_otel_trace_still_being_written_waits_for_its_root_span() {
    let document = json("otel-otlp-kagent-adk-go-1turn.json");
    let mut cut = document.clone();
    for resource in cut["resourceSpans"].as_array_mut().unwrap() {
        for scope in resource["scopeSpans"].as_array_mut().unwrap() {
            scope["spans"]
                .as_array_mut()
                .unwrap()
                .retain(|span| span["parentSpanId"].as_str().is_some_and(|p| !p.is_empty()));
        }
    }
    let file = super::common::temp_file(cut.to_string().as_bytes(), ".json");
    let growing = rollscope::formats::ImportOptions {
        growing: true,
        ..options(None)
    };
    let waiting = import_with(file.path(), growing).unwrap();
    assert!(waiting.trajectories.is_empty());
    assert!(
        waiting.report.problems[0]
            .message
            .contains("root span has not been written yet")
    );
    let settled = import_with(file.path(), options(None)).unwrap();
    assert_eq!(
        settled.trajectories.len(),
        1,
        "a settled file imports what it has"
    );
}

#[test]
fn verifiers_rollouts_import_with_their_reward_columns_groups_and_metadata() {
    let name = "verifiers/verifiers-math-python-gpt-4.1-mini.results.jsonl";
    let imported = import(name);
    assert_eq!(imported.report.format, Some(Format::Verifiers));
    let rows: Vec<Value> = std::fs::read_to_string(data(name))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(imported.trajectories.len(), rows.len());
    let prompts: HashSet<String> = rows.iter().map(|row| row["prompt"].to_string()).collect();
    assert_eq!(imported.tasks.len(), prompts.len(), "a task per example");
    let groups: HashSet<u64> = imported
        .trajectories
        .iter()
        .map(|t| t.group.unwrap())
        .collect();
    assert_eq!(
        groups.len(),
        prompts.len(),
        "an example's rollouts share a group"
    );
    for (trajectory, row) in imported.trajectories.iter().zip(&rows) {
        let reward = trajectory.reward.as_ref().unwrap();
        assert_eq!(reward.total, row["reward"].as_f64().unwrap());
        assert_eq!(
            reward.components["correct_answer_reward_func"],
            row["correct_answer_reward_func"].as_f64().unwrap()
        );
        let calls = trajectory.tool_call_count();
        assert_eq!(calls as f64, row["total_tool_calls"].as_f64().unwrap());
        let results = trajectory.messages.iter().filter(|m| m.role == Role::Tool);
        assert!(
            results.clone().all(|m| m.tool_call_id.is_some()),
            "paired by position"
        );
        assert_eq!(trajectory.extra["metadata"]["model"], "gpt-4.1-mini");
        assert_eq!(
            imported.task_of(trajectory).ground_truth.as_deref(),
            row["answer"].as_str()
        );
    }
}
