//! The pieces of one GRPO step: rolling out G samples per task with the current policy,
//! group-relative advantages (dynamic sampling, overlong handling, optional per-turn process
//! scores), and the step's rollout metrics under TRL's and verl's names.

use super::RunContext;
use super::config::{GrpoRunConfig, RunConfig};
use super::control::RunEvent;
use super::eval::policy_tokens;
use crate::agent::rollout::{Policy, RolloutConfig, RolloutRequest, run_rollouts};
use crate::train::advantage::group_advantages;
use crate::train::{Advantage, GrpoSample};
use crate::trajectory::Phase;
use crate::trajectory::metric;
use crate::trajectory::{Role, StopReason, Task, Trajectory};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;

/// ε in (R − mean) / (std + ε).
const ADVANTAGE_EPSILON: f64 = 1e-4;

/// The rollouts of one step.
pub struct StepRollouts {
    /// Every trajectory, grouped by task in request order.
    pub trajectories: Vec<Trajectory>,
    /// Wall-clock seconds of the rollout phase.
    pub seconds: f64,
    /// The tasks rolled out.
    pub tasks: Vec<Arc<Task>>,
}

/// Rolls out the config's G samples of each of step `step`'s tasks with `policy` as policy
/// version `version` (`step − 1`, or older for asynchronous rollouts); groups are numbered
/// on from the previous steps'.
pub fn roll_out(
    context: &RunContext,
    policy: &Policy,
    config: &RunConfig,
    run: &str,
    (step, version): (u64, u64),
    tasks: &[Arc<Task>],
    on_event: &mut dyn FnMut(RunEvent),
) -> anyhow::Result<StepRollouts> {
    let rollout = rollout_config(config);
    let group = config.grpo.group;
    let first_group = (step - 1) * config.grpo.tasks_per_step as u64;
    let started = Instant::now();
    let requests: Vec<RolloutRequest> = tasks
        .iter()
        .enumerate()
        .flat_map(|(index, task)| {
            (0..group).map(move |sample| RolloutRequest {
                task: task.clone(),
                run: run.to_string(),
                policy_version: version,
                group: first_group + index as u64,
                sample,
            })
        })
        .collect();
    let total = requests.len() as u64;
    let mut trajectories = Vec::with_capacity(requests.len());
    context.runtime.block_on(run_rollouts(
        policy,
        &context.environment,
        &rollout,
        requests,
        |trajectory| {
            trajectories.push(trajectory);
            on_event(RunEvent::Progress {
                step,
                phase: Phase::Rollouts,
                done: trajectories.len() as u64,
                total,
            });
        },
    ));
    trajectories.sort_by_key(|t| (t.group, t.sample));
    Ok(StepRollouts {
        trajectories,
        seconds: started.elapsed().as_secs_f64(),
        tasks: tasks.to_vec(),
    })
}

/// Rollouts generated in the background for the next step (asynchronous mode).
pub type Pending<'scope> = std::thread::ScopedJoinHandle<'scope, anyhow::Result<StepRollouts>>;

/// The rollouts a background thread made, its panic turned into an error.
pub fn join_rollouts(handle: Pending<'_>) -> anyhow::Result<StepRollouts> {
    handle
        .join()
        .map_err(|_| anyhow::anyhow!("the background rollout thread panicked"))?
}

/// The rollout settings of a run: its `[rollout]` table with the run seed.
fn rollout_config(config: &RunConfig) -> RolloutConfig {
    RolloutConfig {
        seed: config.seed,
        ..config.rollout.clone()
    }
}

/// The training samples of a step and what the advantage pass counted.
pub struct Advantages {
    /// Samples of the groups that carry signal.
    pub samples: Vec<GrpoSample>,
    /// Groups whose rewards were all equal.
    pub zero_std_groups: usize,
    /// Groups in all.
    pub groups: usize,
}

/// Sets each trajectory's advantage and builds the samples to train on.
pub fn advantages(config: &GrpoRunConfig, trajectories: &mut [Trajectory]) -> Advantages {
    let mut by_group: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (index, trajectory) in trajectories.iter().enumerate() {
        by_group
            .entry(trajectory.group.unwrap_or(0))
            .or_default()
            .push(index);
    }
    let mut result = Advantages {
        samples: Vec::new(),
        zero_std_groups: 0,
        groups: by_group.len(),
    };
    for members in by_group.values() {
        let rewards: Vec<f64> = members
            .iter()
            .map(|&i| training_reward(config, &trajectories[i]))
            .collect();
        let group = group_advantages(&rewards, config.advantage_scale, ADVANTAGE_EPSILON);
        if group.zero_std {
            result.zero_std_groups += 1;
        }
        for (&index, &advantage) in members.iter().zip(&group.advantages) {
            trajectories[index].advantage = Some(advantage);
        }
        if group.zero_std && config.dynamic_sampling {
            continue;
        }
        for &index in members {
            let trajectory = &trajectories[index];
            let Some(trace) = &trajectory.token_trace else {
                continue;
            };
            if trace.policy_tokens() == 0 {
                continue;
            }
            let advantage = trajectory.advantage.unwrap_or(0.0);
            let per_sample = Advantage::Sample(advantage);
            let advantage = if config.prm_weight == 0.0 {
                per_sample
            } else {
                turn_advantages(trajectory, advantage, config.prm_weight).unwrap_or(per_sample)
            };
            result
                .samples
                .push(GrpoSample::from_trace(trace, advantage));
        }
    }
    result
}

/// The reward a trajectory trains with: its own, or the overlong reward when the token
/// budget cut it.
fn training_reward(config: &GrpoRunConfig, trajectory: &Trajectory) -> f64 {
    let cut = matches!(
        trajectory.stop_reason,
        StopReason::MaxTokens | StopReason::MaxContext
    );
    match (cut, config.overlong_reward) {
        (true, Some(reward)) => reward,
        _ => trajectory.reward.as_ref().map_or(0.0, |r| r.total),
    }
}

/// Per-token advantages: each assistant turn's tokens get the outcome advantage plus
/// `weight × (turn score − 0.5)` from its process score (the outcome alone on a turn
/// nothing scored). `None` when a scored step has no turn in the trace (they do not line
/// up).
fn turn_advantages(trajectory: &Trajectory, outcome: f64, weight: f64) -> Option<Advantage> {
    let trace = trajectory.token_trace.as_ref()?;
    let scores: HashMap<u32, f64> = trajectory
        .step_scores
        .iter()
        .map(|score| (score.step, score.value))
        .collect();
    let mut values = vec![0f32; trace.len()];
    let mut turn = 0u32;
    let mut inside = false;
    for (position, &bit) in trace.loss_mask.iter().enumerate() {
        if bit == 0 {
            if inside {
                turn += 1;
            }
            inside = false;
            continue;
        }
        inside = true;
        let process = scores
            .get(&turn)
            .map_or(0.0, |score| weight * (score - 0.5));
        values[position] = (outcome + process) as f32;
    }
    let turns = turn + u32::from(inside);
    if scores.keys().any(|&step| step >= turns) {
        return None;
    }
    Some(Advantage::Tokens(values))
}

/// The rollout figures of a step: rewards, success, lengths, turns, tools and timings.
pub fn rollout_metrics(trajectories: &[Trajectory], max_tokens: usize) -> BTreeMap<String, f64> {
    let n = trajectories.len().max(1) as f64;
    let rewards: Vec<f64> = trajectories
        .iter()
        .map(|t| t.reward.as_ref().map_or(0.0, |r| r.total))
        .collect();
    let mean = rewards.iter().sum::<f64>() / n;
    let variance = rewards.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / n;
    let lengths: Vec<usize> = trajectories.iter().map(policy_tokens).collect();
    let mut values = BTreeMap::from([
        (metric::REWARD.into(), mean),
        (metric::REWARD_STD.into(), variance.sqrt()),
        (
            metric::SUCCESS_RATE.into(),
            trajectories
                .iter()
                .filter(|t| t.passed() == Some(true))
                .count() as f64
                / n,
        ),
        (
            metric::MEAN_LENGTH.into(),
            lengths.iter().sum::<usize>() as f64 / n,
        ),
        (
            metric::MAX_LENGTH.into(),
            lengths.iter().copied().max().unwrap_or(0) as f64,
        ),
        (
            metric::CLIPPED_RATIO.into(),
            lengths.iter().filter(|&&l| l >= max_tokens).count() as f64 / n,
        ),
    ]);
    let mut components: BTreeMap<String, f64> = BTreeMap::new();
    let (mut turns, mut calls, mut failures) = (0usize, 0usize, 0usize);
    let (mut tools_ms, mut reward_ms) = (0.0, 0.0);
    for trajectory in trajectories {
        if let Some(reward) = &trajectory.reward {
            for (name, value) in &reward.components {
                *components
                    .entry(metric::reward_component(name))
                    .or_default() += value / n;
            }
        }
        for message in &trajectory.messages {
            match message.role {
                Role::Assistant => {
                    turns += 1;
                    calls += message.tool_calls.len();
                }
                Role::Tool => failures += usize::from(message.is_error),
                _ => {}
            }
        }
        tools_ms += trajectory.timings.tools_ms.unwrap_or(0.0);
        reward_ms += trajectory.timings.reward_ms.unwrap_or(0.0);
    }
    values.extend(components);
    values.insert(metric::NUM_TURNS.into(), turns as f64 / n);
    values.insert(metric::TOOL_CALL_FREQUENCY.into(), calls as f64 / n);
    values.insert(
        metric::TOOL_FAILURE_FREQUENCY.into(),
        if calls == 0 {
            0.0
        } else {
            failures as f64 / calls as f64
        },
    );
    values.insert(metric::TIMING_TOOLS.into(), tools_ms / 1e3);
    values.insert(metric::TIMING_REWARD.into(), reward_ms / 1e3);
    values
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::{Message, Reward, ScoreSource, StepScore, TokenTrace, TrajectoryId};

    fn sample(group: u64, sample: u32, reward: f64) -> Trajectory {
        let mut trajectory = Trajectory::new(
            TrajectoryId::derived("r", 0, group, sample),
            vec![Message::user("q"), Message::assistant("a")],
        );
        trajectory.group = Some(group);
        trajectory.sample = Some(sample);
        trajectory.reward = Some(Reward::scalar(reward));
        trajectory.token_trace = Some(TokenTrace {
            token_ids: vec![1, 2, 3, 4],
            loss_mask: vec![0, 1, 1, 0],
            logprobs: vec![0.0, -0.5, -0.5, 0.0],
            entropies: Vec::new(),
        });
        trajectory
    }

    #[test]
    fn equal_groups_are_dropped_and_counted_and_advantages_are_centred() {
        let mut trajectories = vec![
            sample(0, 0, 1.0),
            sample(0, 1, 0.0),
            sample(1, 0, 1.0),
            sample(1, 1, 1.0),
        ];
        let config = GrpoRunConfig::default();
        let result = advantages(&config, &mut trajectories);
        assert_eq!((result.groups, result.zero_std_groups), (2, 1));
        assert_eq!(result.samples.len(), 2, "only the informative group trains");
        let first = trajectories[0].advantage.unwrap();
        assert!(first > 0.0 && (first + trajectories[1].advantage.unwrap()).abs() < 1e-12);
        let kept = advantages(
            &GrpoRunConfig {
                dynamic_sampling: false,
                ..config
            },
            &mut trajectories,
        );
        assert_eq!(kept.samples.len(), 4);
    }

    #[test]
    fn overlong_trajectories_take_the_overlong_reward() {
        let mut cut = sample(0, 0, 1.0);
        cut.stop_reason = StopReason::MaxTokens;
        let mut trajectories = vec![cut, sample(0, 1, 1.0)];
        let config = GrpoRunConfig {
            overlong_reward: Some(0.0),
            ..GrpoRunConfig::default()
        };
        let result = advantages(&config, &mut trajectories);
        assert_eq!(result.zero_std_groups, 0);
        assert!(trajectories[0].advantage.unwrap() < 0.0);
    }

    #[test]
    fn process_scores_move_their_turns_and_unscored_turns_keep_the_outcome() {
        let mut trajectory = sample(0, 0, 1.0);
        trajectory.token_trace = Some(TokenTrace {
            token_ids: vec![1, 2, 3, 4, 5, 6, 7],
            loss_mask: vec![0, 1, 1, 0, 0, 1, 0],
            logprobs: vec![0.0; 7],
            entropies: Vec::new(),
        });
        let score = |step, value| StepScore {
            step,
            value,
            source: ScoreSource::Rule,
            note: None,
        };
        trajectory.step_scores = vec![score(0, 0.0)];
        let Some(Advantage::Tokens(values)) = turn_advantages(&trajectory, 1.0, 0.4) else {
            panic!("two turns and one scored step line up");
        };
        assert_eq!(values, vec![0.0, 0.8, 0.8, 0.0, 0.0, 1.0, 0.0]);
        trajectory.step_scores.push(score(2, 1.0));
        assert!(
            turn_advantages(&trajectory, 1.0, 0.4).is_none(),
            "no third turn"
        );
    }
}
