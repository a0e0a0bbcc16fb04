//! The multi-turn rollout loop: many episodes in flight; the local policy generates for
//! every episode that is ready in one batch while episodes waiting on tools run them
//! concurrently; finished trajectories get their outcome reward, rule and Monte-Carlo
//! process scores, and are handed to the caller grouped by task for GRPO.

mod config;
mod episode;
mod fork;
mod http;
mod local;

pub use config::{RolloutConfig, mix};
use episode::ToolSlots;
pub use episode::{Checkpoint, EpisodeState};
pub use fork::{Edit, ForkError, ForkSpec, ForkState, fork, fork_state};
pub use http::HttpPolicy;
pub use local::{DecodeStats, GeneratedTurn, LocalPolicy, Start, TurnFinish};

use crate::agent::prm_rule::rule_scores;
use crate::agent::reward::{RewardConfig, final_answer};
use crate::agent::tools::ToolRegistry;
use crate::agent::verifier::Verifier;
use crate::model::{Chat, SamplingParams};
use crate::trajectory::{
    ScoreSource, StepScore, StopReason, Task, Timings, Trajectory, TrajectoryId, now_millis,
};
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

/// The policy that generates.
#[derive(Clone)]
pub enum Policy {
    /// Our candle model, through its decode thread; records exact token traces.
    Local {
        /// The decode thread.
        policy: LocalPolicy,
        /// The model's tokenizer and chat template.
        chat: Arc<Chat>,
    },
    /// An OpenAI-compatible endpoint; records the messages view only.
    Http(HttpPolicy),
}

/// What the policy acts in: tools and the verifier.
#[derive(Clone)]
pub struct Environment {
    /// The tools that can be called.
    pub tools: Arc<ToolRegistry>,
    /// The outcome reward (and external verifiers).
    pub verifier: Arc<Verifier>,
}

impl Environment {
    /// An environment with the built-in reward and no external verifiers.
    pub fn new(tools: ToolRegistry, reward: RewardConfig) -> Self {
        Self {
            tools: Arc::new(tools),
            verifier: Arc::new(Verifier::new(reward, Vec::new(), std::path::Path::new("."))),
        }
    }
}

/// One rollout to make.
#[derive(Clone, Debug)]
pub struct RolloutRequest {
    /// The task.
    pub task: Arc<Task>,
    /// The run it belongs to.
    pub run: String,
    /// The policy version (training step) sampling it.
    pub policy_version: u64,
    /// Its GRPO group.
    pub group: u64,
    /// Its index in the group.
    pub sample: u32,
}

/// Makes every requested rollout, at most `max_in_flight` at a time, calling `on_done` with
/// each finished trajectory as it ends. Returns when all have ended.
pub async fn run_rollouts(
    policy: &Policy,
    environment: &Environment,
    config: &RolloutConfig,
    requests: Vec<RolloutRequest>,
    mut on_done: impl FnMut(Trajectory),
) {
    let permits = Arc::new(Semaphore::new(config.max_in_flight.max(1)));
    let slots = ToolSlots::new(config.max_concurrent_tools);
    let mut running = JoinSet::new();
    for request in requests {
        let (policy, environment, config, permits, slots) = (
            policy.clone(),
            environment.clone(),
            config.clone(),
            permits.clone(),
            slots.clone(),
        );
        running.spawn(async move {
            let _permit = permits.acquire_owned().await;
            rollout_in(&policy, &environment, &config, &request, &slots).await
        });
    }
    while let Some(finished) = running.join_next().await {
        match finished {
            Ok(trajectory) => on_done(trajectory),
            Err(error) => std::panic::resume_unwind(error.into_panic()),
        }
    }
}

/// The tools of a task that the config offers.
pub fn offered_tools(task: &Task, config: &RolloutConfig) -> Vec<Value> {
    task.tools
        .iter()
        .filter(|spec| {
            config.tools.is_empty()
                || crate::agent::protocol::spec_name(spec)
                    .is_some_and(|name| config.tools.iter().any(|offered| offered == name))
        })
        .cloned()
        .collect()
}

/// One rollout from the task's prompt to its scored trajectory; `max_concurrent_tools`
/// limits its own tool calls.
pub async fn rollout(
    policy: &Policy,
    environment: &Environment,
    config: &RolloutConfig,
    request: &RolloutRequest,
) -> Trajectory {
    let slots = ToolSlots::new(config.max_concurrent_tools);
    rollout_in(policy, environment, config, request, &slots).await
}

/// One rollout whose tool calls take their turn in `slots`, shared with the rest of a run.
async fn rollout_in(
    policy: &Policy,
    environment: &Environment,
    config: &RolloutConfig,
    request: &RolloutRequest,
    slots: &ToolSlots,
) -> Trajectory {
    let started = Instant::now();
    let started_at = now_millis();
    let tools = offered_tools(&request.task, config);
    let salt = request
        .group
        .wrapping_mul(1_000_003)
        .wrapping_add(u64::from(request.sample));
    let sampling = config.sampling(mix(request.policy_version, salt));
    let initial = match initial_state(policy, &request.task, &tools) {
        Ok(state) => state,
        Err(error) => {
            let mut state = EpisodeState::new(request.task.prompt.clone(), Vec::new());
            state.stop = Some(StopReason::Error);
            state.error = Some(error);
            state
        }
    };
    let state = if initial.stop.is_some() {
        initial
    } else {
        episode::run(
            policy,
            environment,
            config,
            slots,
            &tools,
            sampling.clone(),
            initial,
        )
        .await
    };
    let reward_started = Instant::now();
    let mut trajectory = assemble(request, &state, policy);
    trajectory.reward = Some(
        environment
            .verifier
            .score(&request.task, &trajectory)
            .await
            .reward,
    );
    if config.prm_rule {
        trajectory.step_scores = rule_scores(&trajectory, &tools);
    }
    if config.prm_monte_carlo > 0 && state.stop != Some(StopReason::Error) {
        let scores = monte_carlo_scores(
            policy,
            environment,
            config,
            slots,
            request,
            &tools,
            &state,
            &trajectory,
            &sampling,
        )
        .await;
        trajectory.step_scores.extend(scores);
    }
    trajectory.timings = Timings {
        started_at: Some(started_at),
        generate_ms: Some(state.generate_ms),
        tools_ms: Some(state.tools_ms),
        reward_ms: Some(reward_started.elapsed().as_secs_f64() * 1e3),
        total_ms: Some(started.elapsed().as_secs_f64() * 1e3),
    };
    trajectory
}

fn initial_state(policy: &Policy, task: &Task, tools: &[Value]) -> Result<EpisodeState, String> {
    let ids = match policy {
        Policy::Local { chat, .. } => chat
            .prompt_ids(&task.prompt, tools)
            .map_err(|error| error.to_string())?,
        Policy::Http(_) => Vec::new(),
    };
    Ok(EpisodeState::new(task.prompt.clone(), ids))
}

fn assemble(request: &RolloutRequest, state: &EpisodeState, policy: &Policy) -> Trajectory {
    let id = TrajectoryId::derived(
        &request.run,
        request.policy_version,
        request.group,
        request.sample,
    );
    let mut trajectory = ended(id, state, policy);
    trajectory.task_id = Some(request.task.id.clone());
    trajectory.run = Some(request.run.clone());
    trajectory.policy_version = Some(request.policy_version);
    trajectory.group = Some(request.group);
    trajectory.sample = Some(request.sample);
    trajectory
}

/// The trajectory of an ended episode: its messages, stop reason, token trace (local
/// policy), policy tokens (endpoint), failures and final answer.
fn ended(id: TrajectoryId, state: &EpisodeState, policy: &Policy) -> Trajectory {
    let mut trajectory = Trajectory::new(id, state.messages.clone());
    trajectory.stop_reason = state.stop.clone().unwrap_or(StopReason::Error);
    if let Policy::Local { .. } = policy {
        trajectory.token_trace = Some(state.trace.clone());
    }
    if let Some(error) = &state.error {
        trajectory
            .extra
            .insert("error".into(), Value::String(error.clone()));
    }
    if matches!(policy, Policy::Http(_)) {
        trajectory
            .extra
            .insert("policy_tokens".into(), Value::from(state.policy_tokens));
    }
    if state.format_failures > 0 {
        trajectory
            .extra
            .insert("format_failures".into(), Value::from(state.format_failures));
    }
    trajectory.final_answer = final_answer(&trajectory);
    trajectory
}

/// Math-Shepherd process scores: from the state after each turn answered by tools, `k`
/// continuations by the policy; a step's score is the share that reach a passing answer.
/// The last step's score is the trajectory's own verdict.
#[allow(clippy::too_many_arguments)]
async fn monte_carlo_scores(
    policy: &Policy,
    environment: &Environment,
    config: &RolloutConfig,
    slots: &ToolSlots,
    request: &RolloutRequest,
    tools: &[Value],
    state: &EpisodeState,
    trajectory: &Trajectory,
    sampling: &SamplingParams,
) -> Vec<StepScore> {
    let mut scores = Vec::new();
    for checkpoint in &state.checkpoints {
        let mut passed = 0usize;
        for continuation in 0..config.prm_monte_carlo {
            let seed = mix(
                sampling.seed,
                ((checkpoint.turn as u64) << 32) | continuation as u64,
            );
            let resumed = state.rewound(checkpoint);
            let finished = episode::run(
                policy,
                environment,
                config,
                slots,
                tools,
                SamplingParams {
                    seed,
                    ..sampling.clone()
                },
                resumed,
            )
            .await;
            let mut candidate = assemble(request, &finished, policy);
            candidate.token_trace = None;
            let verdict = environment.verifier.score(&request.task, &candidate).await;
            passed += usize::from(verdict.reward.is_pass());
        }
        scores.push(StepScore {
            step: checkpoint.turn as u32,
            value: passed as f64 / config.prm_monte_carlo as f64,
            source: ScoreSource::MonteCarlo,
            note: Some(format!(
                "{passed} of {} continuations pass",
                config.prm_monte_carlo
            )),
        });
    }
    if let Some(last) = trajectory.turn_count().checked_sub(1) {
        let passed = trajectory.passed().unwrap_or(false);
        scores.push(StepScore {
            step: last as u32,
            value: f64::from(u8::from(passed)),
            source: ScoreSource::MonteCarlo,
            note: Some("the final answer's own verdict".into()),
        });
    }
    scores
}
