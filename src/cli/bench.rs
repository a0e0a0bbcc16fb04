//! `rollscope bench …`: measured figures for the store, the model, training, the TUI,
//! exports and the rollout loop. The benchmarks live in `crate::bench`; this parses their
//! flags, shows their progress and prints their reports.

use super::bench_all::{self, AllBenchArgs};
use super::bench_args::{BenchGrpoArgs, BenchModelArgs, BenchRolloutArgs, BenchTrainArgs};
use super::bench_store_args::{
    ExportBenchArgs, FollowBenchArgs, ImportBenchArgs, SearchBenchArgs, SessionBenchArgs,
    StoreBenchArgs, TuiBenchArgs,
};
use super::bench_transcript::{self, TranscriptBenchArgs};
use super::bench_update::{self, PrefixBenchArgs, UpdateBenchArgs};
use super::{Cli, bench_print, model, run_progress};
use crate::bench::{self, BenchProgress};
use clap::Subcommand;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

/// What to benchmark.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Every figure of the performance table in one run: the store, the model's steps and
    /// decoding beside PyTorch / transformers (interleaved pairs), an end-to-end GRPO step
    /// beside TRL; give `--python` with torch, transformers and trl for the references.
    All(AllBenchArgs),
    /// Import throughput, reopen + first page, an indexed query and peak memory on a
    /// generated store of 100k trajectories.
    Store(StoreBenchArgs),
    /// The full-text index on a generated store: build time and size, query p50/p95 for a
    /// word, a phrase and a field query, its cost on import throughput, and the same rebuild
    /// in a session server (its time and the server's peak memory).
    Search(SearchBenchArgs),
    /// The session server against in-process calls (list, show, a label round trip, as
    /// ratios), write-to-visible latency from one client to another, the server's memory.
    Session(SessionBenchArgs),
    /// Import throughput and peak memory of a real `rollscope import`: a ~1 GiB Inspect
    /// `.eval` log of 100k samples, and 100k TRL completions rows as parquet.
    Import(ImportBenchArgs),
    /// `import --follow` as a real process on a folder being written: milliseconds from a
    /// JSONL line (or a parquet step file) written until another client's engine sees it.
    Follow(FollowBenchArgs),
    /// Greedy decoding tokens/s (batch 8, 1, 64 and the rollout shape), a training step and a GRPO step.
    Model(BenchModelArgs),
    /// The TUI on a large synthetic store: start-up, frame time, paging, memory.
    Tui(TuiBenchArgs),
    /// One generated agent trajectory of 130,000 messages (commands, code, edits, JSON,
    /// diffs) in the TUI's whole-conversation view: open, jump to the end, scroll, memory.
    Transcript(TranscriptBenchArgs),
    /// Exports of 100k stored trajectories (all, filtered, best of N, with traces): time and
    /// peak memory.
    Export(ExportBenchArgs),
    /// One GRPO update (reference and policy forward, loss, backward, AdamW) and one SFT
    /// step through the trainer.
    Train(BenchTrainArgs),
    /// One end-to-end GRPO step (generation, reward, reference, loss, backward, AdamW), with
    /// `--trl PYTHON` side by side with TRL's GRPOTrainer.
    Grpo(BenchGrpoArgs),
    /// A GRPO update on the rollouts a stored GRPO run trained on at one step: one padded
    /// batch against micro-batches cut by length (token budgets), as ratios.
    Update(UpdateBenchArgs),
    /// N sampled continuations of one prompt with the decoder's prefix cache (prefilled once)
    /// and without it, for several prompt lengths, as ratios.
    Prefix(PrefixBenchArgs),
    /// The rollout loop's overlap of generation and tools: 64 rollouts × 4 turns ending in
    /// a 50 ms tool call, against generation alone and tools one at a time.
    Rollout(BenchRolloutArgs),
}

/// The bars of a stage: its label, the bar, the count and the time so far.
const PLAIN_BARS: &str = "{msg} [{bar:30}] {pos}/{len} ({elapsed})";

/// Runs a benchmark and prints its report.
pub fn run(cli: &Cli, command: &BenchCommand) -> anyhow::Result<()> {
    let json = cli.json;
    match command {
        BenchCommand::All(args) => {
            let report = bench::bench_all(&args.options(), &mut progress_bars(PLAIN_BARS))?;
            print(json, &report, bench_all::print)
        }
        BenchCommand::Store(args) => {
            let mut progress = progress_bars("{msg:>12} [{bar:40}] {pos}/{len} ({per_sec}, {eta})");
            let report = bench::bench_store(&args.options(), &mut progress)?;
            print(json, &report, bench_print::store)
        }
        BenchCommand::Search(args) => {
            let report = bench::bench_search(&args.options()?, &mut progress_bars(PLAIN_BARS))?;
            print(json, &report, bench_print::search)
        }
        BenchCommand::Session(args) => {
            let report = bench::bench_session(&args.options()?, &mut progress_bars(PLAIN_BARS))?;
            print(json, &report, bench_print::session)
        }
        BenchCommand::Import(args) => {
            let report = bench::bench_import(&args.options()?, &mut progress_bars(PLAIN_BARS))?;
            print(json, &report, bench_print::import)
        }
        BenchCommand::Follow(args) => {
            let report = bench::bench_follow(&args.options()?, &mut progress_bars(PLAIN_BARS))?;
            print(json, &report, bench_print::follow)
        }
        BenchCommand::Model(args) => {
            let mut progress = progress_bars("{bar:30} {pos}/{len} runs {elapsed}");
            let report = bench::bench_model(&args.options(), &mut progress)?;
            print(json, &report, |report| bench_print::model(args, report))
        }
        BenchCommand::Tui(args) => {
            let report = bench::bench_tui(&args.options()?, &mut progress_bars(PLAIN_BARS))?;
            print(json, &report, bench_print::tui)
        }
        BenchCommand::Transcript(args) => {
            let report = bench::bench_transcript(&args.options())?;
            print(json, &report, bench_transcript::print)
        }
        BenchCommand::Export(args) => {
            let report = bench::bench_export(&args.options(), &mut progress_bars(PLAIN_BARS))?;
            print(json, &report, bench_print::export)
        }
        BenchCommand::Train(args) => {
            let report = bench::bench_train(&args.options(), &mut progress_bars(PLAIN_BARS))?;
            print(json, &report, |report| bench_print::train(args, report))
        }
        BenchCommand::Grpo(args) => {
            let mut progress = progress_display(|label, total| {
                run_progress::count_bar(total as usize, label, json)
            });
            let report = bench::bench_grpo(&args.options(), &mut progress)?;
            print(json, &report, |report| bench_print::grpo(args, report))
        }
        BenchCommand::Update(args) => {
            let store = cli.open_store()?;
            let report =
                bench::bench_update(&store, &args.options(), &mut progress_bars(PLAIN_BARS))?;
            print(json, &report, |report| bench_update::print(args, report))
        }
        BenchCommand::Prefix(args) => {
            let report = bench::bench_prefix(&args.options(), &mut progress_bars(PLAIN_BARS))?;
            print(json, &report, |report| {
                bench_update::print_prefix(args, report)
            })
        }
        BenchCommand::Rollout(args) => {
            let mut progress = progress_bars(PLAIN_BARS);
            let report = bench::bench_rollout(&args.options(), &mut progress)?;
            print(json, &report, |report| bench_print::rollout(args, report))
        }
    }
}

/// Prints `report` as one JSON line, or as text.
fn print<R: Serialize>(json: bool, report: &R, text: impl FnOnce(&R)) -> anyhow::Result<()> {
    if json {
        println!("{}", crate::text_json::inert_json(report)?);
    } else {
        text(report);
    }
    Ok(())
}

/// Progress shown with bars of the indicatif `template`.
fn progress_bars(template: &'static str) -> impl FnMut(BenchProgress) {
    progress_display(move |label, total| {
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.set_message(label.to_string());
        bar
    })
}

/// Progress on standard error: a bar made by `bar` for each stage of known length, a spinner
/// for each of unknown length, notes as lines.
fn progress_display(bar: impl Fn(&str, u64) -> ProgressBar) -> impl FnMut(BenchProgress) {
    let mut stages: Vec<ProgressBar> = Vec::new();
    move |event| match event {
        BenchProgress::Begin {
            label,
            total: Some(total),
        } => stages.push(bar(&label, total)),
        BenchProgress::Begin { label, total: None } => stages.push(model::spinner(label)),
        BenchProgress::Advance(units) => {
            if let Some(stage) = stages.last() {
                stage.inc(units);
            }
        }
        BenchProgress::Relabel(label) => {
            if let Some(stage) = stages.last() {
                stage.set_message(label);
            }
        }
        BenchProgress::End => {
            if let Some(stage) = stages.pop() {
                stage.finish_and_clear();
            }
        }
        BenchProgress::Note(line) => eprintln!("{line}"),
    }
}
