//! `rollscope bench all`: its flags and its report as one table.

use super::bench_print;
use crate::bench::{AllBenchOptions, AllBenchReport, ModelBenchOptions, StoreBenchOptions};
use clap::Args;
use std::path::PathBuf;

/// Arguments of `rollscope bench all`.
#[derive(Debug, Args)]
pub struct AllBenchArgs {
    /// A Python with torch, transformers and trl (`pip install torch transformers trl`): runs
    /// `examples/bench_pytorch.py` beside each model benchmark run and TRL's GRPOTrainer
    /// beside the GRPO step [default: rollscope's figures only].
    #[arg(long)]
    pub python: Option<PathBuf>,
    /// Interleaved pairs of model benchmark runs (the reference first every other pair).
    #[arg(long, default_value_t = 3)]
    pub pairs: usize,
    /// Timed repetitions of every figure in each run (the median counts).
    #[arg(long, default_value_t = ModelBenchOptions::default().repeats)]
    pub repeats: usize,
    /// A model folder [default: the ~10M Qwen2 shape with random weights].
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Trajectories of the store benchmark (1000000 for the 1M figures).
    #[arg(long, default_value_t = StoreBenchOptions::default().count)]
    pub store_count: u64,
}

impl AllBenchArgs {
    /// The benchmark options these flags ask for.
    pub fn options(&self) -> AllBenchOptions {
        AllBenchOptions {
            python: self.python.clone(),
            pairs: self.pairs,
            repeats: self.repeats,
            model: self.model.clone(),
            store_count: self.store_count,
        }
    }
}

/// The report as text: the store's figures, then one line per compared figure.
pub fn print(report: &AllBenchReport) {
    bench_print::store(&report.store);
    println!();
    println!(
        "model, medians of {} interleaved {}; ratio: rollscope's time over the reference's \
         (below 1 is faster), median of the pairs' ratios",
        report.pairs,
        if report.pairs == 1 { "pair" } else { "pairs" }
    );
    println!(
        "  {:<72} {:>12} {:>12} {:>8}",
        "figure", "rollscope", "PyTorch", "ratio"
    );
    for row in &report.model {
        let reference = row
            .reference
            .map_or_else(|| "–".to_string(), |value| format!("{value:.0}"));
        let ratio = row
            .time_ratio
            .map_or_else(|| "–".to_string(), |ratio| format!("{ratio:.2}×"));
        println!(
            "  {:<72} {:>12} {:>12} {:>8}",
            format!("{} ({})", row.figure, row.unit),
            format!("{:.0}", row.rollscope),
            reference,
            ratio
        );
    }
    let grpo = &report.grpo;
    let trl = grpo
        .trl
        .as_ref()
        .and_then(|value| value["trl_grpo_step_ms"].as_f64());
    println!(
        "  {:<72} {:>12} {:>12} {:>8}",
        format!(
            "end-to-end GRPO step, 1 prompt × G = {} × {} tokens (ms; TRL)",
            grpo.group, grpo.completion
        ),
        format!("{:.0}", grpo.grpo_step_ms),
        trl.map_or_else(|| "–".to_string(), |ms| format!("{ms:.0}")),
        grpo.ratio_to_trl
            .map_or_else(|| "–".to_string(), |ratio| format!("{ratio:.2}×"))
    );
}
