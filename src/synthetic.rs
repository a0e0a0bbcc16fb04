//! Realistic synthetic trajectories for benchmarks and tests: GRPO groups of arithmetic
//! rollouts with tool calls, rewards, process scores, some labels and token traces.

use crate::trajectory::{
    ErrorKind, Label, LabelStatus, Message, Reward, ScoreSource, StepScore, StopReason, Task,
    TokenTrace, ToolCall, Trajectory, TrajectoryId,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Samples per GRPO group in generated data.
pub const GROUP_SIZE: u64 = 8;

/// How a synthetic set is laid out.
#[derive(Clone, Copy, Debug)]
pub struct SyntheticSpec {
    /// Number of trajectories.
    pub count: u64,
    /// Every how-many-th trajectory carries a token trace (2 = half of them).
    pub trace_every: u64,
    /// Tokens in a trace.
    pub trace_tokens: usize,
    /// Trajectories per training step.
    pub per_step: u64,
    /// The seed.
    pub seed: u64,
}

impl Default for SyntheticSpec {
    fn default() -> Self {
        Self {
            count: 1000,
            trace_every: 2,
            trace_tokens: 1000,
            per_step: 512,
            seed: 7,
        }
    }
}

/// The task of trajectory `index`.
pub fn task(index: u64, spec: &SyntheticSpec) -> Task {
    let task_number = index / GROUP_SIZE;
    let mut rng = StdRng::seed_from_u64(spec.seed ^ task_number.wrapping_mul(0x9e37_79b9));
    let (a, b) = (rng.random_range(10..500), rng.random_range(10..500));
    let mut task = Task::new(
        format!("arith-{task_number:05}"),
        "arith",
        format!("Tom has {a} apples and buys {b} more. How many apples does he have?"),
    );
    task.ground_truth = Some((a + b).to_string());
    task.reference_solution = Some(format!(
        "{a} + {b} = <<{a}+{b}={}>>{}\n#### {}",
        a + b,
        a + b,
        a + b
    ));
    task.difficulty = Some(1 + (task_number % 5) as u32);
    task
}

/// Trajectory `index` of a synthetic set: deterministic from the spec's seed.
pub fn trajectory(index: u64, spec: &SyntheticSpec) -> Trajectory {
    let mut rng = StdRng::seed_from_u64(spec.seed.wrapping_add(index.wrapping_mul(0x2545_f491)));
    let task = task(index, spec);
    let step = index / spec.per_step.max(1);
    let group = index / GROUP_SIZE;
    let sample = (index % GROUP_SIZE) as u32;
    let truth: i64 = task
        .ground_truth
        .as_deref()
        .unwrap_or("0")
        .parse()
        .unwrap_or(0);
    let turns = rng.random_range(2..=5usize);
    let correct = rng.random_bool(0.55);
    let mut messages = vec![
        Message::system(
            "You are a careful math assistant. Use the calculator for arithmetic. End with 'Final Answer: <number>'.",
        ),
        task.prompt[0].clone(),
        Message::assistant("I need the total, so I will add the two amounts with the calculator."),
    ];
    let mut scores = vec![StepScore {
        step: 0,
        value: 0.9,
        source: ScoreSource::Rule,
        note: None,
    }];
    for turn in 1..turns {
        let wrong = !correct && turn == 1;
        let shown = if wrong {
            truth + rng.random_range(1..40)
        } else {
            truth
        };
        let mut action = Message::assistant(format!("Step {turn}: I combine the quantities."));
        let id = format!("call_{turn}_0");
        action.tool_calls.push(ToolCall {
            id: Some(id.clone()),
            ..ToolCall::new(
                "calculator",
                format!(r#"{{"expression": "{} + {}"}}"#, shown - 17, 17),
            )
        });
        messages.push(action);
        let mut observation = Message::tool(shown.to_string());
        observation.tool_call_id = Some(id);
        observation.name = Some("calculator".into());
        observation.latency_ms = Some(rng.random_range(0.2..5.0));
        messages.push(observation);
        scores.push(StepScore {
            step: turn as u32,
            value: if wrong {
                0.1
            } else {
                rng.random_range(0.7..1.0)
            },
            source: ScoreSource::Rule,
            note: None,
        });
    }
    let answer = if correct { truth } else { truth + 3 };
    messages.push(Message::assistant(format!(
        "So he has {answer} apples.\nFinal Answer: {answer}"
    )));
    scores.push(StepScore {
        step: turns as u32,
        value: if correct { 1.0 } else { 0.0 },
        source: ScoreSource::MonteCarlo,
        note: None,
    });
    let mut trajectory = Trajectory::new(
        TrajectoryId::derived("grpo-0001", step, group, sample),
        messages,
    );
    trajectory.task_id = Some(task.id.clone());
    trajectory.run = Some("grpo-0001".into());
    trajectory.policy_version = Some(step);
    trajectory.group = Some(group);
    trajectory.sample = Some(sample);
    trajectory.final_answer = Some(answer.to_string());
    trajectory.stop_reason = if rng.random_bool(0.05) {
        StopReason::MaxTurns
    } else {
        StopReason::Answered
    };
    let mut reward = Reward::scalar(if correct { 1.0 } else { 0.0 });
    reward.components.insert("correct".into(), reward.total);
    reward.components.insert("format".into(), 1.0);
    reward.passed = Some(correct);
    trajectory.reward = Some(reward);
    trajectory.advantage = Some(if correct { 0.9 } else { -0.9 });
    trajectory.step_scores = scores;
    if !correct && rng.random_bool(0.3) {
        trajectory.labels.push(Label {
            step: 1,
            kind: ErrorKind::ALL[rng.random_range(0..4)],
            status: if rng.random_bool(0.5) {
                LabelStatus::Confirmed
            } else {
                LabelStatus::Suggested
            },
            note: None,
            author: Some("synthetic".into()),
            time: 1_700_000_000_000 + index as i64,
        });
    }
    if spec.trace_every > 0 && index.is_multiple_of(spec.trace_every) {
        trajectory.token_trace = Some(trace(&mut rng, spec.trace_tokens));
    }
    trajectory
}

fn trace(rng: &mut StdRng, tokens: usize) -> TokenTrace {
    let prompt = tokens / 3;
    let token_ids = (0..tokens).map(|_| rng.random_range(3..2048)).collect();
    let loss_mask: Vec<u8> = (0..tokens)
        .map(|index| u8::from(index >= prompt && (index / 50) % 3 != 2))
        .collect();
    let logprobs = loss_mask
        .iter()
        .map(|&bit| {
            if bit == 1 {
                -rng.random_range(0.0f32..4.0)
            } else {
                0.0
            }
        })
        .collect();
    TokenTrace {
        token_ids,
        loss_mask,
        logprobs,
        entropies: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_shaped_like_rollouts() {
        let spec = SyntheticSpec::default();
        let first = trajectory(10, &spec);
        assert_eq!(first, trajectory(10, &spec));
        for index in 0..50 {
            let messages = trajectory(index, &spec).messages.len();
            assert!((6..=12).contains(&messages), "{messages} messages");
        }
        assert_eq!(first.steps().len(), first.turn_count());
        assert!(trajectory(0, &spec).token_trace.is_some());
        assert!(trajectory(1, &spec).token_trace.is_none());
        assert_eq!(first.task_id.as_deref(), Some(task(10, &spec).id.as_str()));
    }
}
