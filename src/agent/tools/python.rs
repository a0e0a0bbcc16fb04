//! The `python` tool: runs model-written code in the sandbox and reports what it printed.

use super::process::{ProcessEnd, ProcessRun};
use super::sandbox::{PythonInstall, SandboxLimits, run_sandboxed};
use super::{Tool, ToolFuture, ToolOutput};
use serde_json::{Map, Value, json};
use std::time::{Duration, Instant};
use tokio::sync::OnceCell;

/// The longest program accepted, in bytes.
const MAX_CODE_BYTES: usize = 64 * 1024;

/// Runs Python code in a fresh sandbox per call.
pub struct PythonTool {
    program: String,
    limits: SandboxLimits,
    install: OnceCell<Result<PythonInstall, String>>,
    parameters: Value,
}

impl PythonTool {
    /// The tool's name.
    pub const NAME: &'static str = "python";

    /// A tool that runs `python3` from `PATH` (found on first use) under `limits`.
    pub fn new(limits: SandboxLimits) -> Self {
        Self::with_interpreter("python3", limits)
    }

    /// A tool that runs the interpreter `program` (a name on `PATH` or a path).
    pub fn with_interpreter(program: impl Into<String>, limits: SandboxLimits) -> Self {
        Self {
            program: program.into(),
            limits,
            install: OnceCell::new(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "code": {
                        "type": "string",
                        "description": "A Python 3 program. Print the values you need; only printed output is returned."
                    }
                },
                "required": ["code"]
            }),
        }
    }

    /// The sandbox limits.
    pub fn limits(&self) -> &SandboxLimits {
        &self.limits
    }

    /// The observation of a run: what it printed, then how it ended when that was not a clean
    /// exit.
    pub fn observe(run: &ProcessRun, limits: &SandboxLimits, timing: CallTiming) -> ToolOutput {
        let mut text = run.stdout.text();
        let stderr = run.stderr.text();
        if !stderr.trim().is_empty() {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&stderr);
        }
        let ending = match run.end {
            ProcessEnd::Exited(0) => None,
            ProcessEnd::Exited(code) => Some(format!("exit status {code}")),
            ProcessEnd::Signaled(libc::SIGXCPU) => Some(format!(
                "killed: CPU time limit of {} s exceeded",
                limits.cpu_seconds
            )),
            ProcessEnd::Signaled(libc::SIGXFSZ) => Some(format!(
                "killed: file size limit of {} bytes exceeded",
                limits.file_bytes
            )),
            ProcessEnd::Signaled(libc::SIGKILL) => {
                Some("killed (SIGKILL): a resource limit was exceeded".into())
            }
            ProcessEnd::Signaled(signal) => Some(format!("killed by signal {signal}")),
            ProcessEnd::OutputLimit => Some(format!(
                "output limit exceeded: more than {} bytes written; all its processes were killed",
                limits.output.kill_after_bytes
            )),
            ProcessEnd::TimedOut => {
                let note = format!(
                    "error: time limit of {:.0} ms exceeded: killed after {:.2} s of wall clock \
                     ({:.2} s of running, the rest setting up the sandbox); all its processes \
                     were killed",
                    timing.granted.as_secs_f64() * 1000.0,
                    timing.wall.as_secs_f64(),
                    run.elapsed.as_secs_f64()
                );
                return ToolOutput::timeout(join(text, &note));
            }
        };
        match ending {
            None if text.trim().is_empty() => {
                ToolOutput::ok("(no output: print the values you need)")
            }
            None => ToolOutput::ok(text),
            Some(ending) => ToolOutput::error(join(text, &format!("error: {ending}"))),
        }
    }

    /// Runs `code` and turns the run into an observation.
    pub async fn run(&self, code: &str, deadline: Instant) -> ToolOutput {
        let started = Instant::now();
        if code.len() > MAX_CODE_BYTES {
            return ToolOutput::error(format!(
                "error: the program is longer than {MAX_CODE_BYTES} bytes"
            ));
        }
        let install = self
            .install
            .get_or_init(|| async {
                PythonInstall::discover(&self.program)
                    .await
                    .map_err(|error| error.to_string())
            })
            .await;
        let install = match install {
            Ok(install) => install,
            Err(error) => return ToolOutput::error(format!("error: {error}")),
        };
        match run_sandboxed(install, code, &self.limits, deadline).await {
            Ok(run) => {
                let timing = CallTiming {
                    granted: self
                        .limits
                        .wall
                        .min(deadline.saturating_duration_since(started)),
                    wall: started.elapsed(),
                };
                Self::observe(&run.process, &self.limits, timing)
            }
            Err(error) => ToolOutput::error(format!("error: {error}")),
        }
    }
}

/// How long a tool call was granted and took, both from its start.
#[derive(Clone, Copy, Debug)]
pub struct CallTiming {
    /// The wall time granted: the sandbox's limit, or less when the caller's deadline came
    /// sooner.
    pub granted: Duration,
    /// The wall time it took, the sandbox's setup included.
    pub wall: Duration,
}

fn join(text: String, note: &str) -> String {
    if text.trim().is_empty() {
        note.to_string()
    } else {
        format!("{}\n{note}", text.trim_end())
    }
}

impl Tool for PythonTool {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Runs a Python 3 program in an isolated sandbox and returns what it printed. The program sees only read-only system files and the Python install; its one writable place is its scratch folder /sandbox (the working directory). No network; limited time, memory and processes."
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn call(&self, arguments: Map<String, Value>, deadline: Instant) -> ToolFuture<'_> {
        Box::pin(async move {
            let code = arguments
                .get("code")
                .and_then(Value::as_str)
                .unwrap_or_default();
            self.run(code, deadline).await
        })
    }
}
