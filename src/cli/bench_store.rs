//! `rollscope bench store`: import throughput, reopen + first page, an indexed query and
//! peak memory on a generated store.

use super::output;
use crate::formats::ImportOptions;
use crate::ingest;
use crate::store::{Filter, Outcome, Query, Store};
use crate::synthetic::{self, SyntheticSpec};
use crate::trajectory::ErrorKind;
use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write;
use std::time::Instant;

/// Arguments of `rollscope bench store`.
#[derive(Debug, Args)]
pub struct StoreBenchArgs {
    /// Trajectories to generate (6–12 messages each; every other one with a token trace).
    #[arg(long, default_value_t = 100_000)]
    pub count: u64,
    /// Tokens per token trace.
    #[arg(long, default_value_t = 1000)]
    pub trace_tokens: usize,
}

/// Peak resident memory of this process so far, in bytes (Linux), if known.
pub fn peak_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn bar(len: u64, message: &'static str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{msg:>12} [{bar:40}] {pos}/{len} ({per_sec}, {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_message(message);
    bar
}

pub fn bench_store(json: bool, args: &StoreBenchArgs) -> anyhow::Result<()> {
    let dir = tempfile::tempdir().context("cannot create a temporary folder")?;
    let input = dir.path().join("trajectories.jsonl");
    let spec = SyntheticSpec {
        count: args.count,
        trace_tokens: args.trace_tokens,
        ..SyntheticSpec::default()
    };
    let progress = bar(args.count, "generating");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&input)?);
    for index in 0..args.count {
        serde_json::to_writer(&mut out, &synthetic::trajectory(index, &spec))?;
        out.write_all(b"\n")?;
        progress.inc(1);
    }
    out.flush()?;
    drop(out);
    progress.finish_and_clear();
    let input_bytes = std::fs::metadata(&input)?.len();

    let store_dir = dir.path().join("store");
    let progress = bar(args.count, "importing");
    let started = Instant::now();
    let store = Store::open(&store_dir)?;
    let report = ingest::import_into(&store, &input, ImportOptions::default(), &mut || {
        progress.inc(1)
    })?;
    let import_seconds = started.elapsed().as_secs_f64();
    progress.finish_and_clear();
    anyhow::ensure!(
        report.problems.is_empty(),
        "generated data had problems: {:?}",
        report.problems.first()
    );
    let size = store.size_on_disk()?;
    drop(store);

    let started = Instant::now();
    let store = Store::open(&store_dir)?;
    let page = store.query(&Query {
        limit: Some(50),
        ..Query::default()
    })?;
    let reopen_ms = started.elapsed().as_secs_f64() * 1e3;

    let filter = Filter {
        label: Some(ErrorKind::Calculation),
        outcome: Some(Outcome::Fail),
        ..Filter::default()
    };
    let started = Instant::now();
    let hits = store.query(&Query {
        filter,
        ..Query::default()
    })?;
    let query_ms = started.elapsed().as_secs_f64() * 1e3;
    let peak = peak_memory_bytes();
    let throughput = report.trajectories as f64 / import_seconds;

    if json {
        println!(
            "{}",
            serde_json::json!({
                "trajectories": report.trajectories,
                "input_bytes": input_bytes,
                "store_bytes": size,
                "import_seconds": import_seconds,
                "import_per_second": throughput,
                "reopen_first_page_ms": reopen_ms,
                "first_page_rows": page.len(),
                "label_outcome_query_ms": query_ms,
                "label_outcome_hits": hits.len(),
                "peak_memory_bytes": peak,
            })
        );
    } else {
        println!(
            "store benchmark · {} trajectories ({} JSONL, {} on disk)",
            report.trajectories,
            output::bytes(input_bytes),
            output::bytes(size)
        );
        println!(
            "  import                    {throughput:>10.0} trajectories/s  ({import_seconds:.2} s; goal ≥ 10,000/s)"
        );
        println!("  reopen + first page of 50 {reopen_ms:>10.1} ms              (goal ≤ 100 ms)");
        println!(
            "  label & outcome query     {query_ms:>10.1} ms              ({} hits; goal ≤ 50 ms)",
            hits.len()
        );
        if let Some(peak) = peak {
            println!(
                "  peak memory               {:>10}                 (goal ≤ 300 MB)",
                output::bytes(peak)
            );
        }
    }
    Ok(())
}
