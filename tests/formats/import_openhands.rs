//! The families added for other stacks' agents: OpenHands event streams and resolver rows,
//! bare message arrays (mini-swe-agent replays), and OmegaPRM / MATH-APS solution trees.

use super::common::{import, read};
use rollscope::formats::Format;
use rollscope::trajectory::{Role, ScoreSource, StopReason};
use serde_json::Value;

/// The events of an event stream file, as JSON.
fn events(name: &str) -> Vec<Value> {
    serde_json::from_slice(&read(name)).unwrap()
}

fn count(trajectory: &rollscope::trajectory::Trajectory, role: Role) -> usize {
    trajectory
        .messages
        .iter()
        .filter(|m| m.role == role)
        .count()
}

#[test]
fn openhands_event_streams_read_as_tool_calls_and_their_results() {
    let imported = import("openhands_wrong_initial_state.json");
    assert_eq!(imported.report.format, Some(Format::OpenHands));
    assert_eq!(imported.trajectories.len(), 1);
    let trajectory = &imported.trajectories[0];
    let events = events("openhands_wrong_initial_state.json");
    assert_eq!(
        trajectory.messages.len(),
        events.len(),
        "one message per event"
    );
    let actions: Vec<&Value> = events
        .iter()
        .filter(|event| event.get("action").is_some() && event["source"] == "agent")
        .collect();
    let calls: Vec<_> = trajectory
        .messages
        .iter()
        .flat_map(|m| &m.tool_calls)
        .collect();
    assert_eq!(calls.len(), actions.len(), "every agent action is a call");
    assert_eq!(calls.len(), 4);
    assert_eq!(count(trajectory, Role::Tool), 3);
    for (call, action) in calls.iter().zip(&actions) {
        let metadata = &action["tool_call_metadata"];
        assert_eq!(call.id.as_deref(), metadata["tool_call_id"].as_str());
        assert_eq!(call.name, metadata["function_name"].as_str().unwrap());
    }
    assert_eq!(calls[0].name, "str_replace_editor");
    assert_eq!(
        calls[0].parsed_arguments().unwrap(),
        serde_json::json!({"command": "view", "path": "/workspace"}),
        "the model's own arguments, from the model response"
    );
    let run = &trajectory.messages[3];
    assert_eq!(run.content, events[3]["args"]["thought"].as_str().unwrap());
    assert_eq!(
        run.tool_calls[0].parsed_arguments().unwrap()["command"],
        "mv /workspace/game_2048.py /workspace/2048.py"
    );
    let result = &trajectory.messages[2];
    assert_eq!(result.role, Role::Tool);
    assert_eq!(result.tool_call_id, calls[0].id);
    assert_eq!(result.name.as_deref(), Some("str_replace_editor"));
    assert!(result.content.ends_with("/workspace/game_2048.py"));
    assert_eq!(
        trajectory.messages[4].extra["extras"]["metadata"]["exit_code"],
        0
    );
    assert_eq!(
        trajectory.messages[4].content,
        "Command `mv /workspace/game_2048.py /workspace/2048.py` executed with exit code 0.",
        "an empty result shows the event's own line"
    );
    assert_eq!(
        trajectory.final_answer.as_deref(),
        events[7]["args"]["thought"].as_str()
    );
    assert_eq!(trajectory.stop_reason, StopReason::Answered);
    assert_eq!(
        imported.task_of(trajectory).prompt[0].content,
        "Please rename game_2048.py to 2048.py"
    );
}

#[test]
fn openhands_messages_keep_their_speakers_and_the_finish_line() {
    let imported = import("openhands_basic_interactions.json");
    let trajectory = &imported.trajectories[0];
    let roles: Vec<&str> = trajectory
        .messages
        .iter()
        .map(|m| m.role.as_str())
        .collect();
    let events = events("openhands_basic_interactions.json");
    let sources: Vec<&str> = events
        .iter()
        .map(|event| match event["source"].as_str().unwrap() {
            "agent" => "assistant",
            other => other,
        })
        .collect();
    assert_eq!(roles, sources);
    assert_eq!(trajectory.messages[0].content, "what's 1+1?");
    assert_eq!(
        trajectory.final_answer.as_deref(),
        Some("All done! What's next on the agenda?"),
        "an empty thought: the finish event's own line"
    );
    assert_eq!(trajectory.messages[5].tool_calls[0].name, "finish");
}

#[test]
fn openhands_resolver_rows_pair_old_schema_calls_and_keep_the_outcome() {
    let imported = import("openhands_resolver_output.first1.jsonl");
    assert_eq!(imported.report.format, Some(Format::OpenHands));
    let row: Value =
        serde_json::from_slice(&read("openhands_resolver_output.first1.jsonl")).unwrap();
    let trajectory = &imported.trajectories[0];
    let history = row["history"].as_array().unwrap();
    assert_eq!(trajectory.messages.len(), history.len());
    assert_eq!(count(trajectory, Role::User), 1);
    let calls: Vec<_> = trajectory
        .messages
        .iter()
        .flat_map(|m| &m.tool_calls)
        .collect();
    let names: Vec<&str> = calls.iter().map(|call| call.name.as_str()).collect();
    assert_eq!(names, ["run", "run_ipython", "run"]);
    assert_eq!(
        calls[0].parsed_arguments().unwrap()["command"],
        "touch LICENSE"
    );
    for message in trajectory.messages.iter().filter(|m| m.role == Role::Tool) {
        let call = calls
            .iter()
            .find(|call| call.id == message.tool_call_id)
            .expect("each result answers a call");
        assert_eq!(message.name.as_deref(), Some(call.name.as_str()));
    }
    let reward = trajectory.reward.as_ref().unwrap();
    assert_eq!(reward.passed, Some(true));
    assert_eq!(reward.total, 1.0);
    assert_eq!(trajectory.extra["metrics"], row["metrics"], "costs kept");
    assert_eq!(trajectory.extra["git_patch"], row["git_patch"]);
    assert!(
        trajectory
            .final_answer
            .as_deref()
            .unwrap()
            .starts_with("The MIT License has been")
    );
    assert!(
        trajectory.messages[0]
            .content
            .starts_with("Please fix the following issue")
    );
}

#[test]
fn a_bare_message_array_is_one_transcript() {
    let imported = import("mini_swe_agent_local_replay.traj.json");
    assert_eq!(imported.report.format, Some(Format::Messages));
    let messages: Vec<Value> =
        serde_json::from_slice(&read("mini_swe_agent_local_replay.traj.json")).unwrap();
    let trajectory = &imported.trajectories[0];
    assert_eq!(trajectory.messages.len(), messages.len());
    for (message, raw) in trajectory.messages.iter().zip(&messages) {
        assert_eq!(message.role.as_str(), raw["role"].as_str().unwrap());
        assert_eq!(message.content, raw["content"].as_str().unwrap());
    }
    assert_eq!(trajectory.turn_count(), 2);
    assert_eq!(
        imported.task_of(trajectory).prompt.len(),
        2,
        "system and user"
    );
}

/// The root-to-leaf paths of an OmegaPRM tree, as lists of `mc_value`s.
fn tree_paths(node: &Value, above: &mut Vec<f64>, paths: &mut Vec<Vec<f64>>) {
    let children = node["children"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    if children.is_empty() {
        paths.push(above.clone());
    }
    for child in children {
        above.push(child["mc_value"].as_f64().unwrap());
        tree_paths(child, above, paths);
        above.pop();
    }
}

#[test]
fn omega_prm_trees_give_one_scored_solution_per_path() {
    let name = "samples_math-aps-tree.first1.jsonl";
    let imported = import(name);
    assert_eq!(imported.report.format, Some(Format::OmegaPrm));
    let row: Value = serde_json::from_slice(&read(name)).unwrap();
    let mut paths = Vec::new();
    tree_paths(&row["reasoning_steps"], &mut Vec::new(), &mut paths);
    assert_eq!(imported.trajectories.len(), paths.len());
    assert_eq!(paths.len(), 137);
    let scores: usize = imported
        .trajectories
        .iter()
        .map(|t| t.step_scores.len())
        .sum();
    assert_eq!(scores, 391);
    let group = imported.trajectories[0].group;
    assert!(group.is_some());
    for (sample, (trajectory, values)) in imported.trajectories.iter().zip(&paths).enumerate() {
        let got: Vec<f64> = trajectory.step_scores.iter().map(|s| s.value).collect();
        assert_eq!(&got, values);
        assert!(
            trajectory
                .step_scores
                .iter()
                .all(|s| s.source == ScoreSource::MonteCarlo)
        );
        assert_eq!(trajectory.steps().len(), values.len());
        assert_eq!(trajectory.group, group, "one question, one group");
        assert_eq!(trajectory.sample, Some(sample as u32));
        assert_eq!(
            trajectory.messages[0].content,
            row["question"].as_str().unwrap()
        );
        assert_eq!(
            trajectory.extra["mc_value_before_first_step"],
            row["reasoning_steps"]["mc_value"]
        );
    }
    assert_eq!(imported.tasks.len(), 1);
    assert_eq!(imported.tasks[0].ground_truth.as_deref(), Some("3"));
}

#[test]
fn omega_prm_linear_prefixes_become_steps() {
    let row = serde_json::json!({
        "question": "What is 2+3·4?",
        "final_answer": "14",
        "reasoning_steps": [
            {"solution_prefix": "3·4 = 12.", "mc_value": 0.75},
            {"solution_prefix": "3·4 = 12. 2 + 12 = 14.", "mc_value": 1.0},
        ],
    });
    let file = super::common::temp_file(row.to_string().as_bytes(), ".jsonl");
    let imported = super::common::import_with(file.path(), super::common::options(None)).unwrap();
    let trajectory = &imported.trajectories[0];
    let solution = &trajectory.messages[1];
    let steps: Vec<&str> = solution
        .spans
        .iter()
        .map(|&s| solution.span_text(Some(s)))
        .collect();
    assert_eq!(steps, ["3·4 = 12.", "2 + 12 = 14."]);
    let values: Vec<f64> = trajectory.step_scores.iter().map(|s| s.value).collect();
    assert_eq!(values, [0.75, 1.0]);
}
