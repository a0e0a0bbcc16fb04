//! Helpers shared by the agent tests.

use rollscope::agent::tools::{
    PythonInstall, PythonTool, SandboxLimits, SandboxRun, ToolOutput, run_sandboxed,
};
use std::time::{Duration, Instant};

/// A deadline `seconds` from now.
pub fn in_seconds(seconds: u64) -> Instant {
    Instant::now() + Duration::from_secs(seconds)
}

/// A multi-threaded tokio runtime for one test.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// The `python3` on `PATH`, as the sandbox runs it.
pub fn python() -> PythonInstall {
    runtime()
        .block_on(PythonInstall::discover("python3"))
        .expect("python3 on PATH")
}

/// Runs `code` with `install` in the sandbox; returns the run and the observation the `python`
/// tool makes of it, after checking that no process of the run's PID namespace is left.
pub fn sandboxed(
    install: &PythonInstall,
    code: &str,
    limits: &SandboxLimits,
) -> (SandboxRun, ToolOutput) {
    let started = std::time::Instant::now();
    let deadline = in_seconds(60);
    let run = runtime()
        .block_on(run_sandboxed(install, code, limits, deadline))
        .expect("the sandbox can be set up on this machine");
    let timing = rollscope::agent::tools::CallTiming {
        granted: limits.wall.min(deadline.saturating_duration_since(started)),
        wall: started.elapsed(),
    };
    if let Some(namespace) = &run.pid_namespace {
        let left = processes_in(namespace.inode());
        assert!(left.is_empty(), "processes left in the sandbox: {left:?}");
    }
    let observation = PythonTool::observe(&run.process, limits, timing);
    (run, observation)
}

/// Host pids whose PID namespace is `namespace`.
pub fn processes_in(namespace: u64) -> Vec<u32> {
    let wanted = format!("pid:[{namespace}]");
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/ns/pid"))
                .is_ok_and(|link| link.to_string_lossy() == wanted)
        })
        .collect()
}
