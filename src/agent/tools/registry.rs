//! The registry the rollout loop calls tools through: it validates each call, runs it on
//! the tokio runtime with a deadline, times it, catches panics, clips long outputs, and
//! counts calls, failures and latency per tool.

use super::{Tool, ToolFailure, ToolOutput, tool_spec};
use crate::agent::protocol::{CallBlock, CallError, ValidCall, check_call};
use crate::trajectory::Message;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long after its deadline a tool that has not returned is abandoned.
const DEADLINE_GRACE: Duration = Duration::from_millis(500);
/// The longest observation handed back to the policy, in bytes; longer ones are clipped.
pub const MAX_OBSERVATION_BYTES: usize = 16 * 1024;

/// The result of one tool call, timed: what the environment appends to the conversation.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolObservation {
    /// The id of the call it answers.
    pub call_id: String,
    /// The tool called (empty when the call had no readable name).
    pub tool: String,
    /// The observation text.
    pub text: String,
    /// How the call failed, if it did.
    pub failure: Option<ToolFailure>,
    /// Wall time from the call to its result, in milliseconds.
    pub latency_ms: f64,
}

impl ToolObservation {
    /// Whether the call failed in any way.
    pub fn is_error(&self) -> bool {
        self.failure.is_some()
    }

    /// The `tool` message for the trajectory, with error flag and latency.
    pub fn to_message(&self) -> Message {
        let mut message = Message::tool(self.text.clone());
        message.tool_call_id = Some(self.call_id.clone());
        message.name = (!self.tool.is_empty()).then(|| self.tool.clone());
        message.is_error = self.is_error();
        message.latency_ms = Some(self.latency_ms);
        message
    }
}

/// Calls, failures and latency of one tool since the registry was made.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolStats {
    /// Calls made (malformed ones included).
    pub calls: u64,
    /// Failures by kind.
    pub failures: BTreeMap<ToolFailure, u64>,
    /// Sum of latencies, in milliseconds.
    pub total_ms: f64,
    /// The slowest call, in milliseconds.
    pub max_ms: f64,
}

/// The tools a rollout may call, by name.
#[derive(Default)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn Tool>>,
    stats: Mutex<BTreeMap<String, ToolStats>>,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool; a second tool with the same name is refused.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> anyhow::Result<()> {
        anyhow::ensure!(
            self.get(tool.name()).is_none(),
            "two tools are named `{}`; rename one in the session config",
            tool.name()
        );
        self.tools.push(tool);
        Ok(())
    }

    /// The tool of that name.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|tool| tool.name() == name)
    }

    /// The names of all tools, in registration order.
    pub fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|tool| tool.name()).collect()
    }

    /// Checks that each of `names` is a tool here (a list of tools to offer); the error names
    /// the unknown one, the one probably meant, and every tool there is.
    pub fn check_names(&self, names: &[String]) -> anyhow::Result<()> {
        let known = self.names();
        for name in names {
            if !known.contains(&name.as_str()) {
                let hint = crate::text::nearest(name, &known)
                    .map(|meant| format!("did you mean `{meant}`? "))
                    .unwrap_or_default();
                anyhow::bail!(
                    "unknown tool `{name}`; {hint}the tools are {}",
                    known.join(", ")
                );
            }
        }
        Ok(())
    }

    /// OpenAI specifications of all tools, for tasks and chat templates.
    pub fn specs(&self) -> Vec<Value> {
        self.tools
            .iter()
            .map(|tool| tool_spec(tool.as_ref()))
            .collect()
    }

    /// Answers one `<tool_call>` block: malformed ones with their error, valid ones by
    /// running the tool. Never fails; every outcome is an observation.
    pub async fn execute(&self, block: &CallBlock, deadline: Instant) -> ToolObservation {
        let started = Instant::now();
        let (tool, output) = match &block.call {
            Err(error) => (call_name(block), format_failure(error)),
            Ok(call) => (call.name.clone(), self.run(call, deadline).await),
        };
        self.finish(block.id.clone(), tool, output, started)
    }

    /// Calls a tool by name with arguments given directly (the `tool` command, tests):
    /// checked against the tool's own schema first.
    pub async fn call(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        deadline: Instant,
    ) -> ToolObservation {
        let started = Instant::now();
        let call = ValidCall {
            name: name.to_string(),
            arguments,
        };
        let output = match check_call(call, &self.specs()) {
            Ok(call) => self.run(&call, deadline).await,
            Err(error) => format_failure(&error),
        };
        self.finish("call_0".into(), name.to_string(), output, started)
    }

    /// Per-tool counts since the registry was made.
    pub fn stats(&self) -> BTreeMap<String, ToolStats> {
        self.stats
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    async fn run(&self, call: &ValidCall, deadline: Instant) -> ToolOutput {
        let Some(tool) = self.get(&call.name).cloned() else {
            return format_failure(&CallError::UnknownTool {
                name: call.name.clone(),
                known: self.names().join(", "),
            });
        };
        if let Err(error) = check_call(call.clone(), &[tool_spec(tool.as_ref())]) {
            return format_failure(&error);
        }
        let arguments = call.arguments.clone();
        let task = tokio::spawn(async move { tool.call(arguments, deadline).await });
        let abort = task.abort_handle();
        let limit = tokio::time::Instant::from_std(deadline + DEADLINE_GRACE);
        match tokio::time::timeout_at(limit, task).await {
            Ok(Ok(output)) => output,
            Ok(Err(join_error)) if join_error.is_panic() => {
                ToolOutput::error(format!("error: the tool `{}` crashed", call.name))
            }
            Ok(Err(_)) => {
                ToolOutput::error(format!("error: the tool `{}` was cancelled", call.name))
            }
            Err(_) => {
                abort.abort();
                ToolOutput::timeout(format!(
                    "error: the tool `{}` did not answer before its deadline and was stopped",
                    call.name
                ))
            }
        }
    }

    fn finish(
        &self,
        call_id: String,
        tool: String,
        output: ToolOutput,
        started: Instant,
    ) -> ToolObservation {
        let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
        let mut stats = self.stats.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = stats.entry(tool.clone()).or_default();
        entry.calls += 1;
        entry.total_ms += latency_ms;
        entry.max_ms = entry.max_ms.max(latency_ms);
        if let Some(failure) = output.failure {
            *entry.failures.entry(failure).or_default() += 1;
        }
        ToolObservation {
            call_id,
            tool,
            text: clip_observation(output.text),
            failure: output.failure,
            latency_ms,
        }
    }
}

fn call_name(block: &CallBlock) -> String {
    block.to_tool_call().name
}

fn format_failure(error: &CallError) -> ToolOutput {
    ToolOutput {
        text: error.observation(),
        failure: Some(ToolFailure::Format),
    }
}

/// Cuts an observation to `MAX_OBSERVATION_BYTES` at a character boundary, saying so.
fn clip_observation(text: String) -> String {
    if text.len() <= MAX_OBSERVATION_BYTES {
        return text;
    }
    let mut end = MAX_OBSERVATION_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[… {} more bytes not shown]",
        &text[..end],
        text.len() - end
    )
}
