//! Tools declared in the session config as external commands: the call goes to the
//! command's stdin as `{"name": …, "arguments": {…}}`, and the command answers on stdout
//! with `{"output": "…", "is_error": false}` before its deadline.
//!
//! ```toml
//! [[tools]]
//! name = "weather"
//! description = "Today's weather in a city."
//! parameters = { type = "object", properties = { city = { type = "string" } }, required = ["city"] }
//! command = ["python3", "tools/weather.py"]   # or one string, run by `sh -c`
//! timeout_ms = 5000
//! ```

use super::process::{OutputLimits, ProcessEnd, ProcessRun, run_process};
use super::{Tool, ToolFuture, ToolOutput};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::process::Command;

/// A command line: one string for `sh -c`, or a program and its arguments.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CommandLine {
    /// Run by `sh -c`.
    Shell(String),
    /// A program and its arguments, run directly.
    Argv(Vec<String>),
}

impl CommandLine {
    /// The command, run in `dir` (relative programs and paths resolve there).
    pub fn command(&self, dir: &Path) -> anyhow::Result<Command> {
        let mut command = match self {
            Self::Shell(line) => {
                let mut command = Command::new("sh");
                command.arg("-c").arg(line);
                command
            }
            Self::Argv(argv) => {
                let Some((program, arguments)) = argv.split_first() else {
                    anyhow::bail!("the command is an empty list; give a program to run");
                };
                let local = dir.join(program);
                let program = if program.contains('/') && local.exists() {
                    local
                } else {
                    PathBuf::from(program)
                };
                let mut command = Command::new(program);
                command.args(arguments);
                command
            }
        };
        command.current_dir(dir);
        Ok(command)
    }
}

/// A `[[tools]]` entry of the session config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExternalToolConfig {
    /// The name the policy calls it by.
    pub name: String,
    /// What it does, for the policy's prompt.
    #[serde(default)]
    pub description: String,
    /// The JSON schema of its arguments (default: an object with any arguments).
    #[serde(default = "any_object")]
    pub parameters: Value,
    /// The command that answers calls.
    pub command: CommandLine,
    /// How long a call may take, in milliseconds.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
}

/// The schema that accepts any arguments object.
pub fn any_object() -> Value {
    json!({"type": "object", "properties": {}})
}

fn default_timeout_ms() -> u64 {
    10_000
}

/// A tool answered by an external command.
pub struct ExternalTool {
    config: ExternalToolConfig,
    dir: PathBuf,
}

impl ExternalTool {
    /// The tool of a config entry, run in `dir` (the session folder).
    pub fn new(config: ExternalToolConfig, dir: &Path) -> anyhow::Result<Self> {
        anyhow::ensure!(
            !config.name.trim().is_empty(),
            "a [[tools]] entry has an empty `name`"
        );
        anyhow::ensure!(
            config.parameters.get("type").and_then(Value::as_str) == Some("object"),
            "tool `{}`: `parameters` must be a JSON schema with type = \"object\"",
            config.name
        );
        Ok(Self {
            config,
            dir: dir.to_path_buf(),
        })
    }

    async fn run(&self, arguments: Map<String, Value>, deadline: Instant) -> ToolOutput {
        let name = &self.config.name;
        let mut command = match self.config.command.command(&self.dir) {
            Ok(command) => command,
            Err(error) => return ToolOutput::error(format!("error: tool `{name}`: {error}")),
        };
        let request = json!({"name": name, "arguments": arguments}).to_string() + "\n";
        let deadline = deadline.min(Instant::now() + Duration::from_millis(self.config.timeout_ms));
        match run_process(
            &mut command,
            request.as_bytes(),
            OutputLimits::default(),
            deadline,
        )
        .await
        {
            Ok(run) => read_answer(name, &run),
            Err(error) => ToolOutput::error(format!("error: cannot start tool `{name}`: {error}")),
        }
    }
}

/// Reads a command's answer: `{"output": "…", "is_error": bool}` on stdout.
pub fn read_answer(name: &str, run: &ProcessRun) -> ToolOutput {
    let stderr = run.stderr.text();
    match run.end {
        ProcessEnd::TimedOut => {
            return ToolOutput::timeout(format!(
                "error: tool `{name}` did not answer in time and was stopped"
            ));
        }
        ProcessEnd::OutputLimit => {
            return ToolOutput::error(format!("error: tool `{name}` wrote too much output"));
        }
        ProcessEnd::Signaled(signal) => {
            return ToolOutput::error(format!(
                "error: tool `{name}` was killed by signal {signal}"
            ));
        }
        ProcessEnd::Exited(code) if code != 0 => {
            return ToolOutput::error(format!(
                "error: tool `{name}` failed with exit status {code}: {}",
                stderr.trim()
            ));
        }
        ProcessEnd::Exited(_) => {}
    }
    let stdout = run.stdout.text();
    let answer: Result<Value, _> = serde_json::from_str(stdout.trim());
    match answer {
        Ok(Value::Object(object)) => match object.get("output") {
            Some(Value::String(output)) => {
                if object.get("is_error").and_then(Value::as_bool) == Some(true) {
                    ToolOutput::error(output.clone())
                } else {
                    ToolOutput::ok(output.clone())
                }
            }
            Some(other) => ToolOutput::ok(other.to_string()),
            None => ToolOutput::error(format!(
                "error: tool `{name}` answered without an `output` field"
            )),
        },
        _ => ToolOutput::error(format!(
            "error: tool `{name}` did not answer with JSON {{\"output\": …}}: {}",
            crate::text::clip(stdout.trim(), 200)
        )),
    }
}

impl Tool for ExternalTool {
    fn name(&self) -> &str {
        &self.config.name
    }

    fn description(&self) -> &str {
        &self.config.description
    }

    fn parameters(&self) -> &Value {
        &self.config.parameters
    }

    fn call(&self, arguments: Map<String, Value>, deadline: Instant) -> ToolFuture<'_> {
        Box::pin(self.run(arguments, deadline))
    }
}
