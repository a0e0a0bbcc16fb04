//! Runs launched from the UI start in background processes of their own (`rollscope train
//! grpo`, `rollscope import --follow` for another stack's run, `rollscope fork` for the
//! continuations of a trajectory, in a new session, output
//! to a log file), so they go on when the UI quits; they write through the session server
//! like any other process, and every UI steers them through the store.

use super::ComputeDevice;
use crate::run::{JOB_LOG_ENV, RunConfig};
use crate::session::SessionPaths;
use anyhow::Context;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// How a launched run begins.
#[derive(Clone, Debug)]
pub enum Start {
    /// A new GRPO run with this config.
    New(Box<RunConfig>),
    /// GRPO run `id` from its latest checkpoint.
    Resume(String),
    /// Another stack's run read as it is written: these files and run folders, made
    /// absolute (`import --follow`).
    Follow(Vec<PathBuf>),
    /// Continuations of a stored trajectory from one of its turns (`rollscope fork`).
    Fork(ForkLaunch),
}

/// A fork asked for from the UI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForkLaunch {
    /// The trajectory.
    pub id: crate::trajectory::TrajectoryId,
    /// The turn to continue from, 1-based.
    pub turn: usize,
    /// Continuations.
    pub n: usize,
    /// A replacement for the tool result just before the turn.
    pub observation: Option<String>,
    /// A model folder, or a step of the trajectory's run, instead of the policy that wrote it.
    pub policy: Option<String>,
}

/// Starts background runs with a Rollscope program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobLauncher {
    /// The `rollscope` binary.
    pub program: PathBuf,
}

/// A background run just started.
#[derive(Debug)]
pub struct Launched {
    /// Its process, to reap when it ends.
    pub child: Child,
    /// Where its output goes.
    pub log: PathBuf,
}

impl JobLauncher {
    /// Launches with `program`, the `rollscope` binary.
    pub fn rollscope(program: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
        }
    }

    /// Launches with the program that runs now (the `rollscope` binary of a TUI).
    pub fn this_program() -> std::io::Result<Self> {
        Ok(Self::rollscope(std::env::current_exe()?))
    }

    /// Starts `start` in session `paths` on `device`, in a process of its own session (no
    /// terminal's Ctrl-C or hang-up reaches it), its config and log under `jobs/`.
    pub fn launch(
        &self,
        paths: &SessionPaths,
        start: &Start,
        device: ComputeDevice,
    ) -> anyhow::Result<Launched> {
        let jobs = paths.dir.join("jobs");
        std::fs::create_dir_all(&jobs)
            .with_context(|| format!("cannot create {}", jobs.display()))?;
        let stem = format!("{}-{}", crate::trajectory::now_millis(), std::process::id());
        let mut args = session_args(paths);
        match start {
            Start::New(config) => {
                let file = jobs.join(format!("{stem}.toml"));
                std::fs::write(&file, config.to_toml()?)
                    .with_context(|| format!("cannot write {}", file.display()))?;
                args.extend(["train", "grpo", "--config"].map(String::from));
                args.extend([file.display().to_string(), "--device".into(), device.flag()]);
            }
            Start::Resume(run) => {
                args.extend(["train", "grpo", "--resume", run.as_str()].map(String::from));
                args.extend(["--device".into(), device.flag()]);
            }
            Start::Follow(roots) => {
                args.extend(["import", "--follow"].map(String::from));
                args.extend(roots.iter().map(|root| root.display().to_string()));
            }
            Start::Fork(fork) => {
                args.extend(["fork".into(), fork.id.to_string(), "--turn".into()]);
                args.extend([fork.turn.to_string(), "-n".into(), fork.n.to_string()]);
                if let Some(text) = &fork.observation {
                    args.extend(["--observation".into(), format!("{}={text}", fork.turn - 1)]);
                }
                if let Some(policy) = &fork.policy {
                    args.extend(["--policy".into(), policy.clone()]);
                }
                args.extend(["--device".into(), device.flag()]);
            }
        }
        let log = jobs.join(format!("{stem}.log"));
        let child = self.spawn_detached(&args, &log)?;
        Ok(Launched { child, log })
    }

    /// Runs `program ARGS` in a session of its own, stdin closed, output to `log`.
    pub fn spawn_detached(&self, args: &[String], log: &Path) -> anyhow::Result<Child> {
        let out = std::fs::File::create(log)
            .with_context(|| format!("cannot create {}", log.display()))?;
        let err = out.try_clone()?;
        let mut command = Command::new(&self.program);
        command
            .args(args)
            .env(JOB_LOG_ENV, log)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
        unsafe {
            command.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        command
            .spawn()
            .with_context(|| format!("cannot start {}", self.program.display()))
    }
}

/// `--sessions-dir ROOT --session NAME`: the arguments that open session `paths`.
pub fn session_args(paths: &SessionPaths) -> Vec<String> {
    let root = paths.dir.parent().unwrap_or(Path::new("."));
    vec![
        "--sessions-dir".into(),
        root.display().to_string(),
        "--session".into(),
        paths.name.clone(),
    ]
}
