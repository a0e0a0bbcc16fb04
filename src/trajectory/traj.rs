//! The trajectory τ = (x, a1, o1, …, aT) with its rewards, scores, labels and token trace.

use super::{
    ErrorKind, ForkBranch, ForkOrigin, Label, LabelStatus, Message, Reward, Role, Span, StepScore,
    TokenTrace, TrajectoryId,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// Why a trajectory ended.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum StopReason {
    /// The policy gave a final answer (or ended its turn without a tool call).
    #[default]
    Answered,
    /// The turn limit was reached.
    MaxTurns,
    /// The token limit (per turn or per trajectory) was reached.
    MaxTokens,
    /// The context window was full.
    MaxContext,
    /// Something failed (the environment, the backend).
    Error,
    /// Another reason a source gave, kept verbatim (e.g. SWE-agent's `submitted`).
    Other(String),
}

impl StopReason {
    /// The reason's name as stored and shown.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Answered => "answered",
            Self::MaxTurns => "max_turns",
            Self::MaxTokens => "max_tokens",
            Self::MaxContext => "max_context",
            Self::Error => "error",
            Self::Other(reason) => reason,
        }
    }
}

impl From<String> for StopReason {
    fn from(reason: String) -> Self {
        match reason.as_str() {
            "answered" => Self::Answered,
            "max_turns" => Self::MaxTurns,
            "max_tokens" => Self::MaxTokens,
            "max_context" => Self::MaxContext,
            "error" => Self::Error,
            _ => Self::Other(reason),
        }
    }
}

impl From<StopReason> for String {
    fn from(reason: StopReason) -> Self {
        reason.as_str().to_string()
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where the time of a rollout went, in milliseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Timings {
    /// When the rollout started, in milliseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<i64>,
    /// Time spent generating tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate_ms: Option<f64>,
    /// Time spent in tool calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_ms: Option<f64>,
    /// Time spent computing rewards and process scores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reward_ms: Option<f64>,
    /// Wall time from start to end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_ms: Option<f64>,
}

/// Where step `k` of a trajectory lies: an assistant message, or a span of one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepLocation {
    /// Index of the assistant message in `Trajectory::messages`.
    pub message: usize,
    /// The span inside it, for single-message solutions split into steps.
    pub span: Option<Span>,
}

/// One rollout of a policy on a task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trajectory {
    /// Its id (derived for generated rollouts, hashed from the content for imported ones).
    pub id: TrajectoryId,
    /// The task it attempts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// The run that produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// The policy version (training step) that sampled it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_version: Option<u64>,
    /// The GRPO group: siblings sampled for the same task at the same step share it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<u64>,
    /// Its index within the group, 0-based.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<u32>,
    /// The whole conversation: prompt, assistant actions, tool observations.
    pub messages: Vec<Message>,
    /// Why it ended.
    #[serde(default)]
    pub stop_reason: StopReason,
    /// The answer extracted from the last assistant message, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_answer: Option<String>,
    /// The outcome reward (ORM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reward: Option<Reward>,
    /// The GRPO advantage it was trained with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advantage: Option<f64>,
    /// Process scores (PRM), per step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub step_scores: Vec<StepScore>,
    /// Error labels, per step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<Label>,
    /// The exact tokens, loss mask and sampling log-probs, when generated here or recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_trace: Option<TokenTrace>,
    /// How many policy updates separated sampling from training (asynchronous runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub staleness: Option<u32>,
    /// For a continuation sampled from the middle of another trajectory: where it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork: Option<ForkOrigin>,
    /// The forks made from it, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub branches: Vec<ForkBranch>,
    /// Where the time went.
    #[serde(default, skip_serializing_if = "is_default_timings")]
    pub timings: Timings,
    /// The format it was read from (`rollscope` for generated ones).
    #[serde(default = "default_source_format")]
    pub source_format: String,
    /// Fields the source had that this model does not name, kept verbatim (an object of
    /// its own rather than flattened: flattening would buffer every record while parsing).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
}

fn is_default_timings(timings: &Timings) -> bool {
    *timings == Timings::default()
}

fn default_source_format() -> String {
    "rollscope".to_string()
}

impl Trajectory {
    /// An empty trajectory with an id and messages, to be filled in by the caller.
    pub fn new(id: TrajectoryId, messages: Vec<Message>) -> Self {
        Self {
            id,
            task_id: None,
            run: None,
            policy_version: None,
            group: None,
            sample: None,
            messages,
            stop_reason: StopReason::Answered,
            final_answer: None,
            reward: None,
            advantage: None,
            step_scores: Vec::new(),
            labels: Vec::new(),
            token_trace: None,
            staleness: None,
            fork: None,
            branches: Vec::new(),
            timings: Timings::default(),
            source_format: default_source_format(),
            extra: Map::new(),
        }
    }

    /// The steps that scores and labels attach to: each assistant message, or each span of
    /// an assistant message that was split into steps.
    pub fn steps(&self) -> Vec<StepLocation> {
        let mut steps = Vec::new();
        for (index, message) in self.messages.iter().enumerate() {
            if message.role != Role::Assistant {
                continue;
            }
            if message.spans.is_empty() {
                steps.push(StepLocation {
                    message: index,
                    span: None,
                });
            } else {
                steps.extend(message.spans.iter().map(|&span| StepLocation {
                    message: index,
                    span: Some(span),
                }));
            }
        }
        steps
    }

    /// The assistant turn (1-based) that step `step` (0-based, as labels count) is in.
    pub fn turn_of_step(&self, step: usize) -> Option<usize> {
        let message = self.steps().get(step)?.message;
        let turns = self.turn_messages();
        turns
            .iter()
            .position(|&index| index == message)
            .map(|turn| turn + 1)
    }

    /// The index in `messages` of each assistant turn, in order (turn k, 1-based, is
    /// `turn_messages()[k - 1]`).
    pub fn turn_messages(&self) -> Vec<usize> {
        (0..self.messages.len())
            .filter(|&index| self.messages[index].role == Role::Assistant)
            .collect()
    }

    /// Number of assistant turns.
    pub fn turn_count(&self) -> usize {
        self.messages
            .iter()
            .filter(|message| message.role == Role::Assistant)
            .count()
    }

    /// Number of tool calls made.
    pub fn tool_call_count(&self) -> usize {
        self.messages
            .iter()
            .map(|message| message.tool_calls.len())
            .sum()
    }

    /// Number of tool results that report an error.
    pub fn tool_error_count(&self) -> usize {
        self.messages
            .iter()
            .filter(|message| message.role == Role::Tool && message.is_error)
            .count()
    }

    /// Pass or fail, when the trajectory has a reward.
    pub fn passed(&self) -> Option<bool> {
        self.reward.as_ref().map(Reward::is_pass)
    }

    /// The lowest process score over all steps, if any step is scored.
    pub fn prm_min(&self) -> Option<f64> {
        self.step_scores
            .iter()
            .map(|score| score.value)
            .min_by(f64::total_cmp)
    }

    /// The process scores of one step.
    pub fn scores_of_step(&self, step: u32) -> impl Iterator<Item = &StepScore> {
        self.step_scores
            .iter()
            .filter(move |score| score.step == step)
    }

    /// The labels of one step.
    pub fn labels_of_step(&self, step: u32) -> impl Iterator<Item = &Label> {
        self.labels.iter().filter(move |label| label.step == step)
    }

    /// Whether any confirmed label marks an error of that kind (any kind when `None`).
    pub fn has_confirmed_error(&self, kind: Option<ErrorKind>) -> bool {
        self.labels.iter().any(|label| {
            label.status == LabelStatus::Confirmed && kind.is_none_or(|kind| label.kind == kind)
        })
    }

    /// The prompt part: messages before the first assistant message.
    pub fn prompt_messages(&self) -> &[Message] {
        let first = self
            .messages
            .iter()
            .position(|message| message.role == Role::Assistant)
            .unwrap_or(self.messages.len());
        &self.messages[..first]
    }

    /// The text of the last assistant message.
    pub fn last_assistant_text(&self) -> Option<&str> {
        self.messages
            .iter()
            .rev()
            .find(|message| message.role == Role::Assistant)
            .map(|message| message.content.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::ToolCall;

    fn sample() -> Trajectory {
        let mut call = Message::assistant("I add them.");
        call.tool_calls
            .push(ToolCall::new("calculator", r#"{"expression": "17+25"}"#));
        let mut solution = Message::assistant("Step 1: 2+2=4\nStep 2: 4*3=12");
        solution.spans = vec![Span { start: 0, end: 13 }, Span { start: 14, end: 28 }];
        Trajectory::new(
            TrajectoryId(7),
            vec![
                Message::user("Tom has 17 apples and buys 25 more."),
                call,
                Message::tool("42"),
                solution,
            ],
        )
    }

    #[test]
    fn steps_follow_messages_and_spans() {
        let trajectory = sample();
        let steps = trajectory.steps();
        assert_eq!(steps.len(), 3);
        assert_eq!(
            steps[0],
            StepLocation {
                message: 1,
                span: None
            }
        );
        let text = trajectory.messages[3].span_text(steps[2].span);
        assert_eq!(text, "Step 2: 4*3=12");
        assert_eq!(trajectory.turn_count(), 2);
        assert_eq!(trajectory.tool_call_count(), 1);
    }

    #[test]
    fn json_round_trip_keeps_unknown_fields() {
        let mut trajectory = sample();
        trajectory
            .extra
            .insert("origin".into(), serde_json::json!({"k": [1, 2]}));
        trajectory.stop_reason = StopReason::Other("submitted".into());
        let json = serde_json::to_string(&trajectory).unwrap();
        let back: Trajectory = serde_json::from_str(&json).unwrap();
        assert_eq!(back, trajectory);
    }
}
