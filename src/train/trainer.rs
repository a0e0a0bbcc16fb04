//! The trainer: a policy model, what of it is trained (every weight, or LoRA adapters on a
//! frozen base), AdamW with its learning-rate schedule, and gradient clipping. SFT and GRPO
//! steps (`sft`, `grpo`) and checkpoints (`checkpoint`) are built on it.

use super::error::{Result, TrainError};
use super::lora::LoraAdapters;
use super::optim::{AdamW, AdamWConfig, clip_grad_norm};
use super::schedule::LrSchedule;
use crate::model::{LanguageModel, Qwen, on_pool};
use candle_core::Var;
use candle_core::backprop::GradStore;
use std::path::Path;

impl Default for TrainerConfig {
    fn default() -> Self {
        Self {
            learning_rate: 1e-5,
            schedule: LrSchedule::Constant {},
            max_grad_norm: 1.0,
            adamw: AdamWConfig::default(),
            lora: None,
            seed: 0,
        }
    }
}

impl TrainerConfig {
    /// Checks every setting, naming the first that cannot be used.
    pub fn validate(&self) -> Result<()> {
        if !(self.learning_rate.is_finite() && self.learning_rate >= 0.0) {
            return Err(TrainError::config(
                "learning_rate",
                format!("{} is not a rate; use e.g. 1e-5", self.learning_rate),
            ));
        }
        if self.max_grad_norm.is_nan() || self.max_grad_norm <= 0.0 {
            return Err(TrainError::config(
                "max_grad_norm",
                format!(
                    "{} must be positive (use a large number to leave gradients unclipped)",
                    self.max_grad_norm
                ),
            ));
        }
        let AdamWConfig {
            beta1, beta2, eps, ..
        } = self.adamw;
        if !((0.0..1.0).contains(&beta1) && (0.0..1.0).contains(&beta2) && eps > 0.0) {
            return Err(TrainError::config(
                "adamw",
                "betas must lie in [0, 1) and eps must be positive",
            ));
        }
        if let Some(lora) = &self.lora {
            lora.validate()?;
        }
        Ok(())
    }
}

/// What one optimizer step did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Applied {
    /// Global L2 norm of the gradients before clipping.
    pub grad_norm: f64,
    /// The learning rate the step used.
    pub learning_rate: f64,
}

/// A policy being trained, with its optimizer.
pub struct Trainer {
    model: LanguageModel,
    lora: Option<LoraAdapters>,
    optimizer: AdamW,
    trainable: Vec<Var>,
    config: TrainerConfig,
}

impl Trainer {
    /// A trainer for `model` (Qwen2 or Qwen3). With `config.lora`, fresh adapters (A
    /// random, B zero, seeded by `config.seed`) are attached to the model and only they are
    /// trained; otherwise every weight is.
    pub fn new(mut model: LanguageModel, config: TrainerConfig) -> Result<Self> {
        config.validate()?;
        model.qwen()?;
        let lora = match &config.lora {
            Some(lora_config) => {
                let adapters = LoraAdapters::new(&model, lora_config, config.seed)?;
                adapters.attach(&mut model)?;
                Some(adapters)
            }
            None => None,
        };
        let named = match &lora {
            Some(adapters) => adapters.named_parameters(),
            None => model.named_parameters(),
        };
        if named.is_empty() {
            return Err(TrainError::Input(
                "the model has no trainable parameters (was it loaded for inference only?)".into(),
            ));
        }
        let trainable = named.iter().map(|(_, var)| var.clone()).collect();
        let optimizer = AdamW::new(named, config.adamw)?;
        Ok(Self {
            model,
            lora,
            optimizer,
            trainable,
            config,
        })
    }

    /// The policy model: generate rollouts with `model().decoder()`, which sees every update
    /// (and the LoRA adapters when there are any).
    pub fn model(&self) -> &LanguageModel {
        &self.model
    }

    /// The network training runs through.
    pub fn policy(&self) -> Result<&Qwen> {
        Ok(self.model.qwen()?)
    }

    /// The LoRA adapters, when training adapters.
    pub fn lora(&self) -> Option<&LoraAdapters> {
        self.lora.as_ref()
    }

    /// The settings.
    pub fn config(&self) -> &TrainerConfig {
        &self.config
    }

    /// Optimizer steps taken (each GRPO iteration and each SFT step is one).
    pub fn steps(&self) -> u64 {
        self.optimizer.steps()
    }

    /// The learning rate the next optimizer step will use.
    pub fn learning_rate(&self) -> f64 {
        self.config
            .schedule
            .rate(self.config.learning_rate, self.optimizer.steps())
    }

    /// The trained parameters by name (safetensors names, or PEFT names for adapters).
    pub fn trainable_parameters(&self) -> Vec<(String, Var)> {
        self.optimizer
            .params()
            .map(|(name, var)| (name.to_string(), var.clone()))
            .collect()
    }

    /// Writes the policy as an ordinary Hugging Face folder: the model as trained, or with
    /// LoRA adapters merged into the base weights.
    pub fn save_policy(&self, dir: &Path) -> Result<()> {
        match &self.lora {
            Some(adapters) => adapters.save_merged(&self.model, dir),
            None => Ok(self.model.save(dir)?),
        }
    }

    /// Gives the model back.
    pub fn into_model(self) -> LanguageModel {
        self.model
    }

    /// The frozen reference policy for the KL term, taken now: the base network without
    /// adapters (LoRA), or a copy of every weight. Take it before the first update of a run;
    /// a resumed full fine-tuning run loads it from the run's starting model instead
    /// (`grpo::reference_from_folder`).
    pub fn reference_policy(&self) -> Result<Qwen> {
        match &self.lora {
            Some(_) => Ok(LoraAdapters::base_network(&self.model)?),
            None => Ok(self.model.frozen_copy()?),
        }
    }

    /// Clips `grads` to `max_grad_norm` and takes one AdamW step at the scheduled rate.
    pub fn apply_gradients(&mut self, mut grads: GradStore) -> Result<Applied> {
        on_pool(|| -> Result<Applied> {
            let vars: Vec<&Var> = self.trainable.iter().collect();
            let grad_norm = clip_grad_norm(&mut grads, &vars, self.config.max_grad_norm)?;
            if !grad_norm.is_finite() {
                return Err(TrainError::NonFiniteGradient { grad_norm });
            }
            let learning_rate = self.learning_rate();
            self.optimizer.step(&grads, learning_rate)?;
            Ok(Applied {
                grad_norm,
                learning_rate,
            })
        })
    }

    /// Adds the trained parameters' gradients in `grads` to `sum` (the other tensors' are
    /// left behind), so micro-batches' gradients accumulate in the order they come.
    pub fn add_gradients(&self, sum: &mut GradStore, grads: &GradStore) -> Result<()> {
        for var in &self.trainable {
            if let Some(grad) = grads.get(var.as_tensor()) {
                let total = match sum.remove(var.as_tensor()) {
                    Some(earlier) => (earlier + grad)?,
                    None => grad.clone(),
                };
                sum.insert(var.as_tensor(), total);
            }
        }
        Ok(())
    }

    pub(super) fn optimizer(&self) -> &AdamW {
        &self.optimizer
    }

    pub(super) fn optimizer_mut(&mut self) -> &mut AdamW {
        &mut self.optimizer
    }
}

/// The trainer can move to the engine's worker thread.
const _: fn() = || {
    fn send<T: Send>() {}
    send::<Trainer>();
};
pub use crate::trajectory::TrainerConfig;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_toml_config_with_defaults_filled_in() {
        let config: TrainerConfig = toml::from_str(
            r#"
            learning_rate = 2e-5
            [schedule]
            kind = "warmup_linear"
            warmup_steps = 10
            total_steps = 100
            [lora]
            rank = 8
            alpha = 16
            target_modules = ["q_proj", "v_proj"]
            "#,
        )
        .unwrap();
        assert_eq!(config.max_grad_norm, 1.0);
        assert_eq!(config.adamw, AdamWConfig::default());
        assert_eq!(config.schedule.rate(2e-5, 9), 2e-5);
        let lora = config.lora.as_ref().unwrap();
        assert_eq!((lora.rank, lora.scale()), (8, 2.0));
        config.validate().unwrap();
        let bad = TrainerConfig {
            max_grad_norm: 0.0,
            ..config
        };
        assert!(
            bad.validate()
                .unwrap_err()
                .to_string()
                .contains("max_grad_norm")
        );
    }
}
