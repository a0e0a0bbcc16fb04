//! Training: SFT and GRPO steps, optimizer and schedule, LoRA adapters, checkpoints, metrics
//! rows.
//!
//! A GRPO run, in outline (the orchestrator's side):
//!
//! ```text
//! let mut trainer = Trainer::new(model, TrainerConfig { lora, schedule, .. })?;
//! let reference = trainer.reference_policy()?;          // once, before the first update
//! let mut metrics = MetricsWriter::open(&run_dir.join("metrics.jsonl"))?;
//! per step: roll out G samples per task with trainer.model().decoder() (it sees every update),
//!   advantages per group with advantage::group_advantages, then
//!   let samples = trajectories.map(|t| GrpoSample::from_trace(&t.trace, Advantage::Sample(a)));
//!   let update = trainer.grpo_update(&samples, Some(&reference), &grpo_config)?;
//!     (cut by length into micro-batches of grpo_config.micro_batch_tokens token slots,
//!     their gradients summed: the same step as one batch, less padding)
//!   let mut values = update.metric_values();            // + reward, timing, lengths …
//!   metrics.append(&metrics_row(run, step, values))?;
//!   every N steps: trainer.save_checkpoint(&checkpoint_dir(&checkpoints, step), &meta)?
//!     with meta.run_state holding the run's own state (RunState: its id, step, curriculum);
//! resume: Trainer::load_checkpoint(&latest_checkpoint(&checkpoints)?.unwrap(), &options)?,
//!   the reference from the run's starting model (`reference_from_folder`, or
//!   `reference_policy()` for LoRA, whose base never changes), and
//!   MetricsWriter::resume(path, the run step saved in state.run_state.step).
//! ```
//!
//! Each GRPO iteration and each SFT step is one optimizer step: a warmup-and-decay schedule
//! for a GRPO run spans `steps × iterations` optimizer steps. `GrpoConfig::temperature` must
//! be the temperature the behaviour log-probs were recorded at.

pub mod advantage;
mod bucket;
mod checkpoint;
mod error;
mod fused_adamw;
mod grpo;
mod grpo_batch;
mod lora;
pub mod loss;
mod metrics;
pub mod optim;
pub mod schedule;
mod sft;
mod trainer;

pub use bucket::{
    BatchLimits, length_batches, micro_batches, padding_share, random_batches, token_slots,
};
pub use checkpoint::{
    CheckpointMeta, CurriculumState, OPTIMIZER_FILE, RunState, TRAINER_STATE_FILE, TrainerState,
    checkpoint_dir, latest_checkpoint, read_trainer_state, write_atomically,
};
pub use error::{Result, TrainError};
pub use grpo::{
    DEFAULT_MICRO_BATCH_TOKENS, GrpoConfig, GrpoIteration, GrpoUpdate, PreparedGrpo,
    reference_from_folder,
};
pub use grpo_batch::{Advantage, GrpoBatch, GrpoBatches, GrpoSample};
pub use lora::{ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE, LORA_TARGETS, LoraAdapters, LoraConfig};
pub use metrics::{MetricsWriter, metrics_row};
pub use sft::{SftExample, SftFigures};
pub use trainer::{Applied, Trainer, TrainerConfig};
