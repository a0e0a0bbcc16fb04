//! The GRPO update: the samples cut by length into micro-batches (`GrpoBatches`), reference
//! log-probs once per micro-batch, then μ iterations of, per micro-batch, policy forward →
//! log-probs at the sampling temperature → `grpo_objective` normalised by the whole update →
//! backward → gradients summed; then gradient clipping → AdamW at the scheduled rate. The
//! output projection and the softmax run at the policy tokens only (`next_token_stats_at`).

use super::error::{Result, TrainError};
use super::grpo_batch::{GrpoBatch, GrpoBatches, GrpoSample};
use super::loss::{ObjectiveConfig, ObjectiveInputs, ObjectiveStats, grpo_objective};
use super::trainer::Trainer;
use crate::model::{
    LanguageModel, LoadOptions, Qwen, next_token_log_probs_at, next_token_stats_at, on_pool,
};
pub use crate::trajectory::GrpoConfig;
use candle_core::backprop::GradStore;
use candle_core::{DType, Tensor};
use std::path::Path;

impl Default for GrpoConfig {
    fn default() -> Self {
        Self {
            objective: ObjectiveConfig::default(),
            iterations: 1,
            temperature: 1.0,
            micro_batch_tokens: DEFAULT_MICRO_BATCH_TOKENS,
        }
    }
}

/// The default token budget of a micro-batch (see `GrpoConfig::micro_batch_tokens`).
pub const DEFAULT_MICRO_BATCH_TOKENS: usize = 4096;

/// An update's micro-batches with what stays fixed over its iterations: the behaviour (old)
/// log-probs and the reference log-probs of each.
pub struct PreparedGrpo<'a> {
    batches: &'a GrpoBatches,
    parts: Vec<FixedLogProbs>,
}

/// A micro-batch's behaviour and reference log-probs.
struct FixedLogProbs {
    old_logprobs: Tensor,
    ref_logprobs: Option<Tensor>,
}

/// Figures of one GRPO iteration (one optimizer step).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GrpoIteration {
    /// The loss that was back-propagated.
    pub loss: f64,
    /// Global gradient L2 norm before clipping.
    pub grad_norm: f64,
    /// The learning rate of the step.
    pub learning_rate: f64,
    /// Clip shares, mean KL and token count.
    pub objective: ObjectiveStats,
    /// Mean entropy of the policy at its sampled tokens (masked token mean).
    pub entropy: f64,
}

/// The iterations of one update.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GrpoUpdate {
    /// One entry per iteration, in order.
    pub iterations: Vec<GrpoIteration>,
}

/// A frozen reference policy read from a model folder (a resumed run's starting model).
pub fn reference_from_folder(dir: &Path, options: &LoadOptions) -> Result<Qwen> {
    let model = LanguageModel::load(dir, options)?;
    Ok(model.qwen()?.detached())
}

fn masked_sum(values: &Tensor, mask: &Tensor) -> Result<f64> {
    let total = (values * mask)?.sum_all()?.to_dtype(DType::F64)?;
    Ok(total.to_scalar::<f64>()?)
}

impl Trainer {
    /// Computes what stays fixed over an update's iterations, micro-batch by micro-batch:
    /// reference log-probs (when β > 0; `reference` is then required) and, for samples
    /// without recorded behaviour log-probs, the current policy's.
    pub fn prepare_grpo<'a>(
        &self,
        batches: &'a GrpoBatches,
        reference: Option<&Qwen>,
        config: &GrpoConfig,
    ) -> Result<PreparedGrpo<'a>> {
        on_pool(|| -> Result<PreparedGrpo<'a>> {
            if config.objective.beta != 0.0 && reference.is_none() {
                return Err(TrainError::config(
                    "beta",
                    "β > 0 needs a reference policy (Trainer::reference_policy)",
                ));
            }
            let parts = batches
                .micro
                .iter()
                .map(|batch| self.fixed_log_probs(batch, reference, config))
                .collect::<Result<Vec<_>>>()?;
            Ok(PreparedGrpo { batches, parts })
        })
    }

    fn fixed_log_probs(
        &self,
        batch: &GrpoBatch,
        reference: Option<&Qwen>,
        config: &GrpoConfig,
    ) -> Result<FixedLogProbs> {
        let temperature = config.temperature;
        let ref_logprobs = match reference.filter(|_| config.objective.beta != 0.0) {
            Some(reference) => {
                let columns = &batch.policy_columns;
                Some(
                    next_token_log_probs_at(reference, &batch.tokens, columns, temperature)?
                        .detach(),
                )
            }
            None => None,
        };
        let dtype = match &ref_logprobs {
            Some(logprobs) => logprobs.dtype(),
            None => wide_dtype(self.model().dtype()),
        };
        let recorded = batch.behaviour.to_dtype(dtype)?;
        let old_logprobs = if batch.recorded.iter().all(|&r| r) {
            recorded
        } else {
            let current = next_token_log_probs_at(
                &self.policy()?.detached(),
                &batch.tokens,
                &batch.policy_columns,
                temperature,
            )?;
            batch
                .recorded_mask()?
                .where_cond(&recorded, &current.to_dtype(dtype)?)?
        };
        Ok(FixedLogProbs {
            old_logprobs,
            ref_logprobs,
        })
    }

    /// The gradients of one iteration's loss, summed over the micro-batches in their order
    /// (trained parameters only), and the iteration's figures (no step taken: `grad_norm`
    /// and `learning_rate` are 0).
    pub fn grpo_gradients(
        &self,
        prepared: &PreparedGrpo<'_>,
        config: &GrpoConfig,
    ) -> Result<(GrpoIteration, GradStore)> {
        on_pool(|| -> Result<(GrpoIteration, GradStore)> {
            let totals = prepared.batches.totals;
            let mut sum = GradStore::default();
            let (mut loss, mut entropy, mut kl) = (0.0, 0.0, 0.0);
            let (mut low, mut high, mut region) = (0.0, 0.0, 0.0);
            for (batch, fixed) in prepared.batches.micro.iter().zip(&prepared.parts) {
                let stats = next_token_stats_at(
                    self.policy()?,
                    &batch.tokens,
                    &batch.policy_columns,
                    config.temperature,
                )?;
                let dtype = stats.log_probs.dtype();
                let (mask, _, advantages) = batch.in_dtype(dtype)?;
                let old = fixed.old_logprobs.to_dtype(dtype)?;
                let reference = match &fixed.ref_logprobs {
                    Some(logprobs) => Some(logprobs.to_dtype(dtype)?),
                    None => None,
                };
                let objective = grpo_objective(
                    &ObjectiveInputs {
                        logprobs: &stats.log_probs,
                        old_logprobs: &old,
                        ref_logprobs: reference.as_ref(),
                        mask: &mask,
                        advantages: &advantages,
                        totals,
                    },
                    &config.objective,
                )?;
                entropy += masked_sum(&stats.entropy.detach(), &mask)?;
                loss += objective.loss.to_dtype(DType::F64)?.to_scalar::<f64>()?;
                let part = objective.stats;
                kl += part.mean_kl * batch.len() as f64;
                low += part.clip_low * part.tokens;
                high += part.clip_high * part.tokens;
                region += part.clip_region * part.tokens;
                self.add_gradients(&mut sum, &objective.loss.backward()?)?;
            }
            let tokens = totals.tokens as f64;
            let share = |count: f64| if tokens > 0.0 { count / tokens } else { 0.0 };
            let iteration = GrpoIteration {
                loss,
                objective: ObjectiveStats {
                    clip_low: share(low),
                    clip_high: share(high),
                    clip_region: share(region),
                    mean_kl: kl / totals.samples.max(1) as f64,
                    tokens,
                },
                entropy: share(entropy),
                ..GrpoIteration::default()
            };
            Ok((iteration, sum))
        })
    }

    /// One iteration on a prepared update: the micro-batches' forwards and backwards, then
    /// one optimizer step.
    pub fn grpo_iteration(
        &mut self,
        prepared: &PreparedGrpo<'_>,
        config: &GrpoConfig,
    ) -> Result<GrpoIteration> {
        let (iteration, gradients) = self.grpo_gradients(prepared, config)?;
        let applied = self.apply_gradients(gradients)?;
        Ok(GrpoIteration {
            grad_norm: applied.grad_norm,
            learning_rate: applied.learning_rate,
            ..iteration
        })
    }

    /// The whole update: cuts `samples` into micro-batches (`config.micro_batch_tokens`),
    /// prepares them, then runs `config.iterations` iterations.
    pub fn grpo_update(
        &mut self,
        samples: &[GrpoSample],
        reference: Option<&Qwen>,
        config: &GrpoConfig,
    ) -> Result<GrpoUpdate> {
        if config.iterations == 0 {
            return Err(TrainError::config(
                "iterations",
                "μ must be at least 1 optimizer step per batch",
            ));
        }
        let batches = GrpoBatches::new(
            samples,
            self.pad_id(),
            self.model().device(),
            config.micro_batch_tokens,
        )?;
        let prepared = self.prepare_grpo(&batches, reference, config)?;
        let iterations = (0..config.iterations)
            .map(|_| self.grpo_iteration(&prepared, config))
            .collect::<Result<Vec<_>>>()?;
        Ok(GrpoUpdate { iterations })
    }
}

/// The dtype log-probs come out in for a model of `dtype`.
fn wide_dtype(dtype: DType) -> DType {
    match dtype {
        DType::F16 | DType::BF16 => DType::F32,
        other => other,
    }
}
