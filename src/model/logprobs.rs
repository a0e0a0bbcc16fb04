//! Log-probabilities and entropies from logits, differentiable, with the temperature
//! convention shared by sampling and training.
//!
//! **Convention.** The log-prob of a token is taken under the temperature-scaled full
//! distribution `softmax(logits / T)`, before any top-k or top-p truncation; greedy decoding
//! (temperature 0) uses `T = 1`. `SamplingParams::logprob_temperature` gives the `T` to pass
//! here so the trainer's ratios compare like with like.

use super::batch::TokenBatch;
use super::error::Result;
use super::kernels::{self, Kernels, on_host, reshaped};
use super::layers::accumulation_dtype;
use super::qwen::Qwen;
use candle_core::{D, Tensor};

fn scaled(logits: &Tensor, temperature: f64) -> Result<Tensor> {
    let wide = logits.to_dtype(accumulation_dtype(logits.dtype()))?;
    Ok(if temperature == 1.0 {
        wide
    } else {
        (wide / temperature)?
    })
}

/// `log Σ exp` over the last dimension, with the max shift held constant.
fn log_sum_exp(x: &Tensor) -> Result<Tensor> {
    let max = x.max_keepdim(D::Minus1)?.detach();
    let sum = x.broadcast_sub(&max)?.exp()?.sum_keepdim(D::Minus1)?;
    Ok((sum.log()? + max)?)
}

/// `log softmax(logits / T)[target]` for every position: logits `[.., V]`, targets `[..]`
/// (u32) → `[..]` in at least f32. Differentiable in `logits`.
pub fn token_log_probs(logits: &Tensor, targets: &Tensor, temperature: f64) -> Result<Tensor> {
    log_probs_with(logits, targets, temperature, &Kernels::default())
}

/// The entropy of `softmax(logits / T)` at every position: `[.., V]` → `[..]`.
/// Differentiable in `logits`.
pub fn entropy(logits: &Tensor, temperature: f64) -> Result<Tensor> {
    entropy_with(logits, temperature, &Kernels::default())
}

fn log_probs_with(
    logits: &Tensor,
    targets: &Tensor,
    temperature: f64,
    kernels: &Kernels,
) -> Result<Tensor> {
    if kernels.log_probs && on_host(logits) {
        return Ok(kernels::fused_token_log_probs(
            logits,
            targets,
            temperature,
            kernels.isa,
        )?);
    }
    let x = scaled(logits, temperature)?.contiguous()?;
    let picked = x.gather(&targets.unsqueeze(D::Minus1)?.contiguous()?, D::Minus1)?;
    Ok(picked
        .broadcast_sub(&log_sum_exp(&x)?)?
        .squeeze(D::Minus1)?)
}

fn entropy_with(logits: &Tensor, temperature: f64, kernels: &Kernels) -> Result<Tensor> {
    if kernels.log_probs && on_host(logits) {
        return Ok(kernels::fused_entropy(logits, temperature, kernels.isa)?);
    }
    let x = scaled(logits, temperature)?;
    let lse = log_sum_exp(&x)?;
    let probs = x.broadcast_sub(&lse)?.exp()?;
    let expected = (probs * &x)?.sum_keepdim(D::Minus1)?;
    Ok((lse - expected)?.squeeze(D::Minus1)?)
}

/// Log-probs and entropies of every next token of a batch: column `t` of each `[B, T-1]`
/// result is about token `t + 1` given tokens `..=t`. Padding columns hold meaningless values
/// the caller masks out.
#[derive(Clone, Debug)]
pub struct NextTokenStats {
    /// `log p(ids[t+1] | ids[..=t])`, `[B, T-1]`.
    pub log_probs: Tensor,
    /// Entropy of the predictive distribution at `t`, `[B, T-1]`.
    pub entropy: Tensor,
}

/// Next-token log-probs `[B, T-1]` of a batch under `model` at temperature `T`.
pub fn next_token_log_probs(model: &Qwen, batch: &TokenBatch, temperature: f64) -> Result<Tensor> {
    let (logits, targets) = shifted(model, batch)?;
    let log_probs = log_probs_with(&logits, &targets, temperature, model.kernels())?;
    per_sequence(&log_probs, batch)
}

/// Next-token log-probs and entropies of a batch, from one forward.
pub fn next_token_stats(
    model: &Qwen,
    batch: &TokenBatch,
    temperature: f64,
) -> Result<NextTokenStats> {
    let (logits, targets) = shifted(model, batch)?;
    let log_probs = log_probs_with(&logits, &targets, temperature, model.kernels())?;
    let entropy = entropy_with(&logits, temperature, model.kernels())?;
    Ok(NextTokenStats {
        log_probs: per_sequence(&log_probs, batch)?,
        entropy: per_sequence(&entropy, batch)?,
    })
}

/// Logits of every position but the last and the tokens that follow them, both as rows or
/// both per sequence (see `Qwen::logit_rows`).
fn shifted(model: &Qwen, batch: &TokenBatch) -> Result<(Tensor, Tensor)> {
    let len = batch.seq_len();
    if len < 2 {
        return Err(super::error::ModelError::Request(
            "next-token log-probs need sequences of at least 2 tokens".into(),
        ));
    }
    let logits = model.logit_rows(batch, len - 1)?;
    let targets = batch.ids.narrow(1, 1, len - 1)?;
    let targets = if logits.rank() == 2 {
        targets.flatten_all()?
    } else {
        targets
    };
    Ok((logits, targets))
}

/// Per-position figures shaped `[B, T-1]`.
fn per_sequence(values: &Tensor, batch: &TokenBatch) -> Result<Tensor> {
    Ok(reshaped(
        values,
        &[batch.batch_size(), batch.seq_len() - 1],
    )?)
}
