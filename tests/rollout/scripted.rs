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

/// The reply of script `name` at turn `turn` of `messages`, and its finish reason.
fn reply(name: &str, turn: usize, messages: &[Value]) -> (Value, &'static str) {
    let answer = json!({"role": "assistant", "content": "Final Answer: 42"});
    let last_result = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap_or("nothing");
    match (name, turn) {
        ("echo", 0) => (
            call("calculator", "{\"expression\": \"17+25\"}"),
            "tool_calls",
        ),
        ("echo", _) => (
            json!({"role": "assistant", "content": format!("Final Answer: {last_result}")}),
            "stop",
        ),
        ("slow", 0..=2) => (
            call("calculator", "{\"expression\": \"1+1\"}"),
            "tool_calls",
        ),
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
        let (message, finish) = reply(&script, turn, messages);
        let response = json!({"choices": [{"message": message, "finish_reason": finish}],
            "usage": {"completion_tokens": 5}});
        request
            .respond(tiny_http::Response::from_string(response.to_string()))
            .unwrap();
    }
}

/// A scripted endpoint on loopback, stopped when dropped.
pub struct Scripted {
    server: Arc<tiny_http::Server>,
    worker: Option<std::thread::JoinHandle<()>>,
    /// The policy that asks it.
    pub policy: Policy,
    /// Its base URL, `http://127.0.0.1:PORT/v1`.
    pub url: String,
}

impl Scripted {
    /// Starts the endpoint.
    pub fn start() -> Self {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let address = server.server_addr().to_ip().unwrap();
        let worker = {
            let server = server.clone();
            std::thread::spawn(move || serve_scripts(server))
        };
        let url = format!("http://{address}/v1");
        let policy = Policy::Http(HttpPolicy::new(&url, "script", Duration::from_secs(30)));
        Self {
            server,
            worker: Some(worker),
            policy,
            url,
        }
    }
}

impl Drop for Scripted {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(worker) = self.worker.take() {
            worker.join().unwrap();
        }
    }
}

/// The task that plays `script`: its answer is 42, the calculator is offered.
pub fn script_task(index: usize, script: &str) -> Task {
    let mut task = Task::new(format!("script-{index}"), "scripted", script);
    task.prompt.insert(0, Message::system("scripted"));
    task.ground_truth = Some("42".into());
    task.tools = vec![rollscope::agent::tools::builtin_spec("calculator").unwrap()];
    task
}

/// The built-in tools and reward.
pub fn environment() -> Environment {
    Environment::new(
        ToolRegistry::standard(SandboxLimits::default()).unwrap(),
        RewardConfig::default(),
    )
}

/// A two-worker runtime.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// One rollout of `script` under `config`.
pub fn run_script(scripted: &Scripted, script: &str, config: &RolloutConfig) -> Trajectory {
    let request = RolloutRequest {
        task: Arc::new(script_task(0, script)),
        run: "scripted".into(),
        policy_version: 0,
        group: 0,
        sample: 0,
    };
    let mut done = Vec::new();
    runtime().block_on(run_rollouts(
        &scripted.policy,
        &environment(),
        config,
        vec![request],
        |t| done.push(t),
    ));
    done.pop().unwrap()
}

/// Runs one rollout per script; returns (script, trajectory).
pub fn run_scripts() -> Vec<(String, Trajectory)> {
    let scripted = Scripted::start();
    let scripts = [
        "invalid-json",
        "unknown-tool",
        "missing-argument",
        "never-stops",
        "answers",
        "truncated",
    ];
    let requests: Vec<RolloutRequest> = scripts
        .iter()
        .enumerate()
        .map(|(index, script)| RolloutRequest {
            task: Arc::new(script_task(index, script)),
            run: "scripted".into(),
            policy_version: 0,
            group: index as u64,
            sample: 0,
        })
        .collect();
    let config = RolloutConfig {
        max_turns: 3,
        ..RolloutConfig::default()
    };
    let mut done = Vec::new();
    runtime().block_on(run_rollouts(
        &scripted.policy,
        &environment(),
        &config,
        requests,
        |t| done.push(t),
    ));
    drop(scripted);
    done.into_iter()
        .map(|trajectory| {
            let index: usize = trajectory.task_id.as_deref().unwrap()["script-".len()..]
                .parse()
                .unwrap();
            (scripts[index].to_string(), trajectory)
        })
        .collect()
}
