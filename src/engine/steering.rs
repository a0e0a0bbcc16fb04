//! What the engine does for the Runs tab's keys: launches runs (and follows of other
//! stacks' runs) in background processes, and pauses, resumes or stops any run of the
//! session, whichever process trains it, by recording the request in the store for that
//! process to act on.

use super::ComputeDevice;
use super::launch::{JobLauncher, Start};
use super::update::Update;
use crate::ingest::{followed_paths, followed_roots, run_following};
use crate::run::{ask_run, stored_run};
use crate::session::SessionPaths;
use crate::store::Store;
use crate::trajectory::{RunKind, RunRequest, RunStatus};
use anyhow::Context;
use std::process::Child;

/// The engine's side of training: how to launch, and the processes it launched (reaped as
/// they end; they outlive the engine).
pub(super) struct Steering {
    launcher: Option<JobLauncher>,
    session: Option<SessionPaths>,
    device: ComputeDevice,
    children: Vec<Child>,
}

impl Steering {
    /// Launches with `launcher` in `session` on `device`.
    pub(super) fn new(
        launcher: Option<JobLauncher>,
        session: Option<SessionPaths>,
        device: ComputeDevice,
    ) -> Self {
        Self {
            launcher,
            session,
            device,
            children: Vec::new(),
        }
    }

    /// Starts a run in a background process, after checking what can be checked at once:
    /// a session is open, the config is valid and its model exists, a resumed run is a GRPO
    /// run (or a follow) that no process trains, followed paths exist and no process follows
    /// them already.
    pub(super) fn launch(&mut self, store: &Store, start: Start) -> anyhow::Result<Update> {
        let paths = self.session.as_ref().context(
            "this engine has no session folder, so it cannot train; open the TUI on a session",
        )?;
        let launcher = self
            .launcher
            .as_ref()
            .context("this engine cannot start processes, so it cannot launch runs")?;
        let start = checked(store, paths, start)?;
        let launched = launcher.launch(paths, &start, self.device)?;
        let pid = launched.child.id();
        self.children.push(launched.child);
        Ok(Update::Launched {
            pid,
            log: launched.log,
        })
    }

    /// Asks run `run` to pause after its current step.
    pub(super) fn pause(&self, store: &Store, run: &str) -> anyhow::Result<()> {
        ask_run(store, run, RunRequest::Pause).map(drop)
    }

    /// Lets a paused run go on, or resumes a stopped, failed or interrupted GRPO run from its
    /// checkpoint in a new background process.
    pub(super) fn resume(&mut self, store: &Store, run: &str) -> anyhow::Result<Option<Update>> {
        match stored_run(store, run)?.status {
            RunStatus::Paused => ask_run(store, run, RunRequest::Resume).map(|_| None),
            _ => self.launch(store, Start::Resume(run.to_string())).map(Some),
        }
    }

    /// Asks run `run` to checkpoint and end after its current step.
    pub(super) fn stop(&self, store: &Store, run: &str) -> anyhow::Result<()> {
        ask_run(store, run, RunRequest::Stop).map(drop)
    }

    /// Reaps the launched processes that ended.
    pub(super) fn reap(&mut self) {
        self.children
            .retain_mut(|child| matches!(child.try_wait(), Ok(None)));
    }
}

/// The start to launch, once what can be checked at once holds: a resumed follow becomes a
/// follow of its paths.
fn checked(store: &Store, paths: &SessionPaths, start: Start) -> anyhow::Result<Start> {
    match start {
        Start::New(config) => {
            config.validate()?;
            crate::run::starting_model(store, paths, &config)?;
            Ok(Start::New(config))
        }
        Start::Follow(roots) => {
            let roots = followed_roots(&roots)?;
            run_following(store, &roots)?;
            Ok(Start::Follow(roots))
        }
        Start::Fork(fork) => {
            anyhow::ensure!(
                store.get_without_trace(fork.id)?.is_some(),
                "no trajectory {} in the store",
                fork.id
            );
            Ok(Start::Fork(fork))
        }
        Start::MainJob { seed } => Ok(Start::MainJob { seed }),
        Start::Resume(run) => {
            let info = stored_run(store, &run)?;
            anyhow::ensure!(
                matches!(
                    info.status,
                    RunStatus::Stopped | RunStatus::Failed | RunStatus::Interrupted
                ),
                "{run} is {}: only a stopped, failed or interrupted run resumes",
                info.status.as_str()
            );
            match (info.kind, followed_paths(&info)) {
                (RunKind::Import, Some(roots)) => checked(store, paths, Start::Follow(roots)),
                (RunKind::Grpo, _) => Ok(Start::Resume(run)),
                (kind, _) => anyhow::bail!(
                    "{run} is a {} run; only GRPO runs and follows resume here (`rollscope \
                     train {} --resume {run}` continues a training run)",
                    kind.as_str(),
                    kind.as_str()
                ),
            }
        }
    }
}
