//! `rollscope rollout`'s job: G multi-turn rollouts of each task of a set by a local model or
//! an OpenAI-compatible endpoint, stored in batches (with their token traces, rewards and
//! process scores) under a rollout run, and summarised.

use super::RunContext;
use crate::agent::rollout::{
    HttpPolicy, LocalPolicy, Policy, RolloutConfig, RolloutRequest, run_rollouts,
};
use crate::agent::tasks::TaskSetSpec;
use crate::model::LanguageModel;
use crate::trajectory::RunSettings;
use crate::trajectory::{RunInfo, RunKind, RunStatus, Trajectory, metric};
use anyhow::Context;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Trajectories are written to the store in batches of this many.
const WRITE_BATCH: usize = 16;

/// What to roll out.
#[derive(Clone, Debug)]
pub struct RolloutJob {
    /// The task set.
    pub tasks: TaskSetSpec,
    /// How many tasks.
    pub n: usize,
    /// Seed of task generation (generated sets).
    pub task_seed: u64,
    /// Samples per task (a GRPO group).
    pub group: u32,
    /// Turns, budgets, sampling, tools and process scores.
    pub config: RolloutConfig,
}

/// The policy that rolls out.
#[derive(Clone, Copy)]
pub enum JobPolicy<'a> {
    /// A model loaded here, from its folder.
    Local {
        /// The model.
        model: &'a LanguageModel,
        /// Its folder.
        dir: &'a Path,
    },
    /// An OpenAI-compatible endpoint serving a model by name.
    Endpoint {
        /// The base URL, e.g. `http://127.0.0.1:8000/v1`.
        url: &'a str,
        /// The served model's name.
        model: &'a str,
    },
}

/// How far a rollout job got: rollouts finished of all, and the share of the stored ones
/// that passed.
#[derive(Clone, Copy, Debug)]
pub struct RolloutProgress {
    /// Rollouts finished.
    pub done: usize,
    /// Rollouts in all.
    pub total: usize,
    /// Share of the stored rollouts that passed, once a batch is stored.
    pub pass_rate: Option<f64>,
}

/// What a rollout run produced.
#[derive(Clone, Debug, Serialize)]
pub struct RolloutSummary {
    /// Trajectories stored.
    pub trajectories: usize,
    /// How many passed.
    #[serde(skip)]
    pub passed: usize,
    /// Share that passed.
    pub success_rate: f64,
    /// Mean assistant turns.
    pub mean_turns: f64,
    /// Tool calls in all.
    pub tool_calls: usize,
    /// Tool calls that failed.
    pub tool_errors: usize,
    /// Policy tokens generated per second of the job.
    pub tokens_per_second: f64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Trajectories per stop reason.
    pub stop_reasons: BTreeMap<String, usize>,
}

/// Rolls out the job's tasks under a new rollout run; returns the run id and its summary.
pub fn run_rollout_job(
    context: &RunContext,
    job: &RolloutJob,
    policy: JobPolicy<'_>,
    on_progress: &mut dyn FnMut(RolloutProgress),
) -> anyhow::Result<(String, RolloutSummary)> {
    context
        .environment
        .tools
        .check_names(&job.config.tools)
        .context("the tools to offer")?;
    let store = &context.store;
    let tasks = job.tasks.load(Some(job.n), job.task_seed)?;
    anyhow::ensure!(!tasks.is_empty(), "the task set {} is empty", job.tasks);
    store.put_tasks(&tasks)?;
    let (policy, model_name, decode_thread) = match policy {
        JobPolicy::Endpoint { url, model } => {
            let http = HttpPolicy::new(url, model, Duration::from_secs(600));
            (Policy::Http(http), format!("{url} ({model})"), None)
        }
        JobPolicy::Local { model, dir } => {
            let (local, thread) =
                LocalPolicy::spawn(model.sharing_decoder(), model.stop_token_ids())?;
            let chat = Arc::new(model.chat.clone());
            let policy = Policy::Local {
                policy: local,
                chat,
            };
            (policy, dir.display().to_string(), Some(thread))
        }
    };
    let mut run = RunInfo {
        config: RunSettings::Rollout(Box::new(job.config.clone())),
        note: Some(format!(
            "{} tasks of {} × {} samples",
            tasks.len(),
            job.tasks,
            job.group
        )),
        ..RunInfo::new(
            String::new(),
            RunKind::Rollout,
            job.config.seed,
            model_name,
            1,
        )
    };
    run.id = store.create_run(&run)?;
    let run_id = run.id.clone();
    let requests: Vec<RolloutRequest> = tasks
        .into_iter()
        .enumerate()
        .flat_map(|(index, task)| {
            let task = Arc::new(task);
            let run_id = run_id.clone();
            (0..job.group).map(move |sample| RolloutRequest {
                task: task.clone(),
                run: run_id.clone(),
                policy_version: 0,
                group: index as u64,
                sample,
            })
        })
        .collect();
    let total = requests.len();
    let started = Instant::now();
    let mut finished = Vec::new();
    let mut pending = Vec::new();
    let mut write_error = None;
    let mut done = 0;
    context.runtime.block_on(run_rollouts(
        &policy,
        &context.environment,
        &job.config,
        requests,
        |trajectory| {
            done += 1;
            pending.push(trajectory);
            let mut pass_rate = None;
            if pending.len() >= WRITE_BATCH {
                if let Err(error) = store.put_trajectories(&pending) {
                    write_error.get_or_insert(error);
                }
                finished.append(&mut pending);
                let passed = finished.iter().filter(|t| t.passed() == Some(true)).count();
                pass_rate = Some(passed as f64 / finished.len() as f64);
            }
            on_progress(RolloutProgress {
                done,
                total,
                pass_rate,
            });
        },
    ));
    store.put_trajectories(&pending)?;
    finished.append(&mut pending);
    if let Some(error) = write_error {
        return Err(error).context("storing trajectories failed");
    }
    let seconds = started.elapsed().as_secs_f64();
    drop(policy);
    let decoded = decode_thread
        .and_then(|thread| thread.join().ok())
        .map(|stats| stats.tokens);
    run.status = RunStatus::Done;
    run.step = 1;
    store.put_run(&run)?;
    Ok((run_id, RolloutSummary::of(&finished, seconds, decoded)))
}

impl RolloutSummary {
    /// The summary of `trajectories` made in `seconds`; `decoded` counts the tokens a local
    /// decode thread generated (else the traces' policy tokens are counted).
    fn of(trajectories: &[Trajectory], seconds: f64, decoded: Option<u64>) -> Self {
        let mut stop_reasons = BTreeMap::new();
        for trajectory in trajectories {
            *stop_reasons
                .entry(trajectory.stop_reason.to_string())
                .or_insert(0) += 1;
        }
        let traced: usize = trajectories
            .iter()
            .map(|t| match &t.token_trace {
                Some(trace) => trace.policy_tokens(),
                None => t
                    .extra
                    .get(metric::POLICY_TOKENS)
                    .and_then(serde_json::Value::as_u64)
                    .unwrap_or(0) as usize,
            })
            .sum();
        let policy_tokens = decoded.map_or(traced, |tokens| tokens as usize);
        let count = trajectories.len().max(1) as f64;
        let passed = trajectories
            .iter()
            .filter(|t| t.passed() == Some(true))
            .count();
        Self {
            trajectories: trajectories.len(),
            passed,
            success_rate: passed as f64 / count,
            mean_turns: trajectories
                .iter()
                .map(Trajectory::turn_count)
                .sum::<usize>() as f64
                / count,
            tool_calls: trajectories.iter().map(Trajectory::tool_call_count).sum(),
            tool_errors: trajectories.iter().map(Trajectory::tool_error_count).sum(),
            tokens_per_second: policy_tokens as f64 / seconds.max(1e-9),
            seconds,
            stop_reasons,
        }
    }
}
