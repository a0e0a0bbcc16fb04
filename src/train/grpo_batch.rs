//! A GRPO batch: sampled sequences (prompt and completion, observations included) with their
//! loss masks, behaviour log-probs and advantages, right-padded into tensors whose column `t`
//! is about token `t + 1` (the layout of `next_token_log_probs`).

use super::bucket::micro_batches;
use super::error::{Result, TrainError};
use super::loss::UpdateTotals;
use crate::model::{Padding, TokenBatch};
use crate::trajectory::TokenTrace;
use candle_core::{DType, Device, Tensor};

/// A sample's advantage.
#[derive(Clone, Debug, PartialEq)]
pub enum Advantage {
    /// One value for every policy token (the group-relative advantage of GRPO).
    Sample(f64),
    /// One value per token, aligned with the token ids (e.g. per-turn advantages mixed with
    /// process scores); only the values of policy tokens are used.
    Tokens(Vec<f32>),
}

/// One sampled sequence to train on.
#[derive(Clone, Debug, PartialEq)]
pub struct GrpoSample {
    /// Every token as the policy saw it: prompt, completions, observations.
    pub token_ids: Vec<u32>,
    /// 1 on tokens the policy sampled, 0 on prompt, observations and template glue.
    pub loss_mask: Vec<u8>,
    /// The behaviour policy's log-prob of each token when it was sampled (aligned with the
    /// token ids; values off the mask are ignored). Empty when not recorded: the current
    /// policy's log-probs stand in (on-policy).
    pub behaviour_logprobs: Vec<f32>,
    /// The advantage.
    pub advantage: Advantage,
}

impl GrpoSample {
    /// A sample from a trajectory's token trace (its recorded log-probs as the behaviour).
    pub fn from_trace(trace: &TokenTrace, advantage: Advantage) -> Self {
        Self {
            token_ids: trace.token_ids.clone(),
            loss_mask: trace.loss_mask.clone(),
            behaviour_logprobs: trace.logprobs.clone(),
            advantage,
        }
    }

    fn validate(&self, index: usize) -> Result<()> {
        let n = self.token_ids.len();
        let problem =
            |message: String| Err(TrainError::Input(format!("sample {index}: {message}")));
        if n < 2 {
            return problem(format!("{n} tokens; a trained sequence needs at least 2"));
        }
        if self.loss_mask.len() != n {
            return problem(format!(
                "loss_mask has {} entries for {n} tokens",
                self.loss_mask.len()
            ));
        }
        if !self.behaviour_logprobs.is_empty() && self.behaviour_logprobs.len() != n {
            return problem(format!(
                "behaviour_logprobs has {} entries for {n} tokens (leave it empty when not \
                 recorded)",
                self.behaviour_logprobs.len()
            ));
        }
        match &self.advantage {
            Advantage::Sample(value) if !value.is_finite() => {
                problem(format!("advantage {value} is not finite"))
            }
            Advantage::Tokens(values) if values.len() != n => problem(format!(
                "{} per-token advantages for {n} tokens",
                values.len()
            )),
            _ => Ok(()),
        }
    }
}

/// An update's samples as micro-batches of similar length, each padded only to its own
/// longest sample, with the update's totals every micro-batch's loss is normalised by.
pub struct GrpoBatches {
    /// The micro-batches, shortest first.
    pub micro: Vec<GrpoBatch>,
    /// Samples and policy tokens of the whole update.
    pub totals: UpdateTotals,
}

impl GrpoBatches {
    /// `samples` cut into micro-batches of at most `max_tokens` token slots (samples ×
    /// longest, padding included; 0: one batch), each padded on the right with `pad_id`.
    pub fn new(
        samples: &[GrpoSample],
        pad_id: u32,
        device: &Device,
        max_tokens: usize,
    ) -> Result<Self> {
        if samples.is_empty() {
            return Err(TrainError::Input("a GRPO batch needs samples".into()));
        }
        for (index, sample) in samples.iter().enumerate() {
            sample.validate(index)?;
        }
        let lengths: Vec<usize> = samples.iter().map(|s| s.token_ids.len()).collect();
        let micro = micro_batches(&lengths, max_tokens)
            .iter()
            .map(|indices| {
                let part: Vec<GrpoSample> = indices.iter().map(|&i| samples[i].clone()).collect();
                GrpoBatch::new(&part, pad_id, device)
            })
            .collect::<Result<Vec<_>>>()?;
        let totals = UpdateTotals {
            samples: samples.len(),
            tokens: micro.iter().map(GrpoBatch::policy_tokens).sum(),
        };
        Ok(Self { micro, totals })
    }

    /// Token slots computed over the micro-batches, padding included.
    pub fn token_slots(&self) -> usize {
        self.micro
            .iter()
            .map(|batch| batch.len() * batch.tokens.seq_len())
            .sum()
    }
}

/// Samples padded into tensors for the GRPO objective (`[B, T-1]` unless noted).
pub struct GrpoBatch {
    /// The padded token ids for the forward.
    pub tokens: TokenBatch,
    /// 1 where column `t`'s target (token `t + 1`) is a policy token (f32).
    pub mask: Tensor,
    /// Behaviour log-probs of each target (f32; 0 off the mask and in rows without recorded
    /// values, so values on masked tokens can never overflow the ratio).
    pub behaviour: Tensor,
    /// Per row: whether its behaviour log-probs were recorded.
    pub recorded: Vec<bool>,
    /// `[B, 1]` per-sample or `[B, T-1]` per-token advantages (f32; per-token ones are 0 off
    /// the mask).
    pub advantages: Tensor,
    /// The columns of the flattened `[B, T-1]` grid where the mask is 1, in order: where
    /// log-probs are needed (`next_token_stats_at`).
    pub policy_columns: Vec<u32>,
}

impl GrpoBatch {
    /// Pads `samples` on the right with `pad_id` into tensors on `device`.
    pub fn new(samples: &[GrpoSample], pad_id: u32, device: &Device) -> Result<Self> {
        if samples.is_empty() {
            return Err(TrainError::Input("a GRPO batch needs samples".into()));
        }
        for (index, sample) in samples.iter().enumerate() {
            sample.validate(index)?;
        }
        let rows: Vec<Vec<u32>> = samples.iter().map(|s| s.token_ids.clone()).collect();
        let tokens = TokenBatch::pad(&rows, Padding::Right, pad_id, device)?;
        let columns = tokens.seq_len() - 1;
        let per_token = samples
            .iter()
            .any(|s| matches!(s.advantage, Advantage::Tokens(_)));
        let count = samples.len() * columns;
        let (mut mask, mut behaviour) = (vec![0f32; count], vec![0f32; count]);
        let mut advantages = vec![0f32; if per_token { count } else { samples.len() }];
        for (row, sample) in samples.iter().enumerate() {
            let start = row * columns;
            for t in 1..sample.token_ids.len() {
                if sample.loss_mask[t] == 0 {
                    continue;
                }
                let column = start + t - 1;
                mask[column] = 1.0;
                if let Some(&logprob) = sample.behaviour_logprobs.get(t) {
                    behaviour[column] = logprob;
                }
                if let Advantage::Tokens(values) = &sample.advantage {
                    advantages[column] = values[t];
                }
            }
            if let Advantage::Sample(value) = sample.advantage {
                if per_token {
                    for column in start..start + columns {
                        advantages[column] = mask[column] * value as f32;
                    }
                } else {
                    advantages[row] = value as f32;
                }
            }
        }
        let policy_columns = (0..count as u32)
            .filter(|&column| mask[column as usize] != 0.0)
            .collect();
        let shape = (samples.len(), columns);
        let advantages = if per_token {
            Tensor::from_vec(advantages, shape, device)?
        } else {
            Tensor::from_vec(advantages, (samples.len(), 1), device)?
        };
        Ok(Self {
            tokens,
            mask: Tensor::from_vec(mask, shape, device)?,
            behaviour: Tensor::from_vec(behaviour, shape, device)?,
            recorded: samples
                .iter()
                .map(|s| !s.behaviour_logprobs.is_empty())
                .collect(),
            advantages,
            policy_columns,
        })
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.recorded.len()
    }

    /// Whether the batch has no samples (never true for a built batch).
    pub fn is_empty(&self) -> bool {
        self.recorded.is_empty()
    }

    /// Tokens the policy sampled, over the batch: the tokens that are trained.
    pub fn policy_tokens(&self) -> usize {
        self.policy_columns.len()
    }

    /// The row selector of recorded behaviour log-probs, `[B, T-1]` (u8).
    pub(super) fn recorded_mask(&self) -> Result<Tensor> {
        let rows: Vec<u8> = self.recorded.iter().map(|&r| u8::from(r)).collect();
        let selector = Tensor::from_vec(rows, (self.len(), 1), self.mask.device())?;
        Ok(selector.broadcast_as(self.mask.shape())?.contiguous()?)
    }

    /// The mask, behaviour log-probs and advantages in `dtype`.
    pub(super) fn in_dtype(&self, dtype: DType) -> Result<(Tensor, Tensor, Tensor)> {
        Ok((
            self.mask.to_dtype(dtype)?,
            self.behaviour.to_dtype(dtype)?,
            self.advantages.to_dtype(dtype)?,
        ))
    }
}
