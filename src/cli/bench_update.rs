//! `rollscope bench update` and `bench prefix`: their flags and their reports as text.

use super::bench_args::runtime;
use super::model::RuntimeArgs;
use crate::bench::{PrefixBenchOptions, PrefixBenchReport, UpdateBenchOptions, UpdateBenchReport};
use clap::Args;
use std::path::PathBuf;

/// Arguments of `rollscope bench update`.
#[derive(Debug, Args)]
pub struct UpdateBenchArgs {
    /// The GRPO run of this session whose stored rollouts are the samples.
    #[arg(long)]
    pub run: String,
    /// Its step (policy version) [default: the last with stored rollouts].
    #[arg(long)]
    pub step: Option<u64>,
    /// The model to update [default: the run's starting model].
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Micro-batch token budgets (samples × longest, padding included) compared with one
    /// padded batch.
    #[arg(long, value_delimiter = ',', default_values_t = [2048, 4096, 8192])]
    pub budgets: Vec<usize>,
    /// Interleaved rounds after one warm-up: each times every budget once.
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// KL weight β (0 skips the reference forward).
    #[arg(long, default_value_t = 0.04)]
    pub beta: f64,
    /// Device and dtype.
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

impl UpdateBenchArgs {
    /// The benchmark options these flags ask for.
    pub fn options(&self) -> UpdateBenchOptions {
        UpdateBenchOptions {
            run: self.run.clone(),
            step: self.step,
            model: self.model.clone(),
            budgets: self.budgets.clone(),
            rounds: self.rounds,
            beta: self.beta,
            runtime: runtime(&self.runtime),
        }
    }
}

/// The report as text: one line per budget.
pub fn print(args: &UpdateBenchArgs, report: &UpdateBenchReport) {
    let [shortest, median, longest] = report.lengths;
    println!(
        "GRPO update of {} step {}: {} samples of {shortest}–{longest} tokens (median \
         {median}), β = {}; medians of {} interleaved rounds",
        report.run, report.step, report.samples, args.beta, args.rounds
    );
    println!(
        "{:>14} {:>7} {:>12} {:>8} {:>10} {:>12} {:>10}",
        "micro-batch", "batches", "token slots", "padding", "update", "vs 1 batch", "loss Δ"
    );
    for figure in &report.budgets {
        let budget = if figure.budget == 0 {
            "one batch".to_string()
        } else {
            format!("{} tokens", figure.budget)
        };
        println!(
            "{budget:>14} {:>7} {:>12} {:>7.1}% {:>7.0} ms {:>11.2}× {:>10.1e}",
            figure.micro_batches,
            figure.token_slots,
            figure.padding * 100.0,
            figure.update_ms,
            figure.ratio,
            figure.loss_relative_error
        );
    }
}

/// Arguments of `rollscope bench prefix`.
#[derive(Debug, Args)]
pub struct PrefixBenchArgs {
    /// A model folder [default: the ~10M Qwen2 shape with random weights].
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Prompt lengths, tokens.
    #[arg(long, value_delimiter = ',', default_values_t = [150, 600])]
    pub prefixes: Vec<usize>,
    /// Continuations of each prompt (a fork's N, a GRPO group's G).
    #[arg(short = 'n', long, default_value_t = 8)]
    pub continuations: usize,
    /// Tokens sampled per continuation.
    #[arg(long, default_value_t = 32)]
    pub new_tokens: usize,
    /// Interleaved pairs per prompt length after one warm-up.
    #[arg(long, default_value_t = 5)]
    pub pairs: usize,
    /// Device and dtype.
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

impl PrefixBenchArgs {
    /// The benchmark options these flags ask for.
    pub fn options(&self) -> PrefixBenchOptions {
        PrefixBenchOptions {
            model: self.model.clone(),
            prefixes: self.prefixes.clone(),
            continuations: self.continuations,
            new_tokens: self.new_tokens,
            pairs: self.pairs,
            runtime: runtime(&self.runtime),
        }
    }
}

/// The prefix report as text: one line per prompt length.
pub fn print_prefix(args: &PrefixBenchArgs, report: &PrefixBenchReport) {
    println!(
        "{} continuations × {} sampled tokens of one prompt, with the prefix cache (prefilled \
         once) and without (each prefills): medians of {} interleaved pairs",
        report.continuations, report.new_tokens, args.pairs
    );
    for figure in &report.prefixes {
        println!(
            "  {:>5}-token prompt: {:.0} ms shared, {:.0} ms separate, {:.2}× ({})",
            figure.prefix,
            figure.shared_ms,
            figure.separate_ms,
            figure.ratio,
            if figure.same_tokens {
                "same tokens both ways"
            } else {
                "TOKENS DIFFER"
            }
        );
    }
}
