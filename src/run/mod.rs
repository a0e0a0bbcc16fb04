//! Training runs: SFT and GRPO driven end to end (rollouts through the agent loop, updates
//! through the trainer), with a TOML config, a folder per run, checkpoints that resume after
//! a crash without lost or duplicated rows, evaluation on held-out tasks, and metrics in the
//! store and in `runs/<run>/metrics.jsonl`. The CLI and the TUI's engine both drive runs
//! through this module; a run reports through a `RunEvent` callback and is steered through a
//! `RunControl`.

pub mod badcase_loop;
pub mod config;
mod context;
mod control;
mod curriculum;
pub mod demos;
pub mod drills;
mod eval;
mod eval_job;
mod examples;
mod fork_job;
mod fork_policy;
mod fork_values;
mod grpo_run;
mod grpo_step;
mod lifecycle;
mod live;
mod loop_config;
mod main_job;
pub mod policy;
mod record;
pub mod repair;
mod rollout_job;
mod sft_run;
pub mod sweep;

pub use crate::trajectory::Phase;
pub use badcase_loop::{
    EvalComparison, LoopEvent, LoopOutcome, PolicyEval, STAGES as LOOP_STAGES, run_loop,
};
pub use config::{
    EvalConfig, GrpoRunConfig, ReplayConfig, RunConfig, SftConfig, SftSource, TaskConfig,
};
pub use context::{RunContext, rollout_runtime, session_environment};
pub use control::{RunControl, RunEvent};
pub use eval::{EvalFigures, evaluate, measure, policy_tokens};
pub use eval_job::{EvalJob, EvalJobOutcome, evaluate_model};
pub use fork_job::{ForkJob, ForkOutcome, ForkTurns, load_parents, run_fork_job};
pub use fork_policy::fork_policy_dir;
pub use fork_values::{ParentForks, TurnFork};
pub use grpo_run::{resume_grpo, train_grpo};
pub use lifecycle::{RunFiles, eval_run, starting_model};
pub use live::{
    JOB_LOG_ENV, RequestFollower, ask_run, observed, process_lives, stored_run, this_process,
};
pub use loop_config::LoopConfig;
pub use main_job::{
    CALCULATOR_SFT_GOAL, ColdStartEvent, GRPO_GAIN_GOAL, GoalCheck, MainJobLock, ROOM_FOR_GRPO,
    cold_start, cold_start_goals, grpo_goal, latest_sft_eval, main_job_grpo, main_job_grpo_eval,
    main_job_remaining,
};
pub use repair::{RepairConfig, RepairOutcome};
pub use rollout_job::{JobPolicy, RolloutJob, RolloutProgress, RolloutSummary, run_rollout_job};
pub use sft_run::{resume_sft, train_sft};
pub use sweep::{ConfigSource, Sweep, SweepPoint, run_configs};

use crate::agent::rollout::{LocalPolicy, Policy};
use crate::model::{DEFAULT_PREFIX_CACHE_TOKENS, Decoder, LanguageModel, Network};
use crate::store::Filter;
use crate::train::Trainer;
use crate::trajectory::{RunInfo, RunStatus, Task};
use std::path::PathBuf;
use std::sync::Arc;

/// The SFT preset of the embedded default (`examples/sft-tiny.toml`): the first half of the
/// main job's cold start, calculator demonstrations only.
pub const SFT_PRESET: &str = include_str!("../../examples/sft-tiny.toml");
/// The mixed SFT preset (`examples/sft-mixed.toml`): the second half of the cold start, three
/// in four of its demonstrations answering without the calculator.
pub const SFT_MIXED_PRESET: &str = include_str!("../../examples/sft-mixed.toml");
/// The GRPO preset of the embedded default (`examples/grpo-tiny.toml`): the run the TUI
/// offers to launch.
pub const GRPO_PRESET: &str = include_str!("../../examples/grpo-tiny.toml");
/// The badcase loop's preset (`examples/loop-tiny.toml`), what `rollscope loop` runs.
pub const LOOP_PRESET: &str = include_str!("../../examples/loop-tiny.toml");

/// The rollouts behind metrics row `step` of `run`: those the policy before the step's
/// update sampled, version `step − 1`, or `step − 2` when the run rolls out asynchronously
/// (`grpo.async_rollouts`: a step trains on rollouts started a step earlier, so steps 1 and 2
/// both list version 0's); `None` for step 0, which has none.
pub fn step_rollouts(run: &RunInfo, step: u64) -> Option<Filter> {
    let ahead = run
        .config
        .training()
        .is_some_and(|config| config.grpo.async_rollouts);
    let version = step.checked_sub(1)?.saturating_sub(u64::from(ahead));
    Some(Filter {
        run: Some(run.id.clone()),
        step: Some(version),
        ..Filter::default()
    })
}

/// How a run ended.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    /// The run id.
    pub run: String,
    /// Done or stopped.
    pub status: RunStatus,
    /// Steps done.
    pub step: u64,
    /// The final policy, an ordinary Hugging Face folder under the session's `models/`.
    pub model: PathBuf,
    /// The last evaluation, when the run made one.
    pub eval: Option<EvalFigures>,
}

/// The local policy of a model for one phase (a step's rollouts, an evaluation): a decode
/// thread over its weights, keeping prefilled prompts for the sequences that repeat them,
/// and its chat template. Make a new one after an update. Dropping the policy ends the thread.
pub fn local_policy(model: &LanguageModel) -> anyhow::Result<Policy> {
    policy_over(model.sharing_decoder(), model)
}

/// A local policy over a snapshot of a model's weights (later updates of the model do not
/// reach it): the behaviour policy of asynchronous rollouts.
pub fn snapshot_policy(model: &LanguageModel) -> anyhow::Result<Policy> {
    let network = Network::Qwen(model.frozen_copy()?);
    let decoder = Decoder::new(&network, model.config.max_position_embeddings)
        .with_prefix_cache(DEFAULT_PREFIX_CACHE_TOKENS);
    policy_over(decoder, model)
}

/// A decode thread over `decoder`, with the stop tokens and chat template of `model`.
fn policy_over(decoder: Decoder, model: &LanguageModel) -> anyhow::Result<Policy> {
    let (policy, _thread) = LocalPolicy::spawn(decoder, model.stop_token_ids())?;
    Ok(Policy::Local {
        policy,
        chat: Arc::new(model.chat.clone()),
    })
}

/// The held-out tasks of a run config.
pub fn eval_tasks(config: &RunConfig) -> anyhow::Result<Vec<Arc<Task>>> {
    let tasks = config
        .tasks
        .eval_spec()?
        .load(Some(config.tasks.eval_size), config.tasks.seed)?;
    Ok(tasks.into_iter().map(Arc::new).collect())
}

/// Evaluates the trainer's policy on the config's held-out tasks at version `step`; the
/// trajectories are stored under the run's evaluation name.
pub fn evaluate_policy(
    context: &RunContext,
    config: &RunConfig,
    trainer: &Trainer,
    run: &str,
    step: u64,
    on_event: &mut dyn FnMut(RunEvent),
) -> anyhow::Result<EvalFigures> {
    let tasks = eval_tasks(config)?;
    let policy = local_policy(trainer.model())?;
    let eval_name = eval_run(run);
    let (figures, trajectories) = context.runtime.block_on(evaluate(
        &policy,
        &context.environment,
        &tasks,
        &config.rollout,
        &config.eval,
        &eval_name,
        step,
        &mut |done, total| {
            on_event(RunEvent::Progress {
                step,
                phase: Phase::Eval,
                done: done as u64,
                total: total as u64,
            })
        },
    ));
    let owned: Vec<_> = tasks.iter().map(|task| task.as_ref().clone()).collect();
    context.store.put_tasks(&owned)?;
    context.store.put_trajectories(&trajectories)?;
    on_event(RunEvent::Eval {
        step,
        figures: figures.clone(),
    });
    Ok(figures)
}

/// Saves the trainer's policy as `models/<run>` in the session (LoRA merged), which makes
/// it the session's newest policy.
pub fn save_final_policy(
    context: &RunContext,
    trainer: &Trainer,
    run: &str,
) -> anyhow::Result<PathBuf> {
    let dir = context.paths.models_dir().join(run);
    trainer.save_policy(&dir)?;
    Ok(dir)
}
