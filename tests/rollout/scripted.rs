//! A scripted OpenAI-compatible endpoint that answers each conversation from a script, to
//! drive the loop through behaviours a real policy produces only by chance.

use rollscope::agent::reward::RewardConfig;
use rollscope::agent::rollout::{
    Environment, HttpPolicy, Policy, RolloutConfig, RolloutRequest, run_rollouts,
};
use rollscope::agent::tools::{SandboxLimits, ToolRegistry};
use rollscope::trajectory::{Message, Task, Trajectory};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

fn call(name: &str, arguments: &str) -> Value {
    json!({"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": name, "arguments": arguments}}]})
}

/// The reply of script `name` at turn `turn`, and its finish reason.
fn reply(name: &str, turn: usize) -> (Value, &'static str) {
    let answer = json!({"role": "assistant", "content": "Final Answer: 42"});
    match (name, turn) {
        ("invalid-json", 0) => (call("calculator", "{\"expression\": 17+25"), "tool_calls"),
        ("unknown-tool", 0) => (call("weather", "{}"), "tool_calls"),
        ("missing-argument", 0) => (call("calculator", "{}"), "tool_calls"),
        ("never-stops", _) => (
            call("calculator", "{\"expression\": \"1+1\"}"),
            "tool_calls",
        ),
        ("answers", 0) => (
            call("calculator", "{\"expression\": \"17+25\"}"),
            "tool_calls",
        ),
        ("truncated", _) => (
            json!({"role": "assistant", "content": "I think the"}),
            "length",
        ),
        _ => (answer, "stop"),
    }
}

fn serve_scripts(server: Arc<tiny_http::Server>) {
    while let Ok(mut request) = server.recv() {
        let mut body = String::new();
        request.as_reader().read_to_string(&mut body).unwrap();
        let body: Value = serde_json::from_str(&body).unwrap();
        let messages = body["messages"].as_array().unwrap();
        let script = messages[1]["content"].as_str().unwrap().to_string();
        let turn = messages.iter().filter(|m| m["role"] == "assistant").count();
        let (message, finish) = reply(&script, turn);
        let response = json!({"choices": [{"message": message, "finish_reason": finish}],
            "usage": {"completion_tokens": 5}});
        request
            .respond(tiny_http::Response::from_string(response.to_string()))
            .unwrap();
    }
}

/// Runs one rollout per script; returns (script, trajectory).
pub fn run_scripts() -> Vec<(String, Trajectory)> {
    let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
    let address = server.server_addr().to_ip().unwrap();
    let worker = {
        let server = server.clone();
        std::thread::spawn(move || serve_scripts(server))
    };
    let scripts = [
        "invalid-json",
        "unknown-tool",
        "missing-argument",
        "never-stops",
        "answers",
        "truncated",
    ];
    let tools = vec![rollscope::agent::tools::builtin_spec("calculator").unwrap()];
    let requests: Vec<RolloutRequest> = scripts
        .iter()
        .enumerate()
        .map(|(index, script)| {
            let mut task = Task::new(format!("script-{index}"), "scripted", *script);
            task.prompt.insert(0, Message::system("scripted"));
            task.ground_truth = Some("42".into());
            task.tools = tools.clone();
            RolloutRequest {
                task: Arc::new(task),
                run: "scripted".into(),
                policy_version: 0,
                group: index as u64,
                sample: 0,
            }
        })
        .collect();
    let policy = Policy::Http(HttpPolicy::new(
        &format!("http://{address}/v1"),
        "script",
        Duration::from_secs(30),
    ));
    let environment = Environment::new(
        ToolRegistry::standard(SandboxLimits::default()).unwrap(),
        RewardConfig::default(),
    );
    let config = RolloutConfig {
        max_turns: 3,
        ..RolloutConfig::default()
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut done = Vec::new();
    runtime.block_on(run_rollouts(
        &policy,
        &environment,
        &config,
        requests,
        |t| done.push(t),
    ));
    server.unblock();
    worker.join().unwrap();
    done.into_iter()
        .map(|trajectory| {
            let index: usize = trajectory.task_id.as_deref().unwrap()["script-".len()..]
                .parse()
                .unwrap();
            (scripts[index].to_string(), trajectory)
        })
        .collect()
}
