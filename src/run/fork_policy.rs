//! Which policy forks a trajectory: the one that wrote it, when the session kept it.

use super::RunContext;
use super::lifecycle::RunFiles;
use super::policy::PolicyRequest;
use crate::train::checkpoint_dir;
use crate::trajectory::{RunStatus, Trajectory};
use anyhow::Context;
use std::path::PathBuf;

/// The policy that forks by default: the one that wrote the parents (their run's policy at
/// their policy version: the folder it started from at version 0, a checkpoint, its final
/// policy) when they share one and the session still has it, with that version; else the
/// session's policy rule, with no version. `step` asks for another saved policy of the
/// parents' run.
pub fn fork_policy_dir(
    context: &RunContext,
    parents: &[Trajectory],
    step: Option<u64>,
) -> anyhow::Result<(PathBuf, Option<u64>)> {
    let first = parents.first();
    let run = first.and_then(|parent| parent.run.clone());
    let shared = parents.iter().all(|parent| {
        parent.run == run && parent.policy_version == first.and_then(|p| p.policy_version)
    });
    if let Some(step) = step {
        let run = run
            .filter(|_| shared)
            .context("--policy STEP needs trajectories of one run")?;
        let dir = saved_policy(context, &run, step)?.with_context(|| {
            format!(
                "run {run} has no policy saved at step {step} (runs/{run}/checkpoints/checkpoint-{step} \
                 or models/{run}): give --policy DIR or a step it saved"
            )
        })?;
        return Ok((dir, Some(step)));
    }
    let version = first.and_then(|parent| parent.policy_version);
    if let (true, Some(run), Some(version)) = (shared, &run, version)
        && let Some(dir) = saved_policy(context, run, version)?
    {
        return Ok((dir, Some(version)));
    }
    let store = context.store.clone();
    let resolved =
        super::policy::resolve_policy(&context.paths, &PolicyRequest::default(), || {
            Ok(store.runs()?)
        })?;
    Ok((resolved.dir, None))
}

/// The model folder of `run`'s policy after `step` updates, if the session kept it.
fn saved_policy(context: &RunContext, run: &str, step: u64) -> anyhow::Result<Option<PathBuf>> {
    let Some(info) = context.store.get_run(run)? else {
        return Ok(None);
    };
    let start = PathBuf::from(&info.model);
    let checkpoint = checkpoint_dir(&RunFiles::of(&context.paths, run).checkpoints(), step);
    let final_policy = context.paths.models_dir().join(run);
    let candidates = [
        (step == 0).then_some(start),
        Some(checkpoint),
        (step == info.step && info.status == RunStatus::Done).then_some(final_policy),
    ];
    Ok(candidates
        .into_iter()
        .flatten()
        .find(|dir| dir.join("config.json").is_file()))
}
