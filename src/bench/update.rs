//! The update benchmark: a GRPO update on the samples a stored GRPO run trained on at one
//! step (their real, ragged lengths), as one padded batch and cut by length into
//! micro-batches of several token budgets, in interleaved rounds; medians and the median of
//! the per-round ratios to the one-batch update.

use super::quantiles;
use super::steps::{Timing, median, timed};
use super::{BenchProgress, Runtime, load_model, one_update};
use crate::store::{Filter, Query, SortKey, Store};
use crate::train::{
    Advantage, GrpoConfig, GrpoSample, Trainer, TrainerConfig, micro_batches, padding_share,
    token_slots,
};
use anyhow::Context;
use serde::Serialize;
use std::path::PathBuf;

/// Which stored update the benchmark repeats, and the budgets it compares.
#[derive(Clone, Debug)]
pub struct UpdateBenchOptions {
    /// The GRPO run.
    pub run: String,
    /// Its step (policy version) whose rollouts are the samples [default: the last stored].
    pub step: Option<u64>,
    /// The model to update [default: the run's starting model].
    pub model: Option<PathBuf>,
    /// Micro-batch token budgets to compare with one batch (0).
    pub budgets: Vec<usize>,
    /// Interleaved rounds (each times every budget once, in a rotating order).
    pub rounds: usize,
    /// KL weight β (0 skips the reference forward).
    pub beta: f64,
    /// Device and dtype.
    pub runtime: Runtime,
}

/// One budget's figures.
#[derive(Debug, Clone, Serialize)]
pub struct BudgetFigure {
    /// Token slots per micro-batch (0: one batch).
    pub budget: usize,
    /// Micro-batches the samples make.
    pub micro_batches: usize,
    /// Token slots computed, padding included.
    pub token_slots: usize,
    /// Share of those slots that are padding.
    pub padding: f64,
    /// Median wall milliseconds of an update (reference forward and one iteration).
    pub update_ms: f64,
    /// Median over rounds of this budget's time over the one-batch time.
    pub ratio: f64,
    /// The update's loss, relative to the one-batch loss (the first round's).
    pub loss_relative_error: f64,
}

/// The figures of the update benchmark.
#[derive(Debug, Clone, Serialize)]
pub struct UpdateBenchReport {
    /// The run and step the samples come from.
    pub run: String,
    /// The step.
    pub step: u64,
    /// Samples (rollouts with a non-zero advantage and a token trace).
    pub samples: usize,
    /// Shortest, median and longest sample, tokens.
    pub lengths: [usize; 3],
    /// Per budget, one batch first.
    pub budgets: Vec<BudgetFigure>,
}

/// Times the stored step's update at every budget.
pub fn bench_update(
    store: &Store,
    options: &UpdateBenchOptions,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<UpdateBenchReport> {
    anyhow::ensure!(options.rounds > 0, "--rounds must be at least 1");
    let info = store.get_run(&options.run)?.with_context(|| {
        format!(
            "no run {} in this session (`rollscope runs` lists them)",
            options.run
        )
    })?;
    let step = match options.step {
        Some(step) => step,
        None => last_step(store, &options.run)?,
    };
    let samples = stored_samples(store, &options.run, step)?;
    let model_dir = options
        .model
        .clone()
        .unwrap_or_else(|| PathBuf::from(&info.model));
    let model = load_model(&model_dir, &options.runtime, progress)?;
    // A zero rate keeps the weights, so every update computes the same loss.
    let frozen = TrainerConfig {
        learning_rate: 0.0,
        ..TrainerConfig::default()
    };
    let mut trainer = Trainer::new(model, frozen)?;
    let reference = trainer.reference_policy()?;
    let mut budgets = vec![0];
    budgets.extend(options.budgets.iter().copied().filter(|&b| b != 0));
    let lengths: Vec<usize> = samples.iter().map(|s| s.token_ids.len()).collect();
    let mut times: Vec<Vec<Timing>> = vec![Vec::new(); budgets.len()];
    let mut losses = vec![0.0; budgets.len()];
    progress(BenchProgress::counted(
        "updates",
        (options.rounds * budgets.len()) as u64,
    ));
    for round in 0..=options.rounds {
        for k in 0..budgets.len() {
            let slot = (k + round) % budgets.len();
            let config = GrpoConfig {
                micro_batch_tokens: budgets[slot],
                ..one_update(options.beta)
            };
            let mut loss = 0.0;
            let timing = timed(|| {
                let update = trainer.grpo_update(&samples, Some(&reference), &config)?;
                loss = update.iterations[0].loss;
                Ok(())
            })?;
            if round == 0 {
                losses[slot] = loss;
            } else {
                times[slot].push(timing);
                progress(BenchProgress::Advance(1));
            }
        }
    }
    progress(BenchProgress::End);
    let figures = budgets
        .iter()
        .enumerate()
        .map(|(k, &budget)| {
            let parts = micro_batches(&lengths, budget);
            let mut ratios: Vec<f64> = times[k]
                .iter()
                .zip(&times[0])
                .map(|(t, one)| t.wall / one.wall.max(1e-12))
                .collect();
            BudgetFigure {
                budget,
                micro_batches: parts.len(),
                token_slots: token_slots(&lengths, &parts),
                padding: padding_share(&lengths, &parts),
                update_ms: median(&times[k], |t| t.wall) * 1e3,
                ratio: quantiles::median(&mut ratios),
                loss_relative_error: (losses[k] - losses[0]).abs() / losses[0].abs().max(1e-12),
            }
        })
        .collect();
    let mut sorted = lengths.clone();
    sorted.sort_unstable();
    Ok(UpdateBenchReport {
        run: options.run.clone(),
        step,
        samples: samples.len(),
        lengths: [
            sorted[0],
            sorted[sorted.len() / 2],
            sorted[sorted.len() - 1],
        ],
        budgets: figures,
    })
}

/// The newest step of `run` with stored rollouts.
fn last_step(store: &Store, run: &str) -> anyhow::Result<u64> {
    let newest = store.query(&Query {
        filter: Filter {
            run: Some(run.to_string()),
            ..Filter::default()
        },
        sort: SortKey::Step,
        descending: true,
        limit: Some(1),
        ..Query::default()
    })?;
    newest
        .first()
        .and_then(|summary| summary.step)
        .with_context(|| format!("run {run} has no stored rollouts"))
}

/// The samples the run trained on at `step`: its rollouts with a token trace and a non-zero
/// advantage, each with its advantage.
fn stored_samples(store: &Store, run: &str, step: u64) -> anyhow::Result<Vec<GrpoSample>> {
    let filter = Filter {
        run: Some(run.to_string()),
        step: Some(step),
        ..Filter::default()
    };
    let mut samples = Vec::new();
    for id in store.ids(&filter)? {
        let Some(trajectory) = store.get(id)? else {
            continue;
        };
        let (Some(trace), Some(advantage)) = (&trajectory.token_trace, trajectory.advantage) else {
            continue;
        };
        if advantage != 0.0 && trace.policy_tokens() > 0 {
            samples.push(GrpoSample::from_trace(trace, Advantage::Sample(advantage)));
        }
    }
    anyhow::ensure!(
        !samples.is_empty(),
        "run {run} step {step} has no rollouts with a token trace and a non-zero advantage"
    );
    Ok(samples)
}
