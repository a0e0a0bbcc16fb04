//! The train module against reference numbers and its own invariants: the GRPO fixture,
//! SFT that learns, checkpoints that resume exactly, LoRA adapters, metrics files, and
//! whole SFT and GRPO runs (killed and resumed), and runs that two processes train to the
//! same bits.

#[path = "train/async_runs.rs"]
mod async_runs;
#[path = "train/badcase_loop.rs"]
mod badcase_loop;
#[path = "train/checkpoints.rs"]
mod checkpoints;
#[path = "train/common.rs"]
mod common;
#[path = "train/goals.rs"]
mod goals;
#[path = "train/grpo.rs"]
mod grpo;
#[path = "train/grpo_fixture.rs"]
mod grpo_fixture;
#[path = "train/lora.rs"]
mod lora;
#[path = "train/metrics.rs"]
mod metrics;
#[path = "train/micro_batches.rs"]
mod micro_batches;
#[path = "train/reproducible.rs"]
mod reproducible;
#[path = "train/runs.rs"]
mod runs;
#[path = "train/sft.rs"]
mod sft;
