//! The token trace of a generated trajectory: the source of truth for training.

use super::Trajectory;
use serde::{Deserialize, Serialize};

/// The exact tokens of a trajectory as the policy saw and produced them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TokenTrace {
    /// Every token of the conversation, prompt included.
    pub token_ids: Vec<u32>,
    /// 1 where the policy sampled the token (trained on), 0 for prompt, observations, glue.
    pub loss_mask: Vec<u8>,
    /// The behaviour policy's log-probability of each token when it was sampled (0 elsewhere);
    /// empty when not recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub logprobs: Vec<f32>,
    /// The sampling distribution's entropy at each sampled token (0 elsewhere); empty when
    /// not recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entropies: Vec<f32>,
}

impl TokenTrace {
    /// Number of tokens.
    pub fn len(&self) -> usize {
        self.token_ids.len()
    }

    /// Whether the trace holds no tokens.
    pub fn is_empty(&self) -> bool {
        self.token_ids.is_empty()
    }

    /// Number of tokens the policy generated (the loss-mask ones).
    pub fn policy_tokens(&self) -> usize {
        self.loss_mask.iter().filter(|&&bit| bit != 0).count()
    }

    /// The token ranges the policy sampled, one per turn: the maximal runs of loss-mask ones.
    pub fn policy_runs(&self) -> Vec<std::ops::Range<usize>> {
        let mut runs = Vec::new();
        let mut start = None;
        for (index, &bit) in self.loss_mask.iter().enumerate() {
            match (bit != 0, start) {
                (true, None) => start = Some(index),
                (false, Some(from)) => {
                    runs.push(from..index);
                    start = None;
                }
                _ => {}
            }
        }
        if let Some(from) = start {
            runs.push(from..self.loss_mask.len());
        }
        runs
    }

    /// The first `len` tokens, with their mask, log-probs and entropies.
    pub fn prefix(&self, len: usize) -> Self {
        let cut = |values: &Vec<f32>| values[..len.min(values.len())].to_vec();
        Self {
            token_ids: self.token_ids[..len].to_vec(),
            loss_mask: self.loss_mask[..len].to_vec(),
            logprobs: cut(&self.logprobs),
            entropies: cut(&self.entropies),
        }
    }

    /// Checks that the per-token arrays agree in length.
    pub fn validate(&self) -> Result<(), String> {
        let n = self.token_ids.len();
        let check = |name: &str, len: usize, optional: bool| {
            if len == n || (optional && len == 0) {
                Ok(())
            } else {
                Err(format!(
                    "token trace: {name} has {len} entries for {n} tokens"
                ))
            }
        };
        check("loss_mask", self.loss_mask.len(), false)?;
        check("logprobs", self.logprobs.len(), true)?;
        check("entropies", self.entropies.len(), true)
    }
}

impl Trajectory {
    /// A copy without its token trace (what the store keeps as the record, the trace apart),
    /// made without copying the trace. Every field is named, so a new one cannot be missed.
    pub fn without_trace(&self) -> Self {
        let Self {
            id,
            task_id,
            run,
            policy_version,
            group,
            sample,
            messages,
            stop_reason,
            final_answer,
            reward,
            advantage,
            step_scores,
            labels,
            token_trace: _,
            staleness,
            fork,
            branches,
            timings,
            source_format,
            extra,
        } = self;
        Self {
            id: *id,
            task_id: task_id.clone(),
            run: run.clone(),
            policy_version: *policy_version,
            group: *group,
            sample: *sample,
            messages: messages.clone(),
            stop_reason: stop_reason.clone(),
            final_answer: final_answer.clone(),
            reward: reward.clone(),
            advantage: *advantage,
            step_scores: step_scores.clone(),
            labels: labels.clone(),
            token_trace: None,
            staleness: *staleness,
            fork: fork.clone(),
            branches: branches.clone(),
            timings: timings.clone(),
            source_format: source_format.clone(),
            extra: extra.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::{Message, TrajectoryId};

    #[test]
    fn without_trace_keeps_every_other_field() {
        let mut trajectory = Trajectory::new(TrajectoryId(3), vec![Message::assistant("4")]);
        trajectory.run = Some("grpo-0001".into());
        trajectory.advantage = Some(0.5);
        trajectory.final_answer = Some("4".into());
        trajectory.token_trace = Some(TokenTrace {
            token_ids: vec![5, 6],
            loss_mask: vec![0, 1],
            logprobs: vec![0.0, -0.25],
            entropies: Vec::new(),
        });
        let mut expected = trajectory.clone();
        expected.token_trace = None;
        assert_eq!(trajectory.without_trace(), expected);
    }
}
