//! Re-scoring trajectories: the log-prob a model gives each policy token, and how far that
//! drifts from the log-probs recorded when the trajectory was sampled.

use super::batch::{Padding, TokenBatch};
use super::error::{ModelError, Result};
use super::language_model::LanguageModel;
use super::logprobs::next_token_log_probs;
use super::pool::on_pool;
use crate::trajectory::Trajectory;
use serde::Serialize;
use serde_json::Value;

/// Where the scored tokens came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenSource {
    /// The trajectory's token trace (exactly what was sampled).
    TokenTrace,
    /// The messages re-rendered by the model's chat template.
    ChatTemplate,
}

/// The scores of one trajectory's policy tokens.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TrajectoryScore {
    /// The trajectory id.
    pub id: String,
    /// Where the tokens came from.
    pub source: TokenSource,
    /// All tokens of the trajectory.
    pub tokens: usize,
    /// 0-based positions of the scored (policy) tokens.
    pub positions: Vec<usize>,
    /// `log p(token | everything before it)` at each scored position.
    pub logprobs: Vec<f32>,
    /// Mean of `logprobs` (0 when nothing was scored).
    pub mean_logprob: f64,
    /// Mean of (this log-prob − the recorded sampling log-prob), when recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_log_ratio: Option<f64>,
    /// k3 estimate of KL(sampling policy ‖ this model): mean of `r − 1 − log r`,
    /// `r = exp(this − recorded)`, when sampling log-probs were recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kl_k3: Option<f64>,
}

/// The tokens of a trajectory as the policy saw them.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyTokens {
    /// Where they came from.
    pub source: TokenSource,
    /// Every token.
    pub token_ids: Vec<u32>,
    /// 1 on the policy's tokens.
    pub loss_mask: Vec<u8>,
    /// The sampling log-prob of each token (empty when not recorded).
    pub recorded_logprobs: Vec<f32>,
}

/// The tokens of a trajectory: from its token trace when it has one, else rendered by the
/// chat template with the tools in its `tools` field.
pub fn trajectory_tokens(model: &LanguageModel, trajectory: &Trajectory) -> Result<PolicyTokens> {
    if let Some(trace) = &trajectory.token_trace {
        trace.validate().map_err(|problem| {
            ModelError::Request(format!("trajectory {}: {problem}", trajectory.id))
        })?;
        return Ok(PolicyTokens {
            source: TokenSource::TokenTrace,
            token_ids: trace.token_ids.clone(),
            loss_mask: trace.loss_mask.clone(),
            recorded_logprobs: trace.logprobs.clone(),
        });
    }
    let tools = match trajectory.extra.get("tools") {
        Some(Value::Array(tools)) => tools.clone(),
        _ => Vec::new(),
    };
    let encoded = model.chat.encode(&trajectory.messages, &tools)?;
    Ok(PolicyTokens {
        source: TokenSource::ChatTemplate,
        token_ids: encoded.token_ids,
        loss_mask: encoded.loss_mask,
        recorded_logprobs: Vec::new(),
    })
}

/// Scores one trajectory's policy tokens at `temperature` (use the sampling temperature to
/// compare with recorded log-probs).
pub fn score_trajectory(
    model: &LanguageModel,
    trajectory: &Trajectory,
    temperature: f64,
) -> Result<TrajectoryScore> {
    let PolicyTokens {
        source,
        token_ids: ids,
        loss_mask: mask,
        recorded_logprobs: recorded,
    } = trajectory_tokens(model, trajectory)?;
    let positions: Vec<usize> = (1..ids.len()).filter(|&t| mask[t] == 1).collect();
    let logprobs = if positions.is_empty() {
        Vec::new()
    } else {
        let qwen = model.qwen()?;
        let batch = TokenBatch::pad(
            std::slice::from_ref(&ids),
            Padding::Right,
            0,
            model.device(),
        )?;
        let all: Vec<f32> = on_pool(|| next_token_log_probs(qwen, &batch, temperature))?
            .squeeze(0)?
            .to_dtype(candle_core::DType::F32)?
            .to_vec1()?;
        positions.iter().map(|&t| all[t - 1]).collect()
    };
    let mean = |values: &mut dyn Iterator<Item = f64>| {
        let (sum, count) = values.fold((0.0, 0usize), |(sum, count), value| {
            (sum + value, count + 1)
        });
        if count == 0 { 0.0 } else { sum / count as f64 }
    };
    let mean_logprob = mean(&mut logprobs.iter().map(|&x| f64::from(x)));
    let (mean_log_ratio, kl_k3) = if recorded.is_empty() || positions.is_empty() {
        (None, None)
    } else {
        let deltas: Vec<f64> = positions
            .iter()
            .zip(&logprobs)
            .map(|(&t, &new)| f64::from(new) - f64::from(recorded[t]))
            .collect();
        (
            Some(mean(&mut deltas.iter().copied())),
            Some(mean(
                &mut deltas.iter().map(|delta| delta.exp() - 1.0 - delta),
            )),
        )
    };
    Ok(TrajectoryScore {
        id: trajectory.id.to_string(),
        source,
        tokens: ids.len(),
        positions,
        logprobs,
        mean_logprob,
        mean_log_ratio,
        kl_k3,
    })
}
