//! Outcome rewards (ORM): exact answer match, format, and a length penalty, weighted and
//! stored by name in `Reward.components`. Components are stored weighted, so they sum to
//! the total.
//!
//! ```toml
//! [reward]          # in session.toml; every field has a default
//! correct = 1.0     # weight of the exact answer match (1 or 0)
//! format = 0.1      # weight of the format score (answer marker, well-formed tool calls)
//! length = 0.1      # weight of the length penalty (0 within budget, down to -1)
//! length_budget = 1024
//! ```

use super::answer::{answers_match, extract_answer};
use super::protocol::check_stored_call;
use crate::trajectory::{Reward, Role, Task, Trajectory};
use serde::{Deserialize, Serialize};

/// Name of the answer-match component.
pub const CORRECT: &str = "correct";
/// Name of the format component.
pub const FORMAT: &str = "format";
/// Name of the length component.
pub const LENGTH: &str = "length";

/// Weights and budget of the built-in reward components.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RewardConfig {
    /// Weight of the exact answer match.
    pub correct: f64,
    /// Weight of the format score.
    pub format: f64,
    /// Weight of the length penalty.
    pub length: f64,
    /// Tokens the policy may generate before the length penalty starts.
    pub length_budget: usize,
    /// Characters per token, to estimate length when a trajectory has no token trace.
    pub chars_per_token: f64,
}

impl Default for RewardConfig {
    fn default() -> Self {
        Self {
            correct: 1.0,
            format: 0.1,
            length: 0.1,
            length_budget: 1024,
            chars_per_token: 4.0,
        }
    }
}

/// The answer a trajectory gives: its recorded final answer, else the one marked in its
/// last assistant message.
pub fn final_answer(trajectory: &Trajectory) -> Option<String> {
    trajectory.final_answer.clone().or_else(|| {
        trajectory
            .last_assistant_text()
            .and_then(extract_answer)
            .map(|answer| answer.text)
    })
}

/// The format score: half for a marked final answer, half for every tool call being well
/// formed (checked against the task's tools when it lists any).
pub fn format_score(task: &Task, trajectory: &Trajectory) -> f64 {
    let marked = trajectory
        .last_assistant_text()
        .and_then(extract_answer)
        .is_some();
    let calls_ok = trajectory
        .messages
        .iter()
        .filter(|message| message.role == Role::Assistant)
        .flat_map(|message| &message.tool_calls)
        .all(|call| check_stored_call(call, &task.tools).is_ok());
    0.5 * f64::from(u8::from(marked)) + 0.5 * f64::from(u8::from(calls_ok))
}

/// Tokens the policy generated: from the token trace, else estimated from the characters
/// of its messages and tool calls.
pub fn policy_length(trajectory: &Trajectory, chars_per_token: f64) -> usize {
    if let Some(trace) = &trajectory.token_trace {
        return trace.policy_tokens();
    }
    let characters: usize = trajectory
        .messages
        .iter()
        .filter(|message| message.role == Role::Assistant)
        .map(|message| {
            message.content.chars().count()
                + message
                    .reasoning
                    .as_deref()
                    .map_or(0, |text| text.chars().count())
                + message
                    .tool_calls
                    .iter()
                    .map(|call| call.name.len() + call.arguments.chars().count())
                    .sum::<usize>()
        })
        .sum();
    (characters as f64 / chars_per_token.max(0.1)).ceil() as usize
}

/// The length penalty: 0 within budget, falling linearly to -1 at twice the budget.
pub fn length_penalty(length: usize, budget: usize) -> f64 {
    if length <= budget {
        return 0.0;
    }
    let over = (length - budget) as f64 / budget.max(1) as f64;
    -over.min(1.0)
}

/// The outcome reward of a trajectory for a task. `passed` is the answer match when the
/// task has a ground truth.
pub fn outcome_reward(task: &Task, trajectory: &Trajectory, config: &RewardConfig) -> Reward {
    let mut reward = Reward::default();
    if let Some(truth) = &task.ground_truth {
        let correct = final_answer(trajectory).is_some_and(|answer| answers_match(&answer, truth));
        reward.passed = Some(correct);
        add(
            &mut reward,
            CORRECT,
            config.correct,
            f64::from(u8::from(correct)),
        );
    }
    add(
        &mut reward,
        FORMAT,
        config.format,
        format_score(task, trajectory),
    );
    let length = policy_length(trajectory, config.chars_per_token);
    add(
        &mut reward,
        LENGTH,
        config.length,
        length_penalty(length, config.length_budget),
    );
    reward
}

/// Adds a weighted component and its weight (components with weight 0 are left out).
pub fn add(reward: &mut Reward, name: &str, weight: f64, value: f64) {
    if weight == 0.0 {
        return;
    }
    let weighted = weight * value;
    reward.components.insert(name.to_string(), weighted);
    reward.weights.insert(name.to_string(), weight);
    reward.total += weighted;
}
