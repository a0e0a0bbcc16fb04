//! Supervised fine-tuning: masked next-token cross-entropy (only the tokens the policy is to
//! produce count, and only their logits are computed), averaged over the batch's trained
//! tokens, then a clipped AdamW step.

use super::bucket::micro_batches;
use super::error::{Result, TrainError};
use super::trainer::Trainer;
use crate::model::{
    EncodedChat, Padding, Qwen, TokenBatch, next_token_logits_at, on_pool, token_log_probs,
};
use crate::trajectory::TokenTrace;
use candle_core::backprop::GradStore;
use candle_core::{D, DType, Tensor};

/// One training sequence with its loss mask.
#[derive(Clone, Debug, PartialEq)]
pub struct SftExample {
    /// Every token of the sequence.
    pub token_ids: Vec<u32>,
    /// 1 on tokens to learn to produce, 0 on prompt, observations and glue.
    pub loss_mask: Vec<u8>,
}

impl SftExample {
    /// An example, checked: equal lengths and at least one trained token after the first.
    pub fn new(token_ids: Vec<u32>, loss_mask: Vec<u8>) -> Result<Self> {
        if token_ids.len() != loss_mask.len() {
            return Err(TrainError::Input(format!(
                "SFT example: {} tokens but {} loss-mask entries",
                token_ids.len(),
                loss_mask.len()
            )));
        }
        let example = Self {
            token_ids,
            loss_mask,
        };
        if example.trained_tokens() == 0 {
            return Err(TrainError::Input(
                "SFT example: no token after the first is in the loss mask, so there is \
                 nothing to learn"
                    .into(),
            ));
        }
        Ok(example)
    }

    /// An example from a trajectory's token trace.
    pub fn from_trace(trace: &TokenTrace) -> Result<Self> {
        Self::new(trace.token_ids.clone(), trace.loss_mask.clone())
    }

    /// An example from a conversation encoded by the chat template.
    pub fn from_chat(encoded: &EncodedChat) -> Result<Self> {
        Self::new(encoded.token_ids.clone(), encoded.loss_mask.clone())
    }

    /// Number of tokens.
    pub fn len(&self) -> usize {
        self.token_ids.len()
    }

    /// Whether the example has no tokens (never true for a checked one).
    pub fn is_empty(&self) -> bool {
        self.token_ids.is_empty()
    }

    /// Tokens that carry loss (a first token has nothing to be predicted from).
    pub fn trained_tokens(&self) -> usize {
        self.loss_mask
            .iter()
            .skip(1)
            .filter(|&&bit| bit != 0)
            .count()
    }
}

/// Figures of one SFT step (or one evaluation of the loss).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SftFigures {
    /// Mean cross-entropy over the trained tokens (nats).
    pub loss: f64,
    /// Share of trained tokens the model's argmax predicts.
    pub token_accuracy: f64,
    /// Global gradient L2 norm before clipping (0 for an evaluation).
    pub grad_norm: f64,
    /// The learning rate of the step (0 for an evaluation).
    pub learning_rate: f64,
    /// Trained tokens.
    pub tokens: usize,
    /// Token slots computed, padding included (batch × longest).
    pub padded_tokens: usize,
}

/// The loss tensor of a batch and its figures.
struct SftForward {
    loss: Tensor,
    figures: SftFigures,
    correct: f64,
}

/// The masked cross-entropy of `examples` summed and divided by `total_tokens` (the trained
/// tokens of the whole step, so micro-batches' losses add up to the step's mean).
fn sft_forward(
    policy: &Qwen,
    examples: &[&SftExample],
    pad_id: u32,
    total_tokens: usize,
) -> Result<SftForward> {
    if examples.is_empty() {
        return Err(TrainError::Input("an SFT batch needs examples".into()));
    }
    let rows: Vec<Vec<u32>> = examples.iter().map(|e| e.token_ids.clone()).collect();
    let batch = TokenBatch::pad(&rows, Padding::Right, pad_id, policy.device())?;
    let len = batch.seq_len();
    if len < 2 {
        return Err(TrainError::Input(
            "SFT examples need at least 2 tokens".into(),
        ));
    }
    let width = len - 1;
    let mut columns = Vec::new();
    for (row, example) in examples.iter().enumerate() {
        for (t, &bit) in example.loss_mask.iter().enumerate().skip(1) {
            if bit != 0 {
                columns.push((row * width + t - 1) as u32);
            }
        }
    }
    let tokens = columns.len();
    if tokens == 0 {
        return Err(TrainError::Input(
            "an SFT batch has no trained token (build examples with SftExample::new)".into(),
        ));
    }
    let picked = next_token_logits_at(policy, &batch, &columns)?;
    let log_probs = token_log_probs(&picked.logits, &picked.targets, 1.0)?;
    let loss = (log_probs.sum_all()? * (-1.0 / total_tokens.max(1) as f64))?;
    let hits = picked.logits.argmax(D::Minus1)?.eq(&picked.targets)?;
    let correct = hits.to_dtype(DType::F64)?.sum_all()?.to_scalar::<f64>()?;
    Ok(SftForward {
        figures: SftFigures {
            loss: loss.to_dtype(DType::F64)?.to_scalar::<f64>()?,
            token_accuracy: correct / total_tokens.max(1) as f64,
            tokens,
            padded_tokens: examples.len() * len,
            ..SftFigures::default()
        },
        correct,
        loss,
    })
}

impl Trainer {
    /// One SFT step on a batch: masked cross-entropy averaged over the batch's trained
    /// tokens, backward, clipping, AdamW. With `micro_batch_tokens` > 0 the batch is cut by
    /// length into micro-batches of at most that many token slots whose gradients are
    /// summed (the same step, less memory); 0 computes it at once.
    pub fn sft_step(
        &mut self,
        examples: &[&SftExample],
        micro_batch_tokens: usize,
    ) -> Result<SftFigures> {
        on_pool(|| -> Result<SftFigures> {
            let total: usize = examples.iter().map(|e| e.trained_tokens()).sum();
            let lengths: Vec<usize> = examples.iter().map(|e| e.len()).collect();
            let mut sum = GradStore::default();
            let (mut figures, mut correct) = (SftFigures::default(), 0.0);
            for part in micro_batches(&lengths, micro_batch_tokens) {
                let part: Vec<&SftExample> = part.iter().map(|&i| examples[i]).collect();
                let forward = sft_forward(self.policy()?, &part, self.pad_id(), total)?;
                figures.loss += forward.figures.loss;
                figures.tokens += forward.figures.tokens;
                figures.padded_tokens += forward.figures.padded_tokens;
                correct += forward.correct;
                self.add_gradients(&mut sum, &forward.loss.backward()?)?;
            }
            let applied = self.apply_gradients(sum)?;
            Ok(SftFigures {
                token_accuracy: correct / total.max(1) as f64,
                grad_norm: applied.grad_norm,
                learning_rate: applied.learning_rate,
                ..figures
            })
        })
    }

    /// The SFT loss and token accuracy of a batch under the current weights, no update.
    pub fn sft_loss(&self, examples: &[&SftExample]) -> Result<SftFigures> {
        on_pool(|| -> Result<SftFigures> {
            let policy = self.policy()?.detached();
            let total = examples.iter().map(|e| e.trained_tokens()).sum();
            Ok(sft_forward(&policy, examples, self.pad_id(), total)?.figures)
        })
    }

    /// The id padding slots hold (never attended to nor trained on).
    pub fn pad_id(&self) -> u32 {
        self.model().config.pad_token_id.unwrap_or(0)
    }
}
