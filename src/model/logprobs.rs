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

/// Next-token log-probs `[B, T-1]` computed at chosen columns only (`columns` index the
/// grid flattened to `B·(T-1)`, e.g. a batch's policy tokens): the final norm, the output
/// projection and the softmax run on those rows alone. The other columns hold values the
/// caller masks out, as for padding (with no column chosen, every column is computed).
pub fn next_token_log_probs_at(
    model: &Qwen,
    batch: &TokenBatch,
    columns: &[u32],
    temperature: f64,
) -> Result<Tensor> {
    if columns.is_empty() {
        return next_token_log_probs(model, batch, temperature);
    }
    let (picked, log_probs) = picked_log_probs(model, batch, columns, temperature)?;
    picked.spread(&log_probs, batch)
}

/// Next-token log-probs and entropies `[B, T-1]` computed at chosen columns only, from one
/// forward (see `next_token_log_probs_at`).
pub fn next_token_stats_at(
    model: &Qwen,
    batch: &TokenBatch,
    columns: &[u32],
    temperature: f64,
) -> Result<NextTokenStats> {
    if columns.is_empty() {
        return next_token_stats(model, batch, temperature);
    }
    let (picked, log_probs) = picked_log_probs(model, batch, columns, temperature)?;
    let entropy = entropy_with(&picked.logits, temperature, model.kernels())?;
    Ok(NextTokenStats {
        log_probs: picked.spread(&log_probs, batch)?,
        entropy: picked.spread(&entropy, batch)?,
    })
}

/// The logits at chosen columns and the log-probs `[n]` of their targets.
fn picked_log_probs(
    model: &Qwen,
    batch: &TokenBatch,
    columns: &[u32],
    temperature: f64,
) -> Result<(PickedLogits, Tensor)> {
    let picked = next_token_logits_at(model, batch, columns)?;
    let (logits, targets) = (&picked.logits, &picked.targets);
    let log_probs = log_probs_with(logits, targets, temperature, model.kernels())?;
    Ok((picked, log_probs))
}

/// The logits of a batch's chosen next-token columns and the tokens they predict.
pub struct PickedLogits {
    /// Logits `[n, vocab]`, one row per chosen column in the order given.
    pub logits: Tensor,
    /// The token that follows each chosen position (u32, `[n]`).
    pub targets: Tensor,
    /// The chosen columns (u32, `[n]`).
    columns: Tensor,
}

impl PickedLogits {
    /// Per-column values `[n]` laid out on the `[B, T-1]` grid, 0 off the chosen columns.
    fn spread(&self, values: &Tensor, batch: &TokenBatch) -> Result<Tensor> {
        let (rows, width) = (batch.batch_size(), batch.seq_len() - 1);
        let grid = Tensor::zeros(rows * width, values.dtype(), values.device())?;
        Ok(grid
            .index_add(&self.columns, values, 0)?
            .reshape((rows, width))?)
    }
}

/// The logits at chosen next-token columns (`columns` index the grid flattened to
/// `B·(T-1)`; column `t` of row `b` is about token `t + 1`) and their targets. Differentiable
/// in the model's parameters.
pub fn next_token_logits_at(
    model: &Qwen,
    batch: &TokenBatch,
    columns: &[u32],
) -> Result<PickedLogits> {
    let len = batch.seq_len();
    let width = len.saturating_sub(1);
    let grid = batch.batch_size() * width;
    if len < 2 || columns.is_empty() || columns.iter().any(|&c| c as usize >= grid) {
        return Err(super::error::ModelError::Request(format!(
            "next-token columns must be a non-empty choice among the {grid} columns of a \
             {}×{len} batch",
            batch.batch_size()
        )));
    }
    let width = width as u32;
    let rows: Vec<u32> = columns.iter().map(|&c| c + c / width).collect();
    let following: Vec<u32> = rows.iter().map(|&row| row + 1).collect();
    let device = model.device();
    let n = columns.len();
    let logits = model.logits_at(batch, &Tensor::from_vec(rows, n, device)?)?;
    let targets = batch
        .ids
        .flatten_all()?
        .index_select(&Tensor::from_vec(following, n, device)?, 0)?;
    Ok(PickedLogits {
        logits,
        targets,
        columns: Tensor::from_vec(columns.to_vec(), n, device)?,
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
