//! How a trainer optimises, as plain data: the `[trainer]` table of a run config and the
//! GRPO update's settings, recorded in run records and checkpoints. What they do is in
//! `train`.

use serde::{Deserialize, Serialize};

/// How the learning rate changes over a run's optimizer steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum LrSchedule {
    /// The base rate at every step (without fields, not a unit variant, so that a key
    /// beside `kind` is refused).
    Constant {},
    /// Linear warmup, then linear decay to zero at `total_steps` (`train::schedule::warmup_linear`).
    WarmupLinear {
        /// Steps of warmup.
        warmup_steps: u64,
        /// Steps of the whole run.
        total_steps: u64,
    },
}

/// AdamW hyper-parameters (the learning rate comes per step from the schedule).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AdamWConfig {
    /// First-moment decay.
    pub beta1: f64,
    /// Second-moment decay.
    pub beta2: f64,
    /// Added to the denominator.
    pub eps: f64,
    /// Decoupled weight decay.
    pub weight_decay: f64,
}

/// The shape of the adapters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoraConfig {
    /// Rank `r` of each update.
    pub rank: usize,
    /// `lora_alpha`: the update is scaled by `alpha / rank` (`alpha / √rank` with rsLoRA).
    pub alpha: f64,
    /// Projections that get an adapter, among `train::lora::LORA_TARGETS`.
    pub target_modules: Vec<String>,
    /// rsLoRA scaling.
    #[serde(default)]
    pub use_rslora: bool,
}

/// How token losses become the batch loss.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossAggregation {
    /// Mean over each sample's tokens, then over samples (original GRPO).
    #[default]
    Grpo,
    /// Mean over all tokens of the batch.
    Bnpo,
    /// Sum over tokens divided by samples × the maximum completion length (Dr. GRPO).
    DrGrpo,
    /// Mean over all tokens of the whole generation batch (DAPO); here the same as `bnpo`.
    Dapo,
}

/// The settings of the objective (missing keys take the defaults, unknown ones are refused).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ObjectiveConfig {
    /// KL weight; 0 skips the reference model.
    pub beta: f64,
    /// Lower clip range: ratios below 1 − ε_low stop improving a negative advantage.
    pub epsilon_low: f64,
    /// Upper clip range: ratios above 1 + ε_high stop improving a positive advantage.
    pub epsilon_high: f64,
    /// How token losses are aggregated.
    pub aggregation: LossAggregation,
    /// Completion length budget, the denominator of `dr_grpo`.
    pub max_completion_length: usize,
}

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
    /// Token slots (samples × longest, padding included) of one micro-batch: the update's
    /// samples are cut by length into micro-batches and their gradients summed, the loss
    /// normalised by the whole update, so a step equals the one-batch step; 0: one batch.
    pub micro_batch_tokens: usize,
}

/// How rewards are scaled within a group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AdvantageScale {
    /// (R − mean) / (std + ε), std with Bessel's correction (TRL's default).
    #[default]
    Unbiased,
    /// (R − mean) / (std + ε), population std.
    Biased,
    /// R − mean, no division (Dr. GRPO).
    None,
}

/// How a trainer optimises; recorded in every checkpoint (missing keys take the defaults,
/// unknown ones are refused).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrainerConfig {
    /// The base learning rate.
    pub learning_rate: f64,
    /// How the rate changes over optimizer steps.
    pub schedule: LrSchedule,
    /// Gradients are scaled to at most this global L2 norm before each step.
    pub max_grad_norm: f64,
    /// AdamW's moments, epsilon and weight decay.
    pub adamw: AdamWConfig,
    /// Train LoRA adapters on a frozen base instead of every weight.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lora: Option<LoraConfig>,
    /// Seed of the trainer's random choices (adapter initialisation, SFT batch order).
    pub seed: u64,
}
