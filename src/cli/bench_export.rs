//! `rollscope bench export`: exports from a store of 100k synthetic trajectories — everything,
//! a filtered set, a best-of-N selection, and our own format with token traces — each timed,
//! with the peak memory of the export alone.

use super::bench_store::peak_memory_bytes;
use super::output;
use crate::curate::{ExportRequest, SelectionRules, export_selection};
use crate::engine::demo;
use crate::formats::{ExportOptions, Format};
use crate::store::{Filter, Outcome, Store};
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `rollscope bench export`.
#[derive(Debug, Args)]
pub struct ExportBenchArgs {
    /// Trajectories in the benchmark store.
    #[arg(long, default_value_t = 100_000)]
    pub count: u64,
    /// Tokens per token trace (every other trajectory has one).
    #[arg(long, default_value_t = 1000)]
    pub trace_tokens: usize,
    /// Keep the benchmark store here and reuse it next time [default: a temporary folder].
    #[arg(long, value_name = "DIR")]
    pub store_root: Option<PathBuf>,
}

/// One measured export.
struct Measured {
    name: &'static str,
    records: usize,
    bytes: u64,
    seconds: f64,
    peak: Option<u64>,
}

/// Resets the peak-memory mark so the next figure is what follows alone (Linux).
fn reset_peak_memory() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

fn open_store(root: &std::path::Path, args: &ExportBenchArgs) -> anyhow::Result<Store> {
    let dir = root.join(format!("bench-export-{}", args.count));
    let marker = dir.join("complete");
    let store = Store::open(&dir.join("store"))
        .with_context(|| format!("cannot open the benchmark store in {}", dir.display()))?;
    if marker.is_file() {
        return Ok(store);
    }
    anyhow::ensure!(
        store.trajectory_count() == 0,
        "{} holds an unfinished benchmark store; delete it and run again",
        dir.display()
    );
    eprintln!(
        "making the benchmark store: {} synthetic trajectories in {} …",
        args.count,
        dir.display()
    );
    let started = Instant::now();
    demo::fill(&store, &demo::spec(args.count, args.trace_tokens), |_| {})?;
    std::fs::write(&marker, format!("{}\n", args.count))?;
    eprintln!("made in {:.1} s", started.elapsed().as_secs_f64());
    Ok(store)
}

/// `rollscope bench export`.
pub fn bench_export(json: bool, args: &ExportBenchArgs) -> anyhow::Result<()> {
    let temporary = tempfile::tempdir().context("cannot create a temporary folder")?;
    let root = args
        .store_root
        .clone()
        .unwrap_or_else(|| temporary.path().to_path_buf());
    let store = open_store(&root, args)?;
    let out_dir = temporary.path().join("exports");
    let passing_of_run = Filter {
        run: Some(demo::DEMO_RUN.into()),
        outcome: Some(Outcome::Pass),
        ..Filter::default()
    };
    let cases: [(&'static str, Filter, Option<SelectionRules>, Format); 4] = [
        (
            "all → openai",
            Filter::default(),
            None,
            Format::OpenaiMessages,
        ),
        (
            "run & pass → openai",
            passing_of_run,
            None,
            Format::OpenaiMessages,
        ),
        (
            "best of 8 per task → openai",
            Filter::default(),
            Some(SelectionRules::default()),
            Format::OpenaiMessages,
        ),
        (
            "all → rollscope (traces)",
            Filter::default(),
            None,
            Format::Rollscope,
        ),
    ];
    let resettable = reset_peak_memory();
    let mut measured = Vec::new();
    for (index, (name, filter, selection, format)) in cases.into_iter().enumerate() {
        reset_peak_memory();
        let request = ExportRequest {
            filter,
            selection,
            format,
            options: ExportOptions::default(),
            path: out_dir.join(format!("export-{index}.jsonl")),
            session: None,
        };
        let started = Instant::now();
        let report = export_selection(&store, &request, &mut |_, _| {})?;
        measured.push(Measured {
            name,
            records: report.manifest.counts.written,
            bytes: report.manifest.bytes,
            seconds: started.elapsed().as_secs_f64(),
            peak: peak_memory_bytes(),
        });
        std::fs::remove_file(&report.path)?;
    }
    if json {
        let rows: Vec<_> = measured
            .iter()
            .map(|m| {
                serde_json::json!({"case": m.name, "records": m.records, "bytes": m.bytes, "seconds": m.seconds, "peak_memory_bytes": m.peak})
            })
            .collect();
        println!(
            "{}",
            serde_json::json!({"trajectories": store.trajectory_count(), "peak_is_per_case": resettable, "cases": rows})
        );
        return Ok(());
    }
    println!(
        "export benchmark · {} stored trajectories · {} threads decoding{}",
        store.trajectory_count(),
        crate::curate::export::decode_threads(),
        if resettable {
            ""
        } else {
            " · peak memory includes making the store"
        }
    );
    println!(
        "  {:<30} {:>9} {:>10} {:>9} {:>12}",
        "case", "records", "size", "time", "peak memory"
    );
    for m in &measured {
        println!(
            "  {:<30} {:>9} {:>10} {:>7.2} s {:>12}",
            m.name,
            m.records,
            output::bytes(m.bytes),
            m.seconds,
            m.peak.map_or_else(|| "–".into(), output::bytes)
        );
    }
    println!("  goal: 100k trajectories with filters in ≤ 2 s");
    Ok(())
}
