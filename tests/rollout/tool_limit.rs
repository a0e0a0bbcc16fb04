//! `max_concurrent_tools`: a scripted endpoint that calls a probe tool every turn, and a
//! probe that records how many of its calls ran at once.

use rollscope::agent::reward::RewardConfig;
use rollscope::agent::rollout::{
    Environment, HttpPolicy, Policy, RolloutConfig, RolloutRequest, run_rollouts,
};
use rollscope::agent::tools::{Tool, ToolFuture, ToolOutput, ToolRegistry, tool_spec};
use rollscope::trajectory::{Message, Task, Trajectory};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A tool that counts the calls running at once. Each call waits (until shortly before its
/// deadline) for the count to have reached `meet` once: a loop that lets `meet` calls run
/// together is sure to be seen doing it.
pub struct Probe {
    meet: usize,
    running: AtomicUsize,
    most: AtomicUsize,
    parameters: Value,
}

impl Probe {
    /// A probe whose calls wait for `meet` of them to be running at once.
    pub fn new(meet: usize) -> Self {
        Self {
            meet,
            running: AtomicUsize::new(0),
            most: AtomicUsize::new(0),
            parameters: json!({"type": "object", "properties": {}}),
        }
    }

    /// The most calls seen running at once.
    pub fn most(&self) -> usize {
        self.most.load(Ordering::SeqCst)
    }
}

impl Tool for Probe {
    fn name(&self) -> &str {
        "probe"
    }

    fn description(&self) -> &str {
        "Counts the calls running at once."
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn call(&self, _arguments: Map<String, Value>, deadline: Instant) -> ToolFuture<'_> {
        Box::pin(async move {
            let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
            self.most.fetch_max(now, Ordering::SeqCst);
            while self.most() < self.meet && Instant::now() + Duration::from_millis(5) < deadline {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
            self.running.fetch_sub(1, Ordering::SeqCst);
            ToolOutput::ok("counted")
        })
    }
}

fn serve_probe_calls(server: Arc<tiny_http::Server>) {
    while let Ok(mut request) = server.recv() {
        let mut body = String::new();
        request.as_reader().read_to_string(&mut body).unwrap();
        let call = json!({"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "probe", "arguments": "{}"}},
            {"id": "c2", "type": "function", "function": {"name": "probe", "arguments": "{}"}}]});
        let response = json!({"choices": [{"message": call, "finish_reason": "tool_calls"}],
            "usage": {"completion_tokens": 5}});
        request
            .respond(tiny_http::Response::from_string(response.to_string()))
            .unwrap();
    }
}

/// Runs 6 episodes of 3 turns, each turn making two probe calls, under `limit`, each call
/// with a deadline of `timeout_ms`.
pub fn run_probe(probe: Arc<Probe>, limit: usize, timeout_ms: u64) -> Vec<Trajectory> {
    let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
    let address = server.server_addr().to_ip().unwrap();
    let worker = {
        let server = server.clone();
        std::thread::spawn(move || serve_probe_calls(server))
    };
    let mut tools = ToolRegistry::new();
    tools.register(probe.clone()).unwrap();
    let spec = tool_spec(probe.as_ref());
    let requests: Vec<RolloutRequest> = (0..6)
        .map(|index| {
            let mut task = Task::new(format!("probe-{index}"), "probe", "count");
            task.prompt.insert(0, Message::system("probe"));
            task.tools = vec![spec.clone()];
            RolloutRequest {
                task: Arc::new(task),
                run: "probe".into(),
                policy_version: 0,
                group: index,
                sample: 0,
            }
        })
        .collect();
    let policy = Policy::Http(HttpPolicy::new(
        &format!("http://{address}/v1"),
        "probe",
        Duration::from_secs(30),
    ));
    let config = RolloutConfig {
        max_turns: 3,
        max_concurrent_tools: limit,
        tool_timeout_ms: timeout_ms,
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
        &Environment::new(tools, RewardConfig::default()),
        &config,
        requests,
        |t| done.push(t),
    ));
    server.unblock();
    worker.join().unwrap();
    done
}
