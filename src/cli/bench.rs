//! `rollscope bench …`: measured figures for the store, the model and the TUI.

use super::Cli;
use super::bench_model::{BenchModelArgs, bench_model};
use super::bench_store::{StoreBenchArgs, bench_store};
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
}

/// Runs a benchmark.
pub fn run(cli: &Cli, command: &BenchCommand) -> anyhow::Result<()> {
    match command {
        BenchCommand::Store(args) => bench_store(cli.json, args),
        BenchCommand::Model(args) => bench_model(cli, args),
        BenchCommand::Tui(args) => bench_tui(cli, args),
    }
}
