//! Evaluation on held-out tasks: greedy accuracy, pass@k over sampled attempts, mean length,
//! format correctness and numeric error of the answers.

use super::config::EvalConfig;
use crate::agent::rollout::{Environment, Policy, RolloutConfig, RolloutRequest, run_rollouts};
use crate::curate::analysis::pass_at_k::pass_at_k;
use crate::curate::analysis::{Distance, RecordFacts};
use crate::trajectory::metric;
use crate::trajectory::{Role, Task, Trajectory};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;

/// The figures of one evaluation.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct EvalFigures {
    /// Tasks evaluated.
    pub tasks: usize,
    /// Share of tasks whose greedy attempt passed.
    pub accuracy: f64,
    /// `(k, pass@k)` over the sampled attempts, when any were made.
    pub pass_at_k: Option<(usize, f64)>,
    /// Mean policy tokens of the greedy attempts.
    pub mean_length: f64,
    /// Share of greedy attempts with a marked answer and well-formed tool calls.
    pub format_correct: f64,
    /// Share of greedy attempts that state a number.
    pub answered: f64,
    /// Mean |answer − truth| over the greedy attempts that state a number.
    pub mean_absolute_error: Option<f64>,
    /// Mean assistant turns of the greedy attempts.
    pub mean_turns: f64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl EvalFigures {
    /// The figures as metrics under `eval/…`.
    pub fn metric_values(&self) -> BTreeMap<String, f64> {
        let mut values = BTreeMap::from([
            (metric::EVAL_ACCURACY.into(), self.accuracy),
            (metric::EVAL_MEAN_LENGTH.into(), self.mean_length),
            (metric::EVAL_FORMAT_CORRECT.into(), self.format_correct),
            (metric::EVAL_ANSWERED.into(), self.answered),
            (metric::EVAL_NUM_TURNS.into(), self.mean_turns),
            (metric::TIMING_EVAL.into(), self.seconds),
        ]);
        if let Some((k, value)) = self.pass_at_k {
            values.insert(metric::eval_pass_at(k), value);
        }
        if let Some(error) = self.mean_absolute_error {
            values.insert(metric::EVAL_NUMERIC_ABS_ERROR.into(), error);
        }
        values
    }

    /// One line: `accuracy 41.5% · pass@4 60.0% · format 97.0% · 58 tokens · 12.3 s`.
    pub fn line(&self) -> String {
        let mut parts = vec![format!("accuracy {:.1}%", 100.0 * self.accuracy)];
        if let Some((k, value)) = self.pass_at_k {
            parts.push(format!("pass@{k} {:.1}%", 100.0 * value));
        }
        parts.push(format!("format {:.1}%", 100.0 * self.format_correct));
        if let Some(error) = self.mean_absolute_error {
            parts.push(format!("mean |error| {error:.1}"));
        }
        parts.push(format!("{:.0} tokens", self.mean_length));
        parts.push(format!("{:.1} s", self.seconds));
        parts.join(" · ")
    }
}

/// Rolls out every task greedily (and `pass_k` sampled attempts more), under run `run` at
/// policy version `version`, and measures the result; `on_done(done, total)` follows the
/// attempts. Returns the figures and every trajectory made.
#[allow(clippy::too_many_arguments)]
pub async fn evaluate(
    policy: &Policy,
    environment: &Environment,
    tasks: &[Arc<Task>],
    rollout: &RolloutConfig,
    eval: &EvalConfig,
    run: &str,
    version: u64,
    on_done: &mut dyn FnMut(usize, usize),
) -> (EvalFigures, Vec<Trajectory>) {
    let started = Instant::now();
    let total = tasks.len() * (1 + eval.pass_k);
    let requests = |samples: std::ops::Range<u32>| -> Vec<RolloutRequest> {
        tasks
            .iter()
            .enumerate()
            .flat_map(|(index, task)| {
                samples.clone().map(move |sample| RolloutRequest {
                    task: task.clone(),
                    run: run.to_string(),
                    policy_version: version,
                    group: index as u64,
                    sample,
                })
            })
            .collect()
    };
    let greedy_config = RolloutConfig {
        temperature: 0.0,
        prm_rule: false,
        prm_monte_carlo: 0,
        ..rollout.clone()
    };
    let mut greedy = Vec::with_capacity(tasks.len());
    run_rollouts(policy, environment, &greedy_config, requests(0..1), |t| {
        greedy.push(t);
        on_done(greedy.len(), total);
    })
    .await;
    let mut sampled = Vec::new();
    if eval.pass_k > 0 {
        let sampled_config = RolloutConfig {
            temperature: eval.temperature,
            ..greedy_config.clone()
        };
        let attempts = requests(1..1 + eval.pass_k as u32);
        run_rollouts(policy, environment, &sampled_config, attempts, |t| {
            sampled.push(t);
            on_done(greedy.len() + sampled.len(), total);
        })
        .await;
    }
    let mut figures = measure(&greedy, tasks);
    if eval.pass_k > 0 {
        figures.pass_at_k = Some((eval.pass_k, pass_rate(&sampled, tasks.len(), eval.pass_k)));
    }
    figures.seconds = started.elapsed().as_secs_f64();
    greedy.append(&mut sampled);
    (figures, greedy)
}

/// Greedy-attempt figures of `trajectories` (one per task).
pub fn measure(trajectories: &[Trajectory], tasks: &[Arc<Task>]) -> EvalFigures {
    let by_id: HashMap<&str, &Task> = tasks.iter().map(|t| (t.id.as_str(), t.as_ref())).collect();
    let n = trajectories.len().max(1) as f64;
    let (mut passed, mut format_ok, mut answered, mut turns, mut length) = (0, 0, 0, 0, 0);
    let mut errors = Vec::new();
    for trajectory in trajectories {
        let task = trajectory.task_id.as_deref().and_then(|id| by_id.get(id));
        let facts = RecordFacts::of(trajectory, task.copied());
        passed += usize::from(trajectory.passed() == Some(true));
        format_ok += usize::from(facts.format_ok == Some(true));
        turns += trajectory
            .messages
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .count();
        length += policy_tokens(trajectory);
        if let Distance::Off { absolute, .. } = facts.distance {
            answered += 1;
            errors.push(absolute);
        }
    }
    EvalFigures {
        tasks: trajectories.len(),
        accuracy: passed as f64 / n,
        pass_at_k: None,
        mean_length: length as f64 / n,
        format_correct: format_ok as f64 / n,
        answered: answered as f64 / n,
        mean_absolute_error: (!errors.is_empty())
            .then(|| errors.iter().sum::<f64>() / errors.len() as f64),
        mean_turns: turns as f64 / n,
        seconds: 0.0,
    }
}

/// Policy tokens of a trajectory: its trace's trained tokens, or the count the endpoint
/// reported.
pub fn policy_tokens(trajectory: &Trajectory) -> usize {
    match &trajectory.token_trace {
        Some(trace) => trace.loss_mask.iter().filter(|&&bit| bit != 0).count(),
        None => trajectory
            .extra
            .get(metric::POLICY_TOKENS)
            .and_then(|v| v.as_u64())
            .unwrap_or(0) as usize,
    }
}

/// The mean over tasks of the unbiased pass@k estimate from `k` attempts each.
fn pass_rate(attempts: &[Trajectory], tasks: usize, k: usize) -> f64 {
    let mut per_group: HashMap<u64, (usize, usize)> = HashMap::new();
    for attempt in attempts {
        let entry = per_group.entry(attempt.group.unwrap_or(0)).or_default();
        entry.0 += 1;
        entry.1 += usize::from(attempt.passed() == Some(true));
    }
    let total: f64 = per_group
        .values()
        .filter_map(|&(n, c)| pass_at_k(n, c, k.min(n)))
        .sum();
    total / tasks.max(1) as f64
}
