//! The search benchmark: building the full-text index over a generated store (time, size),
//! query latency (p50/p95) for a word, a phrase and a field query, what keeping the index in
//! step costs an import (interleaved pairs, the median of the on/off ratios), and how long
//! the first search after an import waits for the index to take it in; then, when given the
//! executable, the same rebuild in a session server, with the server's peak memory.

use super::BenchProgress;
use super::quantiles::{median, percentile};
use super::store::{StoreBenchOptions, write_synthetic};
use crate::formats::ImportOptions;
use crate::ingest;
use crate::store::{ServerLauncher, Store, StoreOptions};
use anyhow::Context;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The queries timed, by what they exercise.
pub const QUERIES: [(&str, &str); 4] = [
    ("word, rare", "241"),
    ("word, in every trajectory", "apples"),
    ("phrase", "\"Final Answer: 241\""),
    ("field and word", "role:tool 241"),
];

/// What the search benchmark generates and repeats.
#[derive(Clone, Debug, Serialize)]
pub struct SearchBenchOptions {
    /// The generated store (count, tokens per trace).
    pub store: StoreBenchOptions,
    /// Times each query runs.
    pub repeats: usize,
    /// Import pairs (indexing on, indexing off), in alternating order.
    pub pairs: usize,
    /// The `rollscope` executable that rebuilds the index in a session server (none: that
    /// figure is skipped).
    pub server: Option<PathBuf>,
}

/// The index rebuilt by a session server, as after an import or with `search/` deleted.
#[derive(Clone, Debug, Serialize)]
pub struct ServerRebuild {
    /// Seconds from asking for the rebuild to its commit.
    pub seconds: f64,
    /// The server's resident memory after it, bytes (Linux).
    pub rss_bytes: Option<u64>,
    /// The server's peak resident memory, start-up and rebuild, bytes (Linux).
    pub peak_bytes: Option<u64>,
    /// Trajectories the word in every trajectory finds after it (all, when it is whole).
    pub every_trajectory_hits: usize,
}

/// Latency of one query.
#[derive(Clone, Debug, Serialize)]
pub struct QueryFigure {
    /// What the query exercises.
    pub what: String,
    /// The query.
    pub query: String,
    /// Trajectories it finds.
    pub hits: usize,
    /// Median milliseconds.
    pub p50_ms: f64,
    /// 95th-percentile milliseconds.
    pub p95_ms: f64,
}

/// The figures of the search benchmark.
#[derive(Clone, Debug, Serialize)]
pub struct SearchBenchReport {
    /// Trajectories stored.
    pub trajectories: usize,
    /// Seconds to build the index from the stored records.
    pub build_seconds: f64,
    /// Seconds the first search after importing the whole store takes (the index replays
    /// the journal of the import, then answers).
    pub catch_up_seconds: f64,
    /// Bytes the index takes on disk.
    pub index_bytes: u64,
    /// Bytes the rest of the store takes on disk.
    pub store_bytes: u64,
    /// Query latencies.
    pub queries: Vec<QueryFigure>,
    /// Import seconds with indexing on, per pair.
    pub import_on_seconds: Vec<f64>,
    /// Import seconds with indexing off, per pair.
    pub import_off_seconds: Vec<f64>,
    /// Median of the per-pair ratios on/off: 1.15 is 15% slower with the index.
    pub import_cost_ratio: f64,
    /// The rebuild in a session server, when the executable was given.
    pub server_rebuild: Option<ServerRebuild>,
}

/// Generates a store of `options.store.count` trajectories and measures the index on it.
pub fn bench_search(
    options: &SearchBenchOptions,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<SearchBenchReport> {
    let dir = tempfile::tempdir().context("cannot create a temporary folder")?;
    let input = dir.path().join("trajectories.jsonl");
    write_synthetic(&input, &options.store, progress)?;
    let mut on = Vec::new();
    let mut off = Vec::new();
    for pair in 0..options.pairs.max(1) {
        let order = if pair % 2 == 0 {
            [true, false]
        } else {
            [false, true]
        };
        for indexed in order {
            let seconds = timed_import(&dir.path().join("pair"), &input, indexed, progress)?;
            if indexed { &mut on } else { &mut off }.push(seconds);
        }
    }
    let mut ratios: Vec<f64> = on.iter().zip(&off).map(|(on, off)| on / off).collect();
    let import_cost_ratio = median(&mut ratios);

    let store_dir = dir.path().join("store");
    timed_import(&store_dir, &input, true, progress)?;
    let store = Store::open(&store_dir)?;
    progress(BenchProgress::Note("first search after the import".into()));
    let started = Instant::now();
    store.search_text(QUERIES[0].1)?;
    let catch_up_seconds = started.elapsed().as_secs_f64();
    progress(BenchProgress::Note("building the index".into()));
    let started = Instant::now();
    store.rebuild_text_index()?;
    let build_seconds = started.elapsed().as_secs_f64();
    let index_bytes = store.text_index_size()?;
    let store_bytes = store.size_on_disk()? - index_bytes;
    let queries = QUERIES
        .iter()
        .map(|(what, query)| time_query(&store, what, query, options.repeats))
        .collect::<anyhow::Result<_>>()?;
    let trajectories = store.trajectory_count()?;
    drop(store);
    let server_rebuild = match &options.server {
        Some(executable) => Some(server_rebuild(&store_dir, executable, progress)?),
        None => None,
    };
    Ok(SearchBenchReport {
        trajectories,
        build_seconds,
        catch_up_seconds,
        index_bytes,
        store_bytes,
        queries,
        import_on_seconds: on,
        import_off_seconds: off,
        import_cost_ratio,
        server_rebuild,
    })
}

/// Starts a session server on the store and has it rebuild the index, timed, with its memory.
fn server_rebuild(
    store_dir: &Path,
    executable: &Path,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<ServerRebuild> {
    progress(BenchProgress::Note(
        "rebuilding the index in a session server".into(),
    ));
    let store = Store::connect(store_dir, ServerLauncher::rollscope(executable))?;
    let started = Instant::now();
    store.rebuild_text_index()?;
    let seconds = started.elapsed().as_secs_f64();
    let (rss_bytes, peak_bytes) = store
        .server_pid()
        .map_or((None, None), super::process_memory);
    Ok(ServerRebuild {
        seconds,
        rss_bytes,
        peak_bytes,
        every_trajectory_hits: store.search_text(QUERIES[1].1)?.len(),
    })
}

/// Imports the file into a fresh store at `dir`, with or without the index; seconds taken.
fn timed_import(
    dir: &Path,
    input: &Path,
    indexed: bool,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<f64> {
    let _ = std::fs::remove_dir_all(dir);
    let label = if indexed {
        "importing, index on"
    } else {
        "importing, index off"
    };
    progress(BenchProgress::Begin {
        label: label.into(),
        total: None,
    });
    let started = Instant::now();
    let store = Store::open_with(
        dir,
        StoreOptions {
            text_index: indexed,
            ..StoreOptions::default()
        },
    )?;
    let report = ingest::import_into(&store, input, ImportOptions::default(), &mut || {})?;
    drop(store);
    let seconds = started.elapsed().as_secs_f64();
    progress(BenchProgress::End);
    anyhow::ensure!(
        report.problems.is_empty(),
        "generated data had problems: {:?}",
        report.problems.first()
    );
    Ok(seconds)
}

fn time_query(
    store: &Store,
    what: &str,
    query: &str,
    repeats: usize,
) -> anyhow::Result<QueryFigure> {
    let mut hits = 0;
    let mut times = Vec::with_capacity(repeats);
    for _ in 0..repeats.max(1) {
        let started = Instant::now();
        hits = store.search_text(query)?.len();
        times.push(started.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    Ok(QueryFigure {
        what: what.into(),
        query: query.into(),
        hits,
        p50_ms: percentile(&times, 0.50),
        p95_ms: percentile(&times, 0.95),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_store_reports_every_figure() {
        let options = SearchBenchOptions {
            store: StoreBenchOptions {
                count: 60,
                trace_tokens: 20,
            },
            repeats: 3,
            pairs: 1,
            server: None,
        };
        let report = bench_search(&options, &mut |_| {}).unwrap();
        assert_eq!(report.trajectories, 60);
        assert!(report.index_bytes > 0 && report.store_bytes > 0);
        assert_eq!(report.queries.len(), QUERIES.len());
        assert_eq!(report.queries[1].hits, 60, "every trajectory has apples");
        assert!(report.queries.iter().all(|q| q.p50_ms <= q.p95_ms));
        assert_eq!(
            (
                report.import_on_seconds.len(),
                report.import_off_seconds.len()
            ),
            (1, 1)
        );
        assert!(report.import_cost_ratio > 0.0);
        assert!(report.server_rebuild.is_none());
    }
}
