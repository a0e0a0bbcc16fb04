//! The GRPO update on a prepared batch: reference log-probs once per batch, then μ
//! iterations of policy forward → log-probs at the sampling temperature → `grpo_objective`
//! → backward → gradient clipping → AdamW at the scheduled rate.

use super::error::{Result, TrainError};
use super::grpo_batch::GrpoBatch;
use super::loss::{ObjectiveConfig, ObjectiveInputs, ObjectiveStats, grpo_objective};
use super::trainer::Trainer;
use crate::model::{LanguageModel, LoadOptions, Qwen, next_token_log_probs, next_token_stats};
use candle_core::{DType, Tensor};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The settings of a GRPO update (missing keys take the defaults, unknown ones are refused).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GrpoConfig {
    /// β, clip ranges, loss aggregation.
    pub objective: ObjectiveConfig,
    /// μ: optimizer steps on each batch of rollouts.
    pub iterations: usize,
    /// The sampling temperature: log-probs are taken under `softmax(logits / T)`.
    pub temperature: f64,
}

impl Default for GrpoConfig {
    fn default() -> Self {
        Self {
            objective: ObjectiveConfig::default(),
            iterations: 1,
            temperature: 1.0,
        }
    }
}

/// A batch with what stays fixed over its iterations: the behaviour (old) log-probs and the
/// reference log-probs.
pub struct PreparedGrpo<'a> {
    batch: &'a GrpoBatch,
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

fn masked_mean(values: &Tensor, mask: &Tensor) -> Result<f64> {
    let total = (values * mask)?.sum_all()?.to_dtype(DType::F64)?;
    let count = mask.sum_all()?.to_dtype(DType::F64)?.to_scalar::<f64>()?;
    Ok(total.to_scalar::<f64>()? / count.max(1.0))
}

impl Trainer {
    /// Computes what stays fixed over a batch's iterations: reference log-probs (when
    /// β > 0; `reference` is then required) and, for samples without recorded behaviour
    /// log-probs, the current policy's.
    pub fn prepare_grpo<'a>(
        &self,
        batch: &'a GrpoBatch,
        reference: Option<&Qwen>,
        config: &GrpoConfig,
    ) -> Result<PreparedGrpo<'a>> {
        let temperature = config.temperature;
        let ref_logprobs = match (config.objective.beta != 0.0, reference) {
            (false, _) => None,
            (true, Some(reference)) => {
                Some(next_token_log_probs(reference, &batch.tokens, temperature)?.detach())
            }
            (true, None) => {
                return Err(TrainError::config(
                    "beta",
                    "β > 0 needs a reference policy (Trainer::reference_policy)",
                ));
            }
        };
        let dtype = match &ref_logprobs {
            Some(logprobs) => logprobs.dtype(),
            None => wide_dtype(self.model().dtype()),
        };
        let recorded = batch.behaviour.to_dtype(dtype)?;
        let old_logprobs = if batch.recorded.iter().all(|&r| r) {
            recorded
        } else {
            let current =
                next_token_log_probs(&self.policy()?.detached(), &batch.tokens, temperature)?;
            batch
                .recorded_mask()?
                .where_cond(&recorded, &current.to_dtype(dtype)?)?
        };
        Ok(PreparedGrpo {
            batch,
            old_logprobs,
            ref_logprobs,
        })
    }

    /// One iteration on a prepared batch: one forward, backward and optimizer step.
    pub fn grpo_iteration(
        &mut self,
        prepared: &PreparedGrpo<'_>,
        config: &GrpoConfig,
    ) -> Result<GrpoIteration> {
        let batch = prepared.batch;
        let stats = next_token_stats(self.policy()?, &batch.tokens, config.temperature)?;
        let dtype = stats.log_probs.dtype();
        let (mask, _, advantages) = batch.in_dtype(dtype)?;
        let old = prepared.old_logprobs.to_dtype(dtype)?;
        let reference = match &prepared.ref_logprobs {
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
            },
            &config.objective,
        )?;
        let entropy = masked_mean(&stats.entropy.detach(), &mask)?;
        let loss = objective.loss.to_dtype(DType::F64)?.to_scalar::<f64>()?;
        let applied = self.apply_gradients(objective.loss.backward()?)?;
        Ok(GrpoIteration {
            loss,
            grad_norm: applied.grad_norm,
            learning_rate: applied.learning_rate,
            objective: objective.stats,
            entropy,
        })
    }

    /// The whole update: prepares the batch, then runs `config.iterations` iterations.
    pub fn grpo_update(
        &mut self,
        batch: &GrpoBatch,
        reference: Option<&Qwen>,
        config: &GrpoConfig,
    ) -> Result<GrpoUpdate> {
        if config.iterations == 0 {
            return Err(TrainError::config(
                "iterations",
                "μ must be at least 1 optimizer step per batch",
            ));
        }
        let prepared = self.prepare_grpo(batch, reference, config)?;
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
