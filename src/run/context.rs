//! What a run works with, built in one place for the CLI, the TUI's engine and tests.

use super::{RunConfig, RunControl};
use crate::agent::rollout::Environment;
use crate::agent::tools::{SandboxLimits, ToolRegistry};
use crate::agent::verifier::Verifier;
use crate::model::LoadOptions;
use crate::session::{SessionConfig, SessionPaths};
use crate::store::Store;
use anyhow::Context;
use std::sync::Arc;

/// What a run works with: the session's store and folders, the tools and verifier, how
/// models load, the control that steers it, and the async runtime rollouts run on.
pub struct RunContext {
    /// The session store (trajectories, metrics, runs).
    pub store: Arc<Store>,
    /// The session's folders.
    pub paths: SessionPaths,
    /// Tools and verifier.
    pub environment: Environment,
    /// Device and dtype of the models.
    pub load: LoadOptions,
    /// Pause, resume, stop.
    pub control: RunControl,
    /// Runs the rollouts and tool calls.
    pub runtime: tokio::runtime::Runtime,
}

/// The two-worker runtime rollouts and tool calls run on.
pub fn rollout_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

impl RunContext {
    /// The context of a run in the session at `paths`: its store, the session's tools and
    /// verifier, models loaded with `load`, steered through `control`, on a fresh runtime.
    pub fn new(
        store: Arc<Store>,
        paths: SessionPaths,
        load: LoadOptions,
        control: RunControl,
    ) -> anyhow::Result<Self> {
        let session = paths.load_config()?;
        let runtime = rollout_runtime()?;
        let environment = runtime.block_on(async { session_environment(&paths, &session) })?;
        Ok(Self {
            store,
            paths,
            environment,
            load,
            control,
            runtime,
        })
    }
}

impl RunContext {
    /// Checks that the tools a run config offers (`rollout.tools`) are tools of the session.
    pub fn check_tools(&self, config: &RunConfig) -> anyhow::Result<()> {
        self.environment
            .tools
            .check_names(&config.rollout.tools)
            .context("rollout.tools")
    }
}

/// The tools and verifier of a session: built-ins plus its `[[tools]]` and `[[verifiers]]`.
pub fn session_environment(
    paths: &SessionPaths,
    config: &SessionConfig,
) -> anyhow::Result<Environment> {
    let mut tools = ToolRegistry::standard(SandboxLimits::default())?;
    tools.add_external(&config.tools, &paths.dir)?;
    Ok(Environment {
        tools: Arc::new(tools),
        verifier: Arc::new(Verifier::new(
            config.reward.clone(),
            config.verifiers.clone(),
            &paths.dir,
        )),
    })
}
