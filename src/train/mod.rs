//! Training: SFT and GRPO steps, optimizer and schedule, checkpoints, metrics rows.

pub mod advantage;
mod fused_adamw;
pub mod loss;
pub mod optim;
pub mod schedule;
