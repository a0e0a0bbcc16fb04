//! `rollscope eval`'s job: a model evaluated on a held-out task set, recorded as an eval run
//! whose attempts are stored like any other trajectories.

use super::{EvalConfig, EvalFigures, RunContext, evaluate, local_policy};
use crate::agent::rollout::RolloutConfig;
use crate::agent::tasks::TaskSetSpec;
use crate::model::LanguageModel;
use crate::trajectory::RunSettings;
use crate::trajectory::{RunInfo, RunKind, RunStatus};
use anyhow::Context;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What to evaluate a model on.
#[derive(Clone, Debug)]
pub struct EvalJob {
    /// The held-out task set.
    pub tasks: TaskSetSpec,
    /// How many tasks.
    pub n: usize,
    /// Sampled attempts per task for pass@k (0: greedy only).
    pub pass_k: usize,
    /// Tools to offer (empty: the tools each task offers).
    pub tools: Vec<String>,
    /// Seed of task generation.
    pub seed: u64,
}

impl EvalJob {
    /// Attempts the job makes: one greedy and `pass_k` sampled per task.
    pub fn attempts(&self, tasks: usize) -> usize {
        tasks * (1 + self.pass_k)
    }
}

/// What an evaluation found.
#[derive(Clone, Debug, Serialize)]
pub struct EvalJobOutcome {
    /// The eval run its attempts are stored under.
    pub run: String,
    /// The model folder evaluated.
    pub model: PathBuf,
    /// Its figures.
    pub figures: EvalFigures,
}

/// Evaluates `model` (loaded from `dir`) on the job's tasks; `on_done(done, total)` follows
/// the attempts.
pub fn evaluate_model(
    context: &RunContext,
    model: &LanguageModel,
    dir: &Path,
    job: &EvalJob,
    on_done: &mut dyn FnMut(usize, usize),
) -> anyhow::Result<EvalJobOutcome> {
    context
        .environment
        .tools
        .check_names(&job.tools)
        .context("the tools to offer")?;
    let tasks: Vec<_> = job
        .tasks
        .load(Some(job.n), job.seed)?
        .into_iter()
        .map(Arc::new)
        .collect();
    anyhow::ensure!(!tasks.is_empty(), "the task set {} is empty", job.tasks);
    let owned: Vec<_> = tasks.iter().map(|t| t.as_ref().clone()).collect();
    context.store.put_tasks(&owned)?;
    let mut info = RunInfo {
        config: RunSettings::Eval {
            tasks: job.tasks.to_string(),
            n: job.n,
            pass_k: job.pass_k,
        },
        note: Some(format!("eval of {}", dir.display())),
        ..RunInfo::new(
            String::new(),
            RunKind::Eval,
            job.seed,
            dir.display().to_string(),
            1,
        )
    };
    info.id = context.store.create_run(&info)?;
    let run = info.id.clone();
    let rollout = RolloutConfig {
        tools: job.tools.clone(),
        ..Default::default()
    };
    let eval = EvalConfig {
        pass_k: job.pass_k,
        ..EvalConfig::default()
    };
    let policy = local_policy(model)?;
    let (figures, trajectories) = context.runtime.block_on(evaluate(
        &policy,
        &context.environment,
        &tasks,
        &rollout,
        &eval,
        &run,
        0,
        on_done,
    ));
    context.store.put_trajectories(&trajectories)?;
    info.status = RunStatus::Done;
    info.step = 1;
    context.store.put_run(&info)?;
    Ok(EvalJobOutcome {
        run,
        model: dir.to_path_buf(),
        figures,
    })
}
