//! Agent formats import with their conversations, tool calls, rewards and stop reasons.

use super::common::import;
use rollscope::formats::Format;
use rollscope::trajectory::{ArgumentsEncoding, Role, StopReason};
use serde_json::{Value, json};

fn arguments(trajectory: &rollscope::trajectory::Trajectory, call: usize) -> Value {
    let calls: Vec<_> = trajectory
        .messages
        .iter()
        .flat_map(|m| &m.tool_calls)
        .collect();
    calls[call]
        .parsed_arguments()
        .expect("arguments parse as JSON")
}

#[test]
fn openai_chat_tools() {
    let imported = import("openai_chat_tools.jsonl");
    assert_eq!(imported.report.format, Some(Format::OpenaiMessages));
    assert_eq!((imported.trajectories.len(), imported.tasks.len()), (2, 2));
    let first = &imported.trajectories[0];
    let roles: Vec<&Role> = first.messages.iter().map(|m| &m.role).collect();
    assert_eq!(roles, [&Role::System, &Role::User, &Role::Assistant]);
    let call = &first.messages[2].tool_calls[0];
    assert_eq!(
        (call.name.as_str(), call.id.as_deref()),
        ("takeoff_drone", Some("call_id"))
    );
    assert_eq!(call.encoding, ArgumentsEncoding::String);
    assert_eq!(arguments(first, 0), json!({"altitude": 100}));
    assert_eq!(first.messages[2].content, "");
    assert_eq!(first.extra["parallel_tool_calls"], json!(false));
    assert_eq!(first.source_format, "openai");
    let task = imported.task_of(first);
    assert_eq!(task.tools.len(), 16);
    assert_eq!(task.tools[0]["function"]["name"], "takeoff_drone");
    assert_eq!(
        task.question(),
        "Let's get the drone in the air, can you make it take off"
    );
}

#[test]
fn sharegpt_glaive_toolcall() {
    let imported = import("sharegpt_glaive_toolcall.json");
    assert_eq!(imported.report.format, Some(Format::Sharegpt));
    assert_eq!(imported.trajectories.len(), 20);
    assert_eq!(
        imported.tasks.len(),
        19,
        "two records share a first question and tools"
    );
    let first = &imported.trajectories[0];
    assert_eq!(first.messages.len(), 8);
    let call_message = &first.messages[3];
    assert_eq!(call_message.role, Role::Assistant);
    assert_eq!(call_message.tool_calls[0].name, "search_recipes");
    assert_eq!(
        call_message.tool_calls[0].encoding,
        ArgumentsEncoding::Object
    );
    assert_eq!(
        arguments(first, 0),
        json!({"ingredients": ["chicken", "bell peppers", "rice"]})
    );
    let observation = &first.messages[4];
    assert_eq!(
        (observation.role.clone(), observation.name.as_deref()),
        (Role::Tool, Some("search_recipes"))
    );
    assert!(
        observation
            .content
            .starts_with("{\"recipes\": [{\"name\": \"Chicken and Bell Pepper Stir Fry\"")
    );
    let tools = &imported.task_of(first).tools;
    assert_eq!(tools[0]["type"], "function");
    assert_eq!(tools[0]["function"]["name"], "search_recipes");
    let calls: usize = imported
        .trajectories
        .iter()
        .map(|t| t.tool_call_count())
        .sum();
    assert_eq!(calls, 12);
}

#[test]
fn swe_agent_1x_with_tool_calls() {
    let imported = import("function_calling_simple.traj");
    assert_eq!(imported.report.format, Some(Format::SweAgent));
    assert_eq!((imported.trajectories.len(), imported.tasks.len()), (1, 1));
    let trajectory = &imported.trajectories[0];
    assert_eq!(trajectory.messages.len(), 12);
    let names: Vec<&str> = trajectory
        .messages
        .iter()
        .flat_map(|m| &m.tool_calls)
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["find_file", "open", "edit", "bash", "submit"]);
    assert_eq!(
        arguments(trajectory, 0),
        json!({"file_name": "missing_colon.py"})
    );
    let result = &trajectory.messages[3];
    assert_eq!(result.role, Role::Tool);
    assert_eq!(
        result.tool_call_id.as_deref(),
        Some("call_PbWErNIge3YTrli3fiVvmIid")
    );
    assert_eq!(result.name.as_deref(), Some("find_file"));
    assert!(!result.extra.contains_key("tool_call_ids"));
    assert_eq!(
        trajectory.messages[2].extra["action"],
        "find_file missing_colon.py"
    );
    assert_eq!(
        trajectory.stop_reason,
        StopReason::Answered,
        "this file has no `info`"
    );

    let imported = import("6e44b9__sweagenttestrepo-1c2844.traj");
    let trajectory = &imported.trajectories[0];
    assert_eq!(
        trajectory.messages.len(),
        12,
        "the history's 10 messages and the submit step only `trajectory` logged"
    );
    let said = &trajectory.messages[10];
    assert_eq!(said.role, Role::Assistant);
    assert!(
        said.content
            .starts_with("The script `missing_colon.py` ran successfully")
    );
    let submitted = &trajectory.messages[11];
    assert_eq!(submitted.role, Role::Tool);
    assert_eq!(submitted.name.as_deref(), Some("submit"));
    assert!(
        submitted
            .content
            .contains("diff --git a/tests/missing_colon.py")
    );
    assert_eq!(
        trajectory.stop_reason,
        StopReason::Other("submitted".into())
    );
    assert!(
        trajectory
            .final_answer
            .as_deref()
            .unwrap()
            .starts_with("\r\ndiff --git a/tests/missing_colon.py")
    );
    assert_eq!(trajectory.extra["trajectory"].as_array().unwrap().len(), 5);
    assert_eq!(trajectory.extra["info"]["model_stats"]["api_calls"], 5);
    assert_eq!(
        trajectory.extra["replay_config"]["agent"]["model"]["name"],
        "gpt-4o"
    );
}

#[test]
fn swe_agent_0x_observations_as_user_messages() {
    let imported = import("swe_agent_0x_ctf_networking_1.traj");
    assert_eq!(imported.report.format, Some(Format::SweAgent));
    let trajectory = &imported.trajectories[0];
    let roles: Vec<&str> = trajectory
        .messages
        .iter()
        .map(|m| m.role.as_str())
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant"
        ]
    );
    assert_eq!(trajectory.tool_call_count(), 0);
    assert_eq!(
        trajectory.stop_reason,
        StopReason::Other("submitted".into())
    );
    assert_eq!(
        trajectory.final_answer.as_deref(),
        Some("flag{d316759c281bf925d600be698a4973d5}")
    );
    assert!(
        trajectory.extra["trajectory"][0]["state"].is_string(),
        "0.x state stays a JSON string"
    );
    assert_eq!(
        trajectory.messages[2].extra["action"],
        "tshark -n -r networking.pcap -q -z io,phs \n"
    );
}

#[test]
fn mini_swe_agent() {
    let imported = import("mini_swe_agent_sqlfluff.traj.json");
    assert_eq!(imported.report.format, Some(Format::MiniSweAgent));
    let trajectory = &imported.trajectories[0];
    assert_eq!(trajectory.messages.len(), 84);
    assert_eq!(trajectory.turn_count(), 41);
    let tools = trajectory
        .messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .count();
    assert_eq!(tools, 40);
    assert_eq!(trajectory.messages[83].role, Role::Other("exit".into()));
    let call = &trajectory.messages[2].tool_calls[0];
    assert_eq!(call.name, "bash");
    assert_eq!(
        arguments(trajectory, 0)["command"],
        "find . -type f -name \"*.py\" | grep -i \"l060\" | head -20"
    );
    assert_eq!(
        trajectory.messages[2].extra["tool_call_extras"],
        json!([{"index": 0}])
    );
    assert_eq!(
        trajectory.messages[3].tool_call_id.as_deref(),
        Some("call_00_DWuPj6lu5KzoLnXB0Rb4ItZo")
    );
    assert_eq!(trajectory.messages[3].name.as_deref(), Some("bash"));
    assert_eq!(trajectory.messages[3].extra["extra"]["returncode"], 0);
    assert_eq!(
        trajectory.stop_reason,
        StopReason::Other("Submitted".into())
    );
    assert!(
        trajectory
            .final_answer
            .as_deref()
            .unwrap()
            .starts_with("diff --git a/src/sqlfluff/rules/L060.py")
    );
    assert_eq!(trajectory.extra["instance_id"], "sqlfluff__sqlfluff-2419");
}

#[test]
fn inspect_json_log() {
    let imported = import("log_formats.json");
    assert_eq!(imported.report.format, Some(Format::Inspect));
    let trajectory = &imported.trajectories[0];
    assert_eq!(trajectory.messages.len(), 3);
    assert_eq!(trajectory.messages[2].content, "No");
    let reward = trajectory.reward.as_ref().unwrap();
    assert_eq!(
        (reward.total, reward.passed),
        (0.0, Some(false)),
        "score `I` is a fail"
    );
    assert_eq!(reward.components["match"], 0.0);
    assert_eq!(
        trajectory.extra["id"], 1,
        "the sample's own id is kept apart from ours"
    );
    assert_eq!(trajectory.extra["eval"]["model"], "ollama/llama3.1");
    let task = imported.task_of(trajectory);
    assert_eq!(task.ground_truth.as_deref(), Some(" Yes"));
    assert_eq!(task.source, "popularity");
}

#[test]
fn inspect_eval_archive() {
    let imported = import("log_message_deduplication.eval");
    assert_eq!(imported.report.format, Some(Format::InspectEval));
    assert_eq!((imported.trajectories.len(), imported.tasks.len()), (1, 1));
    let trajectory = &imported.trajectories[0];
    assert_eq!(trajectory.messages.len(), 12);
    assert_eq!(trajectory.tool_call_count(), 5);
    let call = &trajectory.messages[1].tool_calls[0];
    assert_eq!(
        (call.name.as_str(), call.id.as_deref()),
        ("bash", Some("hardcoded_0"))
    );
    assert_eq!(call.encoding, ArgumentsEncoding::Object);
    assert_eq!(arguments(trajectory, 0), json!({"cmd": "ls"}));
    let result = &trajectory.messages[2];
    assert_eq!(
        (result.name.as_deref(), result.tool_call_id.as_deref()),
        (Some("bash"), Some("hardcoded_0"))
    );
    assert!(result.content.starts_with("bin\nboot\n"));
    let reward = trajectory.reward.as_ref().unwrap();
    assert_eq!((reward.total, reward.passed), (0.0, None));
    let task = imported.task_of(trajectory);
    assert_eq!(task.ground_truth.as_deref(), Some("42.7"));
    let names: Vec<&Value> = task
        .tools
        .iter()
        .map(|tool| &tool["function"]["name"])
        .collect();
    assert_eq!(names, [&json!("bash"), &json!("python")]);
    let python = task.tools[1]["function"]["description"].as_str().unwrap();
    assert!(
        python.starts_with("Use the python function"),
        "attachment resolved: {python}"
    );
}

#[test]
fn responses_items_from_nemo_gym() {
    let imported = import("nemo_gym_single_tool_call_rollouts.jsonl");
    assert_eq!(imported.report.format, Some(Format::Responses));
    assert_eq!(imported.trajectories.len(), 5);
    let trajectory = &imported.trajectories[2];
    let roles: Vec<&str> = trajectory
        .messages
        .iter()
        .map(|m| m.role.as_str())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "assistant"]);
    assert_eq!(trajectory.messages[0].extra["source_role"], "developer");
    assert_eq!(trajectory.messages[1].content, "humidity in sf");
    let call = &trajectory.messages[2].tool_calls[0];
    assert_eq!(
        (call.name.as_str(), call.id.as_deref()),
        ("get_weather", Some("call_kSe0XNsX2FxCwdXCFxK0ars0"))
    );
    assert_eq!(arguments(trajectory, 0), json!({"city": "San Francisco"}));
    let result = &trajectory.messages[3];
    assert_eq!(result.name.as_deref(), Some("get_weather"));
    assert!(
        result
            .content
            .contains("The weather in San Francisco is cold.")
    );
    assert!(
        trajectory.messages[4]
            .content
            .starts_with("The current weather in San Francisco is described as cold")
    );
    assert_eq!(trajectory.reward.as_ref().unwrap().total, 1.0);
    assert_eq!(trajectory.extra["response"]["model"], "gpt-4.1-2025-04-14");
    assert_eq!(
        imported.task_of(trajectory).tools[0]["function"]["name"],
        "get_weather"
    );
}

#[test]
fn tau_bench_results() {
    let imported = import("tau_bench_airline_one.json");
    assert_eq!(imported.report.format, Some(Format::TauBench));
    let trajectory = &imported.trajectories[0];
    assert_eq!(trajectory.messages.len(), 32);
    assert_eq!(trajectory.tool_call_count(), 8);
    let reward = trajectory.reward.as_ref().unwrap();
    assert_eq!(reward.total, 0.0);
    assert_eq!(reward.components["r_actions"], 0.0);
    assert_eq!(trajectory.passed(), Some(false));
    assert_eq!(
        trajectory
            .messages
            .iter()
            .flat_map(|m| &m.tool_calls)
            .next()
            .unwrap()
            .name,
        "get_user_details"
    );
    assert_eq!(arguments(trajectory, 0), json!({"user_id": "mia_li_3668"}));
    assert_eq!(trajectory.extra["task_id"], 0);
    assert_eq!(trajectory.extra["info"]["task"]["user_id"], "mia_li_3668");
}
