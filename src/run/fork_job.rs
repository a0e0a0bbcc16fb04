//! `rollscope fork`'s job: continuations of stored trajectories from one turn or from every
//! turn, by the policy that wrote them (or another), stored as children under a rollout run;
//! success from each turn with its interval; from every turn, the success-from-here values
//! stored on the parent as Monte-Carlo step scores.

use super::RunContext;
use super::fork_values::{ParentForks, TurnFork};
use super::rollout_job::JobPolicy;
use crate::agent::rollout::{
    Edit, ForkSpec, HttpPolicy, LocalPolicy, Policy, RolloutConfig, fork, fork_state, offered_tools,
};
use crate::stats::SuccessRate;
use crate::trajectory::RunSettings;
use crate::trajectory::{PrefixKind, RunInfo, RunKind, RunStatus, Task, Trajectory, TrajectoryId};
use anyhow::Context;
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;

/// Which turns to fork from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ForkTurns {
    /// One turn, 1-based.
    One(usize),
    /// Every turn: success from the start of each, the value of the state before it.
    All,
    /// One turn per parent (1-based, in the parents' order): a repair's first wrong turns.
    Each(Vec<usize>),
}

/// What to fork.
#[derive(Clone, Debug)]
pub struct ForkJob {
    /// The trajectories to continue, with their token traces (`load_parents`).
    pub parents: Vec<Trajectory>,
    /// From which turns.
    pub turns: ForkTurns,
    /// Messages replaced before continuing (one turn only).
    pub edits: Vec<Edit>,
    /// Continuations per turn.
    pub n: usize,
    /// Seed of their samplers.
    pub seed: u64,
    /// Sampling temperature, when not the parent run's.
    pub temperature: Option<f64>,
    /// The policy version the children record: the parents' own when their policy forks
    /// them (see `fork_policy_dir`).
    pub policy_version: Option<u64>,
}

/// What a fork job produced.
#[derive(Clone, Debug, Serialize)]
pub struct ForkOutcome {
    /// The rollout run holding the children.
    pub run: String,
    /// The policy that sampled them.
    pub policy: String,
    /// Per trajectory.
    pub parents: Vec<ParentForks>,
}

/// The trajectories `ids` names, with their token traces, to fork.
pub fn load_parents(
    store: &crate::store::Store,
    ids: &[TrajectoryId],
) -> anyhow::Result<Vec<Trajectory>> {
    ids.iter()
        .map(|&id| {
            store
                .get(id)?
                .with_context(|| format!("no trajectory {id} in the store"))
        })
        .collect()
}

/// Forks every parent of the job under a new rollout run; `on_progress` hears forks done
/// of all.
pub fn run_fork_job(
    context: &RunContext,
    job: &ForkJob,
    policy: JobPolicy<'_>,
    on_progress: &mut dyn FnMut(usize, usize),
) -> anyhow::Result<ForkOutcome> {
    let store = &context.store;
    let mut parents = Vec::new();
    for parent in &job.parents {
        let id = parent.id;
        let task_id = parent.task_id.clone().with_context(|| {
            format!("trajectory {id} names no task: a fork needs the task to score continuations")
        })?;
        let task = store.get_task(&task_id)?.with_context(|| {
            format!("the task {task_id} of trajectory {id} is not in the store: import or roll out its task set first")
        })?;
        parents.push((parent, Arc::new(task)));
    }
    let (policy, policy_name, local) = build_policy(policy)?;
    let config = fork_config(context, job, job.parents.first());
    if let ForkTurns::Each(turns) = &job.turns {
        anyhow::ensure!(
            turns.len() == job.parents.len(),
            "a fork of {} trajectories names {} turns: one per trajectory",
            job.parents.len(),
            turns.len()
        );
    }
    let mut plan: Vec<(&Trajectory, Arc<Task>, Vec<ForkSpec>)> = parents
        .into_iter()
        .enumerate()
        .map(|(index, (parent, task))| {
            let turns: Vec<usize> = match &job.turns {
                ForkTurns::One(turn) => vec![*turn],
                ForkTurns::All => (1..=parent.turn_count()).collect(),
                ForkTurns::Each(turns) => vec![turns[index]],
            };
            let specs = turns
                .into_iter()
                .map(|turn| ForkSpec {
                    turn,
                    edits: job.edits.clone(),
                    n: job.n,
                    seed: job.seed,
                    run: String::new(),
                    policy_name: policy_name.clone(),
                    policy_version: job.policy_version,
                })
                .collect();
            (parent, task, specs)
        })
        .collect();
    for (parent, task, specs) in &plan {
        let tools = offered_tools(task, &config);
        for spec in specs {
            fork_state(parent, spec.turn, &spec.edits, &policy, &tools)
                .with_context(|| format!("cannot fork trajectory {}", parent.id))?;
        }
    }
    let mut run = RunInfo {
        config: RunSettings::Rollout(Box::new(config.clone())),
        note: Some(fork_note(job)),
        ..RunInfo::new(
            String::new(),
            RunKind::Rollout,
            job.seed,
            policy_name.clone(),
            1,
        )
    };
    run.id = store.create_run(&run)?;
    let run_id = run.id.clone();
    for (_, _, specs) in &mut plan {
        for spec in specs {
            spec.run = run_id.clone();
        }
    }
    let forked = fork_plan(context, &policy, &config, job, &plan, on_progress);
    drop(policy);
    if let Some(thread) = local {
        let _ = thread.join();
    }
    run.status = match &forked {
        Ok(_) => {
            run.step = 1;
            RunStatus::Done
        }
        Err(error) => {
            run.note = Some(format!("{error:#}"));
            RunStatus::Failed
        }
    };
    store.put_run(&run)?;
    Ok(ForkOutcome {
        run: run_id,
        policy: policy_name,
        parents: forked?,
    })
}

/// Forks decoded at once at most: parents are forked together, a block at a time, so a
/// local policy batches their continuations.
const FORKS_AT_ONCE: usize = 64;

/// Runs every fork of the plan, blocks of parents at a time (their turns together), storing
/// the children as they end.
fn fork_plan(
    context: &RunContext,
    policy: &Policy,
    config: &RolloutConfig,
    job: &ForkJob,
    plan: &[(&Trajectory, Arc<Task>, Vec<ForkSpec>)],
    on_progress: &mut dyn FnMut(usize, usize),
) -> anyhow::Result<Vec<ParentForks>> {
    let total: usize = plan.iter().map(|(_, _, specs)| specs.len()).sum();
    let mut done = 0;
    on_progress(done, total);
    let mut reports = Vec::new();
    let mut rest = plan;
    while !rest.is_empty() {
        let mut size = 0;
        let mut continuations = 0;
        for (_, _, specs) in rest {
            let more = specs.len() * job.n;
            if size > 0 && continuations + more > FORKS_AT_ONCE {
                break;
            }
            size += 1;
            continuations += more;
        }
        let (block, after) = rest.split_at(size);
        rest = after;
        let results = context
            .runtime
            .block_on(fork_all(policy, context, config, block));
        for ((parent, _, specs), results) in block.iter().zip(results) {
            let mut forks = Vec::new();
            for result in results {
                let children =
                    result.with_context(|| format!("forking trajectory {}", parent.id))?;
                context.store.put_trajectories(&children)?;
                done += 1;
                on_progress(done, total);
                forks.push(turn_fork(&children));
            }
            reports.push(record_parent(context, job, parent, specs, forks)?);
        }
    }
    Ok(reports)
}

/// Records a parent's forks on it and reports them.
fn record_parent(
    context: &RunContext,
    job: &ForkJob,
    parent: &Trajectory,
    specs: &[ForkSpec],
    forks: Vec<TurnFork>,
) -> anyhow::Result<ParentForks> {
    let every_turn = job.turns == ForkTurns::All;
    let run = specs.first().map_or("", |spec| spec.run.as_str());
    let policy_name = specs.first().map_or("", |spec| spec.policy_name.as_str());
    super::fork_values::record_forks(
        context,
        parent.id,
        run,
        &forks,
        !job.edits.is_empty(),
        every_turn.then_some((job.n, policy_name)),
    )?;
    Ok(ParentForks {
        parent: parent.id,
        passed: parent.passed(),
        reward: parent.reward.as_ref().map(|reward| reward.total),
        turns: parent.turn_count(),
        every_turn,
        forks,
    })
}

type LocalThread = std::thread::JoinHandle<crate::agent::rollout::DecodeStats>;

fn build_policy(policy: JobPolicy<'_>) -> anyhow::Result<(Policy, String, Option<LocalThread>)> {
    Ok(match policy {
        JobPolicy::Endpoint { url, model } => {
            let http = HttpPolicy::new(url, model, Duration::from_secs(600));
            (Policy::Http(http), format!("{url} ({model})"), None)
        }
        JobPolicy::Local { model, dir } => {
            let (local, thread) =
                LocalPolicy::spawn(model.sharing_decoder(), model.stop_token_ids())?;
            let policy = Policy::Local {
                policy: local,
                chat: Arc::new(model.chat.clone()),
            };
            (policy, dir.display().to_string(), Some(thread))
        }
    })
}

type ForkResult = Result<Vec<Trajectory>, crate::agent::rollout::ForkError>;

/// Forks every spec of a block of parents at once, so a local policy decodes them in one
/// batch; the results per parent, in the specs' order.
async fn fork_all(
    policy: &Policy,
    context: &RunContext,
    config: &RolloutConfig,
    block: &[(&Trajectory, Arc<Task>, Vec<ForkSpec>)],
) -> Vec<Vec<ForkResult>> {
    let mut handles = Vec::new();
    for (parent, task, specs) in block {
        let parent = Arc::new((*parent).clone());
        let spawned: Vec<_> = specs
            .iter()
            .cloned()
            .map(|spec| {
                let (policy, environment, config, parent, task) = (
                    policy.clone(),
                    context.environment.clone(),
                    config.clone(),
                    parent.clone(),
                    task.clone(),
                );
                tokio::spawn(async move {
                    fork(&policy, &environment, &config, &parent, &task, &spec).await
                })
            })
            .collect();
        handles.push(spawned);
    }
    let mut results = Vec::with_capacity(handles.len());
    for spawned in handles {
        let mut parent_results = Vec::with_capacity(spawned.len());
        for handle in spawned {
            parent_results.push(match handle.await {
                Ok(result) => result,
                Err(error) => std::panic::resume_unwind(error.into_panic()),
            });
        }
        results.push(parent_results);
    }
    results
}

/// The rollout settings of the forks: the parent run's (its turns, budgets, tools), with the
/// job's seed and temperature, Monte-Carlo scores off.
fn fork_config(context: &RunContext, job: &ForkJob, parent: Option<&Trajectory>) -> RolloutConfig {
    let recorded = parent
        .and_then(|parent| parent.run.as_deref())
        .and_then(|run| context.store.get_run(run).ok().flatten())
        .and_then(|run| run.config.rollout().cloned());
    let base = recorded.unwrap_or_default();
    RolloutConfig {
        seed: job.seed,
        temperature: job.temperature.unwrap_or(base.temperature),
        prm_monte_carlo: 0,
        ..base
    }
}

fn fork_note(job: &ForkJob) -> String {
    let from = match &job.turns {
        ForkTurns::One(turn) => format!("turn {turn}"),
        ForkTurns::All => "every turn".into(),
        ForkTurns::Each(_) => "each one's first wrong turn".into(),
    };
    let edited = if job.edits.is_empty() { "" } else { ", edited" };
    match job.parents.as_slice() {
        [one] => format!("fork of {} from {from} × {}{edited}", one.id, job.n),
        many => format!(
            "forks of {} trajectories from {from} × {}{edited}",
            many.len(),
            job.n
        ),
    }
}

fn turn_fork(children: &[Trajectory]) -> TurnFork {
    let origin = children.first().and_then(|child| child.fork.as_ref());
    TurnFork {
        turn: origin.map_or(0, |origin| origin.turn as usize),
        success: SuccessRate {
            passed: children
                .iter()
                .filter(|child| child.passed() == Some(true))
                .count(),
            total: children.len(),
        },
        children: children.iter().map(|child| child.id).collect(),
        prefix: origin.map_or(PrefixKind::Messages, |origin| origin.prefix),
    }
}
