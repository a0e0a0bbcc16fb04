//! Training: SFT and GRPO steps, optimizer and schedule, LoRA adapters, checkpoints, metrics
//! rows.
//!
//! Per GRPO step the orchestrator builds a [`GrpoBatch`] from the step's trajectories
//! (`GrpoSample::from_trace` with each sample's group advantage from
//! `advantage::group_advantages`), calls [`Trainer::grpo_update`] with the reference policy
//! taken once at the start of the run ([`Trainer::reference_policy`]), turns the
//! [`GrpoUpdate`] into metrics (`metric_values`, plus its own reward and timing figures) with
//! [`metrics_row`] and appends them with a [`MetricsWriter`]; every N steps it calls
//! [`Trainer::save_checkpoint`]. Rollouts use `trainer.model().decoder()`, which sees every
//! update.

pub mod advantage;
mod bucket;
mod checkpoint;
mod error;
mod grpo;
mod grpo_batch;
mod lora;
pub mod loss;
mod metrics;
pub mod optim;
pub mod schedule;
mod sft;
mod trainer;

pub use bucket::{BatchLimits, length_batches, padding_share};
pub use checkpoint::{
    CheckpointMeta, OPTIMIZER_FILE, TRAINER_STATE_FILE, TrainerState, checkpoint_dir, code_version,
    latest_checkpoint, read_trainer_state, write_atomically,
};
pub use error::{Result, TrainError};
pub use grpo::{GrpoConfig, GrpoIteration, GrpoUpdate, PreparedGrpo, reference_from_folder};
pub use grpo_batch::{Advantage, GrpoBatch, GrpoSample};
pub use lora::{ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE, LORA_TARGETS, LoraAdapters, LoraConfig};
pub use metrics::{MetricsWriter, metrics_row};
pub use sft::{SftExample, SftFigures};
pub use trainer::{Applied, Trainer, TrainerConfig};
