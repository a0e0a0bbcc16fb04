//! The GRPO objective: token-level importance ratios against the behaviour policy, a
//! two-sided clip (clip-higher as DAPO), an optional k3 KL to a frozen reference, and the
//! loss aggregations TRL knows (`grpo`, `bnpo`, `dr_grpo`, `dapo`). Masked tokens
//! (observations, prompt, padding) never contribute.

pub use crate::trajectory::{LossAggregation, ObjectiveConfig};
use candle_core::{D, DType, Result, Tensor};

impl Default for ObjectiveConfig {
    fn default() -> Self {
        Self {
            beta: 0.04,
            epsilon_low: 0.2,
            epsilon_high: 0.2,
            aggregation: LossAggregation::Grpo,
            max_completion_length: 256,
        }
    }
}

/// The inputs of one loss evaluation, all `[samples, tokens]` except `advantages`.
pub struct ObjectiveInputs<'a> {
    /// Current policy log-probs of the completion tokens (carries the gradient).
    pub logprobs: &'a Tensor,
    /// Behaviour-policy log-probs recorded at sampling time.
    pub old_logprobs: &'a Tensor,
    /// Reference-policy log-probs, needed when β > 0.
    pub ref_logprobs: Option<&'a Tensor>,
    /// 1 on tokens the policy generated, 0 elsewhere (f32).
    pub mask: &'a Tensor,
    /// `[samples, 1]` per-sample or `[samples, tokens]` per-token advantages (f32).
    pub advantages: &'a Tensor,
    /// The counts of the whole update this batch is part of (its own for a single batch).
    pub totals: UpdateTotals,
}

/// The counts a micro-batch's loss is normalised by: those of the whole update, so the
/// micro-batches' losses (and gradients) sum to the loss of the update as one batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UpdateTotals {
    /// Samples of the update.
    pub samples: usize,
    /// Policy tokens (masked tokens) of the update.
    pub tokens: usize,
}

impl UpdateTotals {
    /// The totals of a single batch with loss mask `mask` (`[samples, tokens]`).
    pub fn of_mask(mask: &Tensor) -> Result<Self> {
        let tokens = mask.to_dtype(DType::F64)?.sum_all()?.to_scalar::<f64>()?;
        Ok(Self {
            samples: mask.dim(0)?,
            tokens: tokens.round() as usize,
        })
    }
}

/// Figures of one loss evaluation, with TRL's names in mind.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ObjectiveStats {
    /// Share of masked tokens clipped at 1 − ε_low with a negative advantage.
    pub clip_low: f64,
    /// Share of masked tokens clipped at 1 + ε_high with a positive advantage.
    pub clip_high: f64,
    /// Share of masked tokens where either clip was active.
    pub clip_region: f64,
    /// k3 KL to the reference: masked mean per sample, then mean (0 without reference).
    pub mean_kl: f64,
    /// Masked tokens in the batch.
    pub tokens: f64,
}

/// The loss (a scalar carrying the gradient) and its figures.
pub struct Objective {
    /// The loss to back-propagate.
    pub loss: Tensor,
    /// Its figures.
    pub stats: ObjectiveStats,
}

/// Evaluates the GRPO objective.
pub fn grpo_objective(inputs: &ObjectiveInputs<'_>, config: &ObjectiveConfig) -> Result<Objective> {
    let mask = inputs.mask;
    let advantages = inputs.advantages.broadcast_as(inputs.logprobs.shape())?;
    let log_ratio = (inputs.logprobs - inputs.old_logprobs)?;
    let ratio = log_ratio.exp()?;
    let clipped = ratio.clamp(1.0 - config.epsilon_low, 1.0 + config.epsilon_high)?;
    let unclipped_term = (&ratio * &advantages)?;
    let clipped_term = (&clipped * &advantages)?;
    let mut token_loss = unclipped_term.minimum(&clipped_term)?.neg()?;
    let mut kl_per_sample = None;
    if config.beta != 0.0 {
        let reference = inputs.ref_logprobs.ok_or_else(|| {
            candle_core::Error::Msg("β > 0 needs reference log-probs".to_string())
        })?;
        let delta = (reference - inputs.logprobs)?;
        let kl = ((delta.exp()? - &delta)? - 1.0)?;
        kl_per_sample = Some(masked_mean_per_row(&kl.detach(), mask)?);
        token_loss = (token_loss + (kl * config.beta)?)?;
    }
    let masked = (&token_loss * mask)?;
    let samples = inputs.totals.samples.max(1) as f64;
    let loss = match config.aggregation {
        LossAggregation::Grpo => {
            let per_sample = masked
                .sum(D::Minus1)?
                .div(&mask.sum(D::Minus1)?.clamp(1.0, f64::MAX)?)?;
            (per_sample.sum_all()? / samples)?
        }
        LossAggregation::Bnpo | LossAggregation::Dapo => {
            (masked.sum_all()? / inputs.totals.tokens.max(1) as f64)?
        }
        LossAggregation::DrGrpo => {
            (masked.sum_all()? / (samples * config.max_completion_length.max(1) as f64))?
        }
    };
    let stats = clip_stats(&ratio.detach(), &advantages, mask, config, kl_per_sample)?;
    Ok(Objective { loss, stats })
}

fn masked_mean_per_row(values: &Tensor, mask: &Tensor) -> Result<Tensor> {
    (values * mask)?
        .sum(D::Minus1)?
        .div(&mask.sum(D::Minus1)?.clamp(1.0, f64::MAX)?)
}

fn clip_stats(
    ratio: &Tensor,
    advantages: &Tensor,
    mask: &Tensor,
    config: &ObjectiveConfig,
    kl_per_sample: Option<Tensor>,
) -> Result<ObjectiveStats> {
    let ratio = ratio
        .to_dtype(DType::F64)?
        .flatten_all()?
        .to_vec1::<f64>()?;
    let advantages = advantages
        .to_dtype(DType::F64)?
        .flatten_all()?
        .to_vec1::<f64>()?;
    let mask = mask.to_dtype(DType::F64)?.flatten_all()?.to_vec1::<f64>()?;
    let (mut low, mut high, mut tokens) = (0.0, 0.0, 0.0);
    for ((ratio, advantage), weight) in ratio.iter().zip(&advantages).zip(&mask) {
        if *weight == 0.0 {
            continue;
        }
        tokens += weight;
        if *ratio < 1.0 - config.epsilon_low && *advantage < 0.0 {
            low += weight;
        }
        if *ratio > 1.0 + config.epsilon_high && *advantage > 0.0 {
            high += weight;
        }
    }
    let share = |count: f64| if tokens > 0.0 { count / tokens } else { 0.0 };
    let mean_kl = match kl_per_sample {
        Some(kl) => kl.to_dtype(DType::F64)?.mean_all()?.to_scalar::<f64>()?,
        None => 0.0,
    };
    Ok(ObjectiveStats {
        clip_low: share(low),
        clip_high: share(high),
        clip_region: share(low + high),
        mean_kl,
        tokens,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{Device, Var};

    /// The objective written out in plain f64 for a two-sample batch, as TRL defines it.
    fn reference_loss(
        logp: &[[f64; 3]; 2],
        old: &[[f64; 3]; 2],
        reference: &[[f64; 3]; 2],
        mask: &[[f64; 3]; 2],
        adv: [f64; 2],
        beta: f64,
    ) -> f64 {
        let mut total = 0.0;
        for s in 0..2 {
            let (mut sum, mut count) = (0.0, 0.0);
            for t in 0..3 {
                let ratio = (logp[s][t] - old[s][t]).exp();
                let clipped = ratio.clamp(0.8, 1.28);
                let policy = -(ratio * adv[s]).min(clipped * adv[s]);
                let delta = reference[s][t] - logp[s][t];
                let kl = delta.exp() - delta - 1.0;
                sum += mask[s][t] * (policy + beta * kl);
                count += mask[s][t];
            }
            total += sum / count;
        }
        total / 2.0
    }

    #[test]
    fn matches_the_written_out_formula_and_its_gradient_flows() {
        let device = Device::Cpu;
        let logp = [[-1.0, -0.5, -2.0], [-0.3, -1.5, -0.9]];
        let old = [[-1.4, -0.5, -1.0], [-0.6, -1.0, -0.9]];
        let reference = [[-1.1, -0.6, -1.8], [-0.2, -1.2, -1.0]];
        let mask = [[1.0, 0.0, 1.0], [1.0, 1.0, 1.0]];
        let adv = [0.7, -1.2];
        let tensor = |rows: &[[f64; 3]; 2]| {
            Tensor::new(rows, &device)
                .unwrap()
                .to_dtype(DType::F32)
                .unwrap()
        };
        let var = Var::from_tensor(&tensor(&logp)).unwrap();
        let config = ObjectiveConfig {
            beta: 0.04,
            epsilon_low: 0.2,
            epsilon_high: 0.28,
            ..ObjectiveConfig::default()
        };
        let advantages = Tensor::new(&[[0.7f32], [-1.2]], &device).unwrap();
        let (old_t, ref_t, mask_t) = (tensor(&old), tensor(&reference), tensor(&mask));
        let objective = grpo_objective(
            &ObjectiveInputs {
                logprobs: var.as_tensor(),
                old_logprobs: &old_t,
                ref_logprobs: Some(&ref_t),
                mask: &mask_t,
                advantages: &advantages,
                totals: UpdateTotals {
                    samples: 2,
                    tokens: 5,
                },
            },
            &config,
        )
        .unwrap();
        let got = objective.loss.to_scalar::<f32>().unwrap() as f64;
        let want = reference_loss(&logp, &old, &reference, &mask, adv, 0.04);
        assert!((got - want).abs() < 1e-6, "{got} vs {want}");
        let grads = objective.loss.backward().unwrap();
        let grad = grads
            .get(var.as_tensor())
            .unwrap()
            .to_vec2::<f32>()
            .unwrap();
        assert_eq!(grad[0][1], 0.0, "masked tokens get no gradient");
        let h = 1e-5;
        let mut bumped = logp;
        bumped[1][0] += h;
        let numeric = (reference_loss(&bumped, &old, &reference, &mask, adv, 0.04) - want) / h;
        assert!(
            (grad[1][0] as f64 - numeric).abs() < 1e-3,
            "{} vs {numeric}",
            grad[1][0]
        );
        // Of the 5 masked tokens, sample 0 token 0 (ratio e^0.4, A > 0) is clipped high and
        // sample 1 token 1 (ratio e^-0.5, A < 0) is clipped low.
        assert!(
            (objective.stats.clip_high - 0.2).abs() < 1e-9,
            "{:?}",
            objective.stats
        );
        assert!(
            (objective.stats.clip_low - 0.2).abs() < 1e-9,
            "{:?}",
            objective.stats
        );
        assert!(
            (objective.stats.clip_region - 0.4).abs() < 1e-9,
            "{:?}",
            objective.stats
        );
        assert_eq!(objective.stats.tokens, 5.0);
    }
}
