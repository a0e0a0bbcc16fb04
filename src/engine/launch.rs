//! Runs launched from the UI (and the main job started by `rollscope` alone) run in
//! background processes of their own, in a new session, output to a log file, so they go on
//! when the UI quits; they write through the session server like any other process, and
//! every UI steers them through the store. The launcher writes what to do as a typed
//! [`JobSpec`] (`jobs/<stem>.json`) and starts the hidden `rollscope job FILE`, which reads
//! it: no command line is built here.

use super::ComputeDevice;
use crate::run::{JOB_LOG_ENV, RunConfig};
use crate::session::SessionPaths;
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The hidden subcommand that runs a job spec: `rollscope job FILE`.
pub const JOB_COMMAND: &str = "job";

/// How a launched run begins.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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
    /// The main job's remaining stages (`rollscope --headless`) with this seed.
    MainJob {
        /// The main job's seed.
        seed: u64,
    },
}

/// A fork asked for from the UI.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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

/// What a background process is to do: the session, the device, how the run begins.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobSpec {
    /// The sessions root.
    pub sessions_dir: PathBuf,
    /// The session's name.
    pub session: String,
    /// Where the run loads and trains its model.
    pub device: ComputeDevice,
    /// What it does.
    pub start: Start,
}

impl JobSpec {
    /// The spec of `start` in session `paths` on `device`.
    pub fn new(paths: &SessionPaths, start: Start, device: ComputeDevice) -> Self {
        Self {
            sessions_dir: paths.dir.parent().unwrap_or(Path::new(".")).to_path_buf(),
            session: paths.name.clone(),
            device,
            start,
        }
    }

    /// Reads a spec file written by [`JobLauncher::launch`].
    pub fn read(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the job spec {}", path.display()))?;
        serde_json::from_str(&text).with_context(|| {
            format!(
                "{} is not a job spec of this version of rollscope (the engine writes them)",
                path.display()
            )
        })
    }

    fn write(&self, path: &Path) -> anyhow::Result<()> {
        std::fs::write(path, serde_json::to_vec_pretty(self)?)
            .with_context(|| format!("cannot write {}", path.display()))
    }
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
    /// terminal's Ctrl-C or hang-up reaches it), its spec (`<stem>.json`) and log
    /// (`<stem>.log`) under `jobs/`.
    pub fn launch(
        &self,
        paths: &SessionPaths,
        start: &Start,
        device: ComputeDevice,
    ) -> anyhow::Result<Launched> {
        let jobs = paths.dir.join("jobs");
        std::fs::create_dir_all(&jobs)
            .with_context(|| format!("cannot create {}", jobs.display()))?;
        let stem = match start {
            Start::MainJob { .. } => format!("main-job-{}", crate::trajectory::now_millis()),
            _ => format!("{}-{}", crate::trajectory::now_millis(), std::process::id()),
        };
        let spec = jobs.join(format!("{stem}.json"));
        JobSpec::new(paths, start.clone(), device).write(&spec)?;
        let log = jobs.join(format!("{stem}.log"));
        let child = self.spawn_detached(&spec, &log)?;
        Ok(Launched { child, log })
    }

    /// Runs `program job SPEC` in a session of its own, stdin closed, output to `log`.
    fn spawn_detached(&self, spec: &Path, log: &Path) -> anyhow::Result<Child> {
        let out = std::fs::File::create(log)
            .with_context(|| format!("cannot create {}", log.display()))?;
        let err = out.try_clone()?;
        let mut command = Command::new(&self.program);
        command
            .arg(JOB_COMMAND)
            .arg(spec)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::TrajectoryId;

    #[test]
    fn every_start_reads_back_from_its_spec_file() {
        let dir = tempfile::tempdir().unwrap();
        let paths = SessionPaths::new(dir.path(), "s").unwrap();
        let mut config = RunConfig::default();
        config.grpo.steps = 7;
        let starts = [
            Start::New(Box::new(config)),
            Start::Resume("grpo-0002".into()),
            Start::Follow(vec!["/runs/trl".into()]),
            Start::Fork(ForkLaunch {
                id: TrajectoryId(42),
                turn: 2,
                n: 4,
                observation: Some("@not a file: the text itself".into()),
                policy: Some("3".into()),
            }),
            Start::MainJob { seed: 5 },
        ];
        for (index, start) in starts.into_iter().enumerate() {
            let spec = JobSpec::new(&paths, start, ComputeDevice::Cuda(1));
            let file = dir.path().join(format!("{index}.json"));
            spec.write(&file).unwrap();
            assert_eq!(JobSpec::read(&file).unwrap(), spec);
            assert_eq!(spec.sessions_dir, dir.path());
        }
    }

    #[test]
    fn a_file_that_is_no_spec_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("job.json");
        std::fs::write(&file, r#"{"session": "s"}"#).unwrap();
        let error = format!("{:#}", JobSpec::read(&file).unwrap_err());
        assert!(error.contains("job.json is not a job spec"), "{error}");
        let missing = format!(
            "{:#}",
            JobSpec::read(&dir.path().join("gone.json")).unwrap_err()
        );
        assert!(missing.contains("cannot read the job spec"), "{missing}");
    }
}
