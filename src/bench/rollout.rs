//! The rollout benchmark: the overlap of generation and tools in the multi-turn loop. Every
//! rollout takes `turns` turns that each end in a call to a tool that sleeps `tool_ms`, then
//! one more turn that the turn limit cuts; the wall time of the run is compared with (a) the
//! same run with a tool that answers at once (generation alone) and (b) the same run with
//! `max_concurrent_tools = 1` (tools one at a time).
//!
//! Method: the embedded default model (random weights) would not write tool calls, so it
//! is first taught to, by SFT through the trainer on conversations of the benchmark's
//! prompts in which every assistant turn is `I wait for the clock.` and a `wait` call. The
//! runs then go through the code users run: `run_rollouts` over `LocalPolicy` (one decode
//! thread batching every ready episode, greedy) and a `ToolRegistry` holding the `wait`
//! tool; the model generates every token, the call included, and the loop parses, executes
//! and observes it. A run whose rollouts did not all make their `turns` calls is an error.

use super::BenchProgress;
pub use super::rollout_run::RolloutBenchOptions;
use super::rollout_run::{RunFigures, Variant, bench_tasks, run_once, taught_model};
use super::steps::{Timing, median};
use serde::Serialize;
use std::time::Instant;

/// Medians of one kind of run.
#[derive(Debug, Clone, Serialize)]
pub struct RolloutRunFigures {
    /// Wall seconds of the run.
    pub wall_s: f64,
    /// CPU seconds of the process during the run.
    pub cpu_s: f64,
    /// Seconds the decode thread spent stepping.
    pub decode_busy_s: f64,
    /// Seconds of the run the decode thread was not stepping.
    pub decode_idle_s: f64,
    /// Batched decode steps.
    pub decode_steps: f64,
    /// Tokens sampled.
    pub tokens: f64,
    /// Tool calls answered.
    pub tool_calls: f64,
}

/// The three kinds of run compared.
#[derive(Debug, Clone, Serialize)]
pub struct RolloutRuns {
    /// Tools overlapped with generation.
    pub overlapped: RolloutRunFigures,
    /// (a) generation only: a tool that answers at once.
    pub generation_only: RolloutRunFigures,
    /// (b) tools one at a time.
    pub serial_tools: RolloutRunFigures,
}

/// The figures of the rollout benchmark.
#[derive(Debug, Clone, Serialize)]
pub struct RolloutBenchReport {
    /// Rollouts per run.
    pub rollouts: usize,
    /// Turns per rollout that end in a tool call.
    pub turns: usize,
    /// How long the tool takes, in milliseconds.
    pub tool_ms: u64,
    /// Timed repetitions of each run.
    pub repeats: usize,
    /// SFT steps the model took to learn the turn.
    pub taught_in_steps: usize,
    /// Seconds the teaching took.
    pub taught_in_s: f64,
    /// Compute threads.
    pub threads: usize,
    /// The medians of each kind of run.
    pub runs: RolloutRuns,
    /// Seconds of one rollout's chain of tool calls.
    pub tool_chain_s: f64,
    /// Seconds of every tool call one after another.
    pub tool_serial_s: f64,
    /// The shortest the overlapped run could take: max(generation only, tool chain).
    pub bound_s: f64,
    /// The overlapped run over the bound.
    pub overlap_ratio: f64,
    /// The run with tools one at a time over the bound.
    pub serial_ratio: f64,
}

/// Teaches the embedded model the benchmark's turn, then times the overlapped run against
/// generation alone and tools one at a time.
pub fn bench_rollout(
    options: &RolloutBenchOptions,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<RolloutBenchReport> {
    anyhow::ensure!(
        options.rollouts > 0 && options.turns > 0 && options.repeats > 0 && options.teach_steps > 0,
        "counts must be positive"
    );
    let tasks = bench_tasks(options.rollouts)?;
    progress(BenchProgress::counted(
        "teaching the turn",
        options.teach_steps as u64,
    ));
    let teaching = Instant::now();
    let (model, taught_in) = taught_model(options, &tasks, progress)?;
    let taught_s = teaching.elapsed().as_secs_f64();
    progress(BenchProgress::End);
    progress(BenchProgress::counted(
        "rollouts",
        (3 * (options.repeats + 1) * options.rollouts) as u64,
    ));
    let mut runs: Vec<(Variant, RunFigures)> = Vec::new();
    for repeat in 0..=options.repeats {
        for variant in Variant::ALL {
            let figures = run_once(&model, &tasks, options, variant, progress)?;
            if repeat > 0 {
                runs.push((variant, figures));
            }
        }
    }
    progress(BenchProgress::End);
    Ok(summarize(options, &runs, (taught_in, taught_s)))
}

/// The medians of the runs of one variant.
fn medians(runs: &[(Variant, RunFigures)], variant: Variant) -> RolloutRunFigures {
    let of: Vec<RunFigures> = runs
        .iter()
        .filter(|(v, _)| *v == variant)
        .map(|(_, figures)| *figures)
        .collect();
    let timings: Vec<Timing> = of.iter().map(|f| f.timing).collect();
    let pick = |figure: fn(&RunFigures) -> f64| middle(of.iter().map(figure).collect());
    RolloutRunFigures {
        wall_s: median(&timings, |t| t.wall),
        cpu_s: median(&timings, |t| t.cpu),
        decode_busy_s: pick(|f| f.decode.busy_seconds),
        decode_idle_s: pick(|f| f.timing.wall - f.decode.busy_seconds),
        decode_steps: pick(|f| f.decode.steps as f64),
        tokens: pick(|f| f.decode.tokens as f64),
        tool_calls: pick(|f| f.tool_calls as f64),
    }
}

/// The medians of each variant and the comparison.
fn summarize(
    options: &RolloutBenchOptions,
    runs: &[(Variant, RunFigures)],
    (taught_in_steps, taught_in_s): (usize, f64),
) -> RolloutBenchReport {
    let runs = RolloutRuns {
        overlapped: medians(runs, Variant::Overlapped),
        generation_only: medians(runs, Variant::GenerationOnly),
        serial_tools: medians(runs, Variant::SerialTools),
    };
    let tool_s = options.tool_ms as f64 / 1e3;
    let tool_chain_s = options.turns as f64 * tool_s;
    let tool_serial_s = (options.rollouts * options.turns) as f64 * tool_s;
    let bound_s = runs.generation_only.wall_s.max(tool_chain_s);
    RolloutBenchReport {
        rollouts: options.rollouts,
        turns: options.turns,
        tool_ms: options.tool_ms,
        repeats: options.repeats,
        taught_in_steps,
        taught_in_s,
        threads: candle_core::utils::get_num_threads(),
        overlap_ratio: runs.overlapped.wall_s / bound_s,
        serial_ratio: runs.serial_tools.wall_s / bound_s,
        runs,
        tool_chain_s,
        tool_serial_s,
        bound_s,
    }
}

/// The median of some values.
fn middle(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}
