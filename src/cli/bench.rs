//! `rollscope bench …`: measured figures for the store, the model, training, the TUI,
//! exports and the rollout loop.

use super::Cli;
use super::bench_export::{ExportBenchArgs, bench_export};
use super::bench_grpo::{BenchGrpoArgs, bench_grpo};
use super::bench_model::{BenchModelArgs, bench_model};
use super::bench_rollout::{BenchRolloutArgs, bench_rollout};
use super::bench_store::{StoreBenchArgs, bench_store};
use super::bench_train::{BenchTrainArgs, bench_train};
use super::bench_tui::{TuiBenchArgs, bench_tui};
use clap::Subcommand;

/// What to benchmark.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Import throughput, reopen + first page, an indexed query and peak memory on a
    /// generated store of 100k trajectories.
    Store(StoreBenchArgs),
    /// Greedy decoding tokens/s (batch 8 and batch 1), a training step and a GRPO step.
    Model(BenchModelArgs),
    /// The TUI on a large synthetic store: start-up, frame time, paging, memory.
    Tui(TuiBenchArgs),
    /// Exports of 100k stored trajectories (all, filtered, best of N, with traces): time and
    /// peak memory.
    Export(ExportBenchArgs),
    /// One GRPO update (reference and policy forward, loss, backward, AdamW) and one SFT
    /// step through the trainer.
    Train(BenchTrainArgs),
    /// One end-to-end GRPO step (generation, reward, reference, loss, backward, AdamW), with
    /// `--trl PYTHON` side by side with TRL's GRPOTrainer.
    Grpo(BenchGrpoArgs),
    /// The rollout loop's overlap of generation and tools: 64 rollouts × 4 turns ending in
    /// a 50 ms tool call, against generation alone and tools one at a time.
    Rollout(BenchRolloutArgs),
}

/// Runs a benchmark.
pub fn run(cli: &Cli, command: &BenchCommand) -> anyhow::Result<()> {
    match command {
        BenchCommand::Store(args) => bench_store(cli.json, args),
        BenchCommand::Model(args) => bench_model(cli, args),
        BenchCommand::Tui(args) => bench_tui(cli, args),
        BenchCommand::Export(args) => bench_export(cli.json, args),
        BenchCommand::Train(args) => bench_train(cli, args),
        BenchCommand::Grpo(args) => bench_grpo(cli, args),
        BenchCommand::Rollout(args) => bench_rollout(cli, args),
    }
}
