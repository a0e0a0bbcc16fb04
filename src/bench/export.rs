//! The export benchmark: exports from a store of synthetic trajectories — everything, a
//! filtered set, a best-of-N selection, and our own format with token traces — each timed,
//! with the peak memory of the export alone.

use super::{BenchProgress, peak_memory_bytes};
use crate::curate::{ExportRequest, SelectionRules, export_selection};
use crate::engine::demo;
use crate::formats::{ExportOptions, Format};
use crate::store::{Filter, Outcome, Store};
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What the export benchmark exports from.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExportBenchOptions {
    /// Trajectories in the benchmark store.
    pub count: u64,
    /// Tokens per token trace (every other trajectory has one).
    pub trace_tokens: usize,
    /// Keep the benchmark store here and reuse it next time [default: a temporary folder].
    pub store_root: Option<PathBuf>,
}

/// One measured export.
#[derive(Debug, Clone, Serialize)]
pub struct ExportCase {
    /// What was exported, to which format.
    pub case: &'static str,
    /// Records written.
    pub records: usize,
    /// Size of the file written.
    pub bytes: u64,
    /// Seconds the export took.
    pub seconds: f64,
    /// Peak resident memory after the export, if known.
    pub peak_memory_bytes: Option<u64>,
}

/// The figures of the export benchmark.
#[derive(Debug, Clone, Serialize)]
pub struct ExportBenchReport {
    /// Trajectories in the benchmark store.
    pub trajectories: usize,
    /// Whether each case's peak memory is its own (else it includes making the store).
    pub peak_is_per_case: bool,
    /// The exports, in order.
    pub cases: Vec<ExportCase>,
}

/// Resets the peak-memory mark so the next figure is what follows alone (Linux).
fn reset_peak_memory() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

fn open_store(
    root: &Path,
    options: &ExportBenchOptions,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<Store> {
    let dir = root.join(format!("bench-export-{}", options.count));
    let marker = dir.join("complete");
    let store = Store::open(&dir.join("store"))
        .with_context(|| format!("cannot open the benchmark store in {}", dir.display()))?;
    if marker.is_file() {
        return Ok(store);
    }
    anyhow::ensure!(
        store.trajectory_count()? == 0,
        "{} holds an unfinished benchmark store; delete it and run again",
        dir.display()
    );
    progress(BenchProgress::Note(format!(
        "making the benchmark store: {} synthetic trajectories in {} …",
        options.count,
        dir.display()
    )));
    let started = Instant::now();
    demo::fill(
        &store,
        &demo::spec(options.count, options.trace_tokens),
        |_| {},
    )?;
    std::fs::write(&marker, format!("{}\n", options.count))?;
    progress(BenchProgress::Note(format!(
        "made in {:.1} s",
        started.elapsed().as_secs_f64()
    )));
    Ok(store)
}

/// Makes (or reuses) the benchmark store and times four exports of it.
pub fn bench_export(
    options: &ExportBenchOptions,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<ExportBenchReport> {
    let temporary = tempfile::tempdir().context("cannot create a temporary folder")?;
    let root = options
        .store_root
        .clone()
        .unwrap_or_else(|| temporary.path().to_path_buf());
    let store = open_store(&root, options, progress)?;
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
    let peak_is_per_case = reset_peak_memory();
    let mut measured = Vec::new();
    for (index, (case, filter, selection, format)) in cases.into_iter().enumerate() {
        reset_peak_memory();
        let request = ExportRequest {
            filter,
            selection,
            format,
            options: ExportOptions::default(),
            path: out_dir.join(format!("export-{index}.jsonl")),
            session: None,
            repairs: Vec::new(),
        };
        let started = Instant::now();
        let report = export_selection(&store, &request, &mut |_, _| {})?;
        measured.push(ExportCase {
            case,
            records: report.manifest.counts.written,
            bytes: report.manifest.bytes,
            seconds: started.elapsed().as_secs_f64(),
            peak_memory_bytes: peak_memory_bytes(),
        });
        std::fs::remove_file(&report.path)?;
    }
    Ok(ExportBenchReport {
        trajectories: store.trajectory_count()?,
        peak_is_per_case,
        cases: measured,
    })
}
