//! Tools the policy can call: a small trait, the built-in calculator, Python sandbox and
//! search, and external commands declared in the session config. Built-in tools are not
//! special: all live in one `ToolRegistry` behind the same trait.

mod bm25;
mod calculator;
mod external;
mod process;
mod python;
mod registry;
mod sandbox;
mod search;

pub use bm25::{Bm25Index, Passage, SearchHit};
pub use calculator::Calculator;
pub use external::{CommandLine, ExternalTool, ExternalToolConfig};
pub use process::{
    CapturedOutput, OutputLimits, ProcessEnd, ProcessRun, RunningProcess, run_process,
    spawn_process,
};
pub use python::{CallTiming, PythonTool};
pub use registry::{ToolObservation, ToolRegistry, ToolStats};
pub use sandbox::{
    LimitRoute, PidNamespace, PythonInstall, SandboxError, SandboxLimits, SandboxRun, WallRefused,
    run_sandboxed, scratch_inodes,
};
pub use search::SearchTool;

use serde_json::{Map, Value, json};
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

/// How a tool call failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ToolFailure {
    /// The call was malformed (bad JSON, unknown tool, missing argument) and never ran.
    Format,
    /// The tool ran and reported an error (a syntax error, an exception, a crash, a limit).
    Error,
    /// The tool did not finish before its deadline and was stopped.
    Timeout,
}

impl ToolFailure {
    /// The failure's name as shown and stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Format => "format",
            Self::Error => "error",
            Self::Timeout => "timeout",
        }
    }
}

/// What a tool returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolOutput {
    /// The observation text the policy will see.
    pub text: String,
    /// How it failed, if it did.
    pub failure: Option<ToolFailure>,
}

impl ToolOutput {
    /// A successful result.
    pub fn ok(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            failure: None,
        }
    }

    /// A failed call, with the text that says why.
    pub fn error(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            failure: Some(ToolFailure::Error),
        }
    }

    /// A call stopped at its deadline.
    pub fn timeout(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            failure: Some(ToolFailure::Timeout),
        }
    }
}

/// The future a tool call returns.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = ToolOutput> + Send + 'a>>;

/// A tool: a name, a description and a JSON schema for its arguments, and an async call
/// that must finish by a deadline (the registry stops it shortly after, if it does not).
pub trait Tool: Send + Sync {
    /// The name the policy calls it by.
    fn name(&self) -> &str;
    /// What it does, for the policy's prompt.
    fn description(&self) -> &str;
    /// The JSON schema of its arguments object.
    fn parameters(&self) -> &Value;
    /// Runs the call. Arguments have already been checked against `parameters`.
    fn call(&self, arguments: Map<String, Value>, deadline: Instant) -> ToolFuture<'_>;
}

/// The OpenAI tool specification of a tool, as tasks and chat templates carry it.
pub fn tool_spec(tool: &dyn Tool) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": tool.name(),
            "description": tool.description(),
            "parameters": tool.parameters(),
        }
    })
}

/// The specification of a built-in tool by name (`calculator`, `python`, `search`).
pub fn builtin_spec(name: &str) -> Option<Value> {
    match name {
        Calculator::NAME => Some(tool_spec(&Calculator::new())),
        PythonTool::NAME => Some(tool_spec(&PythonTool::new(SandboxLimits::default()))),
        SearchTool::NAME => Some(tool_spec(&SearchTool::new(Arc::new(Bm25Index::new(
            Vec::new(),
        ))))),
        _ => None,
    }
}

impl ToolRegistry {
    /// The built-in tools: `calculator`, `python` (sandboxed under `limits`) and `search`
    /// over the shipped collection.
    pub fn standard(limits: SandboxLimits) -> anyhow::Result<Self> {
        let mut registry = Self::new();
        registry.register(Arc::new(Calculator::new()))?;
        registry.register(Arc::new(PythonTool::new(limits)))?;
        registry.register(Arc::new(SearchTool::shipped()?))?;
        Ok(registry)
    }

    /// Adds the external tools of a session config, run in `dir` (the session folder).
    pub fn add_external(
        &mut self,
        configs: &[ExternalToolConfig],
        dir: &Path,
    ) -> anyhow::Result<()> {
        for config in configs {
            self.register(Arc::new(ExternalTool::new(config.clone(), dir)?))?;
        }
        Ok(())
    }
}
