//! The session-server benchmark: what going through the server costs against the same call
//! on a store of this process (interleaved pairs on two copies of one generated store, the
//! median of the ratios), how soon a write of one client reaches another client's engine
//! (p50/p95), and the server's memory; then, when asked, the soak (`session_soak`).

use super::BenchProgress;
use super::quantiles::{median, percentile};
use crate::engine::{Engine, EngineConfig, Update};
use crate::store::{Filter, Query, ServerLauncher, Store};
use crate::synthetic::{self, SyntheticSpec};
use crate::trajectory::{ErrorKind, Label, LabelStatus, TrajectoryId};
use anyhow::Context;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What the session benchmark generates and repeats.
#[derive(Clone, Debug, Serialize)]
pub struct SessionBenchOptions {
    /// Trajectories in the generated store.
    pub count: u64,
    /// Interleaved pairs (in-process, through the server) per operation.
    pub pairs: usize,
    /// Writes timed from one client to another's engine.
    pub latency_samples: usize,
    /// The `rollscope` executable that serves the session (`rollscope session-server`).
    pub executable: PathBuf,
    /// Minutes of the soak (three clients beside a training run); 0 skips it.
    pub soak_minutes: f64,
}

/// One operation, in-process and through the server.
#[derive(Clone, Debug, Serialize)]
pub struct CallFigure {
    /// What the operation is.
    pub what: String,
    /// Median milliseconds in this process.
    pub local_ms: f64,
    /// Median milliseconds through the server.
    pub served_ms: f64,
    /// Median of the per-pair ratios, served over local.
    pub ratio: f64,
}

/// The figures of the session benchmark.
#[derive(Clone, Debug, Serialize)]
pub struct SessionBenchReport {
    /// Trajectories stored.
    pub trajectories: usize,
    /// The operations timed.
    pub calls: Vec<CallFigure>,
    /// Write-to-visible latency, median milliseconds.
    pub visible_p50_ms: f64,
    /// Write-to-visible latency, 95th percentile in milliseconds.
    pub visible_p95_ms: f64,
    /// The server's resident memory at the end, bytes (Linux).
    pub server_rss_bytes: Option<u64>,
    /// The server's peak resident memory, bytes (Linux).
    pub server_peak_bytes: Option<u64>,
    /// The soak's figures, when it ran.
    pub soak: Option<super::session_soak::SoakReport>,
}

/// Runs the benchmark in a temporary folder.
pub fn bench_session(
    options: &SessionBenchOptions,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<SessionBenchReport> {
    let root = tempfile::tempdir().context("cannot make a temporary folder")?;
    let local_dir = root.path().join("local").join("store");
    let served_dir = root.path().join("served").join("store");
    progress(BenchProgress::Note(format!(
        "generating {} trajectories, twice",
        options.count
    )));
    for dir in [&local_dir, &served_dir] {
        generate(dir, options.count)?;
    }
    let local = Store::open(&local_dir)?;
    let launcher = ServerLauncher::rollscope(&options.executable);
    let served = Store::connect(&served_dir, launcher.clone())?;
    let ids = local.ids(&Filter::default())?;
    anyhow::ensure!(!ids.is_empty(), "the generated store is empty");
    let first_page = Query {
        limit: Some(50),
        ..Query::default()
    };
    let mut calls = Vec::new();
    progress(BenchProgress::Begin {
        label: "pairs".into(),
        total: Some(3 * options.pairs as u64),
    });
    type Call<'a> = Box<dyn Fn(&Store, usize) -> anyhow::Result<()> + 'a>;
    let operations: [(&str, Call); 3] = [
        (
            "list, first page of 50",
            Box::new(|store, _| store.query(&first_page).map(drop).map_err(Into::into)),
        ),
        (
            "show (a trajectory with its trace)",
            Box::new(|store, n| store.get(ids[n % ids.len()]).map(drop).map_err(Into::into)),
        ),
        (
            "label round trip (durable)",
            Box::new(|store, n| label(store, ids[n % ids.len()], n)),
        ),
    ];
    for (what, call) in &operations {
        let (mut local_times, mut served_times, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for n in 0..options.pairs {
            let time = |store: &Store| -> anyhow::Result<f64> {
                let start = Instant::now();
                call(store, n)?;
                Ok(start.elapsed().as_secs_f64() * 1000.0)
            };
            let (a, b) = if n % 2 == 0 {
                let a = time(&local)?;
                (a, time(&served)?)
            } else {
                let b = time(&served)?;
                (time(&local)?, b)
            };
            local_times.push(a);
            served_times.push(b);
            ratios.push(b / a.max(1e-6));
            progress(BenchProgress::Advance(1));
        }
        calls.push(CallFigure {
            what: what.to_string(),
            local_ms: median(&mut local_times),
            served_ms: median(&mut served_times),
            ratio: median(&mut ratios),
        });
    }
    progress(BenchProgress::End);
    let mut latencies =
        visible_latencies(&served_dir, &launcher, &served, &ids, options, progress)?;
    latencies.sort_by(f64::total_cmp);
    let (server_rss_bytes, server_peak_bytes) = served
        .server_pid()
        .map_or((None, None), super::process_memory);
    let soak = match options.soak_minutes > 0.0 {
        true => Some(super::session_soak::soak(
            &options.executable,
            options.soak_minutes,
            progress,
        )?),
        false => None,
    };
    Ok(SessionBenchReport {
        soak,
        trajectories: ids.len(),
        calls,
        visible_p50_ms: percentile(&latencies, 0.50),
        visible_p95_ms: percentile(&latencies, 0.95),
        server_rss_bytes,
        server_peak_bytes,
    })
}

/// Writes the synthetic store into `dir`.
fn generate(dir: &Path, count: u64) -> anyhow::Result<()> {
    let store = Store::open(dir)?;
    let spec = SyntheticSpec {
        count,
        ..SyntheticSpec::default()
    };
    let all: Vec<_> = (0..count)
        .map(|index| synthetic::trajectory(index, &spec))
        .collect();
    for batch in all.chunks(500) {
        store.put_trajectories(batch)?;
    }
    Ok(())
}

/// Adds a label of the benchmark's author (the next call replaces it: same step and kind).
fn label(store: &Store, id: TrajectoryId, n: usize) -> anyhow::Result<()> {
    let label = Label {
        step: 0,
        kind: ErrorKind::Format,
        status: LabelStatus::Confirmed,
        note: Some(format!("bench {n}")),
        author: Some("bench".into()),
        time: n as i64,
    };
    store.add_label(id, label)?;
    Ok(())
}

/// Milliseconds from a label written by one client until another client's engine says the
/// store changed.
fn visible_latencies(
    dir: &Path,
    launcher: &ServerLauncher,
    writer: &Store,
    ids: &[TrajectoryId],
    options: &SessionBenchOptions,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<Vec<f64>> {
    let watcher = Store::connect(dir, launcher.clone())?;
    let (engine, updates) = Engine::spawn(std::sync::Arc::new(watcher), EngineConfig::default())?;
    std::thread::sleep(Duration::from_millis(600));
    while updates.try_recv().is_ok() {}
    progress(BenchProgress::Begin {
        label: "write to visible".into(),
        total: Some(options.latency_samples as u64),
    });
    let mut latencies = Vec::new();
    for n in 0..options.latency_samples {
        std::thread::sleep(Duration::from_millis(37 * (n as u64 % 7)));
        let start = Instant::now();
        label(writer, ids[n % ids.len()], n)?;
        loop {
            match updates.recv_timeout(Duration::from_secs(10)) {
                Ok(Update::StoreChanged(_)) => break,
                Ok(_) => {}
                Err(_) => anyhow::bail!("no change reached the other engine within 10 s"),
            }
        }
        latencies.push(start.elapsed().as_secs_f64() * 1000.0);
        progress(BenchProgress::Advance(1));
    }
    progress(BenchProgress::End);
    drop(engine);
    Ok(latencies)
}
