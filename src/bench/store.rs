//! The store benchmark: import throughput, reopen + first page, an indexed query and peak
//! memory on a generated store.

use super::{BenchProgress, peak_memory_bytes};
use crate::formats::ImportOptions;
use crate::ingest;
use crate::store::{Filter, Outcome, Query, Store};
use crate::synthetic::{self, SyntheticSpec};
use crate::trajectory::ErrorKind;
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::time::Instant;

/// What the store benchmark generates.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StoreBenchOptions {
    /// Trajectories to generate (6–12 messages each; every other one with a token trace).
    pub count: u64,
    /// Tokens per token trace.
    pub trace_tokens: usize,
}

/// 100k trajectories, every other one with a trace of 1,000 tokens.
impl Default for StoreBenchOptions {
    fn default() -> Self {
        Self {
            count: 100_000,
            trace_tokens: 1_000,
        }
    }
}

/// The figures of the store benchmark.
#[derive(Debug, Clone, Serialize)]
pub struct StoreBenchReport {
    /// Trajectories imported.
    pub trajectories: usize,
    /// Size of the generated JSONL file.
    pub input_bytes: u64,
    /// Size of the store on disk after the import.
    pub store_bytes: u64,
    /// Seconds the import took.
    pub import_seconds: f64,
    /// Trajectories imported per second.
    pub import_per_second: f64,
    /// Milliseconds to close the store after the import (sled's checkpoint, which a session
    /// server takes when it exits, so that the next open need not replay the import).
    pub close_ms: f64,
    /// Milliseconds to reopen the store and read its first page of 50.
    pub reopen_first_page_ms: f64,
    /// Rows of that first page.
    pub first_page_rows: usize,
    /// Milliseconds of the label & outcome query (every hit's summary).
    pub label_outcome_query_ms: f64,
    /// Milliseconds of the same filter's listing (the hits' ids, as the TUI lists them).
    pub label_outcome_listing_ms: f64,
    /// Trajectories the label & outcome query found.
    pub label_outcome_hits: usize,
    /// Peak resident memory of the process, if known.
    pub peak_memory_bytes: Option<u64>,
}

/// Generates `options.count` synthetic trajectories, imports them into a temporary store and
/// times the import, a reopen with its first page, and a label & outcome query.
pub fn bench_store(
    options: &StoreBenchOptions,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<StoreBenchReport> {
    let dir = tempfile::tempdir().context("cannot create a temporary folder")?;
    let input = dir.path().join("trajectories.jsonl");
    let input_bytes = write_synthetic(&input, options, progress)?;

    let store_dir = dir.path().join("store");
    progress(BenchProgress::counted("importing", options.count));
    let started = Instant::now();
    let store = Store::open(&store_dir)?;
    let report = ingest::import_into(&store, &input, ImportOptions::default(), &mut || {
        progress(BenchProgress::Advance(1))
    })?;
    let import_seconds = started.elapsed().as_secs_f64();
    progress(BenchProgress::End);
    anyhow::ensure!(
        report.problems.is_empty(),
        "generated data had problems: {:?}",
        report.problems.first()
    );
    let store_bytes = store.size_on_disk()?;
    let started = Instant::now();
    store.close()?;
    let close_ms = started.elapsed().as_secs_f64() * 1e3;

    let started = Instant::now();
    let store = Store::open(&store_dir)?;
    let page = store.query(&Query {
        limit: Some(50),
        ..Query::default()
    })?;
    let reopen_first_page_ms = started.elapsed().as_secs_f64() * 1e3;

    let filter = Filter {
        label: Some(ErrorKind::Calculation),
        outcome: Some(Outcome::Fail),
        ..Filter::default()
    };
    let query = Query {
        filter,
        ..Query::default()
    };
    let started = Instant::now();
    let listed = store.listed_ids(&query)?;
    let label_outcome_listing_ms = started.elapsed().as_secs_f64() * 1e3;
    let started = Instant::now();
    let hits = store.query(&query)?;
    let label_outcome_query_ms = started.elapsed().as_secs_f64() * 1e3;
    anyhow::ensure!(
        listed.ids.len() == hits.len(),
        "the listing found {} trajectories, the query {}",
        listed.ids.len(),
        hits.len()
    );
    let peak_memory_bytes = peak_memory_bytes();
    Ok(StoreBenchReport {
        trajectories: report.trajectories,
        input_bytes,
        store_bytes,
        import_seconds,
        import_per_second: report.trajectories as f64 / import_seconds,
        close_ms,
        reopen_first_page_ms,
        first_page_rows: page.len(),
        label_outcome_query_ms,
        label_outcome_listing_ms,
        label_outcome_hits: hits.len(),
        peak_memory_bytes,
    })
}

/// Writes the benchmark's synthetic trajectories as JSONL; returns the file's size.
pub(super) fn write_synthetic(
    path: &std::path::Path,
    options: &StoreBenchOptions,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<u64> {
    let spec = SyntheticSpec {
        count: options.count,
        trace_tokens: options.trace_tokens,
        ..SyntheticSpec::default()
    };
    progress(BenchProgress::counted("generating", options.count));
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    for index in 0..options.count {
        serde_json::to_writer(&mut out, &synthetic::trajectory(index, &spec))?;
        out.write_all(b"\n")?;
        progress(BenchProgress::Advance(1));
    }
    out.flush()?;
    drop(out);
    progress(BenchProgress::End);
    Ok(std::fs::metadata(path)?.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_store_reports_its_figures_and_progress() {
        let mut events = Vec::new();
        let options = StoreBenchOptions {
            count: 40,
            trace_tokens: 50,
        };
        let report = bench_store(&options, &mut |event| events.push(event)).unwrap();
        assert_eq!(report.trajectories, 40);
        assert_eq!(report.first_page_rows, 40);
        assert!(report.store_bytes > 0 && report.input_bytes > 0);
        assert_eq!(
            events.first(),
            Some(&BenchProgress::counted("generating", 40))
        );
        assert!(events.contains(&BenchProgress::counted("importing", 40)));
        let begun = events
            .iter()
            .filter(|event| matches!(event, BenchProgress::Begin { .. }))
            .count();
        let ended = events
            .iter()
            .filter(|event| **event == BenchProgress::End)
            .count();
        assert_eq!((begun, ended), (2, 2));
        let json = serde_json::to_value(&report).unwrap();
        let keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "trajectories",
                "input_bytes",
                "store_bytes",
                "import_seconds",
                "import_per_second",
                "close_ms",
                "reopen_first_page_ms",
                "first_page_rows",
                "label_outcome_query_ms",
                "label_outcome_listing_ms",
                "label_outcome_hits",
                "peak_memory_bytes",
            ]
        );
    }
}
