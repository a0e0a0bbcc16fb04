//! `rollscope job SPEC` (hidden): a job the engine launched in the background, read from the
//! typed spec it wrote (`engine::JobSpec`), run as the matching command would run it.

use super::Cli;
use super::model::RuntimeArgs;
use crate::engine::{ComputeDevice, JobSpec, Start};
use crate::model::DeviceChoice;
use crate::run::SweepPoint;
use crate::trajectory::RunKind;
use clap::Args;
use std::path::PathBuf;

/// Arguments of `rollscope job`.
#[derive(Debug, Args)]
pub struct JobArgs {
    /// The job spec (JSON) the engine wrote under the session's `jobs/`.
    pub spec: PathBuf,
}

/// Runs the job of `args.spec` in the session it names.
pub fn job(cli: &Cli, args: &JobArgs) -> anyhow::Result<()> {
    let spec = JobSpec::read(&args.spec)?;
    let seed = match spec.start {
        Start::MainJob { seed } => seed,
        _ => cli.seed,
    };
    let cli = Cli {
        session: spec.session.clone(),
        sessions_dir: Some(spec.sessions_dir.clone()),
        json: cli.json,
        isa: cli.isa,
        headless: true,
        seed,
        command: None,
    };
    let runtime = RuntimeArgs {
        device: match spec.device {
            ComputeDevice::Cpu => DeviceChoice::Cpu,
            ComputeDevice::Cuda(index) => DeviceChoice::Cuda(index),
        },
        dtype: None,
    };
    match &spec.start {
        Start::New(config) => super::train::train_configs(
            &cli,
            RunKind::Grpo,
            vec![(SweepPoint::default(), config.as_ref().clone())],
            &runtime,
        ),
        Start::Resume(run) => super::train::resume(&cli, RunKind::Grpo, run, &runtime),
        Start::Follow(roots) => {
            super::import_follow::follow(&cli, roots, None, super::import::FOLLOW_EVERY_SECONDS)
        }
        Start::Fork(launch) => super::fork::fork_launch(&cli, launch, &runtime),
        Start::MainJob { .. } => super::main_job::headless(&cli),
    }
}
