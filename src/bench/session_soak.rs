//! The session soak: three clients list, read and label for minutes on one session while a
//! real GRPO run, launched as the TUI launches one, trains in it in a process of its own; at the end every acknowledged label is
//! checked (the last note each client wrote on each trajectory), the run's rows and
//! rollouts are counted, and the server's memory is reported as it went.

use super::BenchProgress;
use super::quantiles::percentile;
use crate::engine::{ComputeDevice, JobLauncher, Start};
use crate::model::LoadOptions;
use crate::model::embedded::{EmbeddedSpec, init_folder};
use crate::run::{GRPO_PRESET, RunConfig, observed};
use crate::session::SessionPaths;
use crate::store::{Filter, Query, ServerLauncher, Store};
use crate::trajectory::{ErrorKind, Label, LabelStatus, RunRequest, RunStatus, TrajectoryId};
use anyhow::Context;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How many clients work on the session beside the training run.
const CLIENTS: usize = 3;

/// What the soak measured.
#[derive(Clone, Debug, Serialize)]
pub struct SoakReport {
    /// Minutes the clients worked.
    pub minutes: f64,
    /// Requests the clients made (list, show, label), all acknowledged.
    pub requests: usize,
    /// Label writes acknowledged.
    pub labels: usize,
    /// Acknowledged labels not found as written at the end.
    pub lost: usize,
    /// Request latency through the server, median milliseconds.
    pub p50_ms: f64,
    /// Request latency, 95th percentile in milliseconds.
    pub p95_ms: f64,
    /// GRPO steps the run made meanwhile.
    pub steps: u64,
    /// Whether its metrics rows are 0..=steps, each once.
    pub rows_complete: bool,
    /// Rollouts it stored.
    pub rollouts: usize,
    /// The server's largest resident memory seen, bytes.
    pub server_rss_max: u64,
    /// The server's resident memory at the end, bytes.
    pub server_rss_end: u64,
}

/// Runs the soak for `minutes` with `executable` as the server and the training process.
pub fn soak(
    executable: &Path,
    minutes: f64,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<SoakReport> {
    let root = tempfile::tempdir().context("cannot make a temporary folder")?;
    let paths = SessionPaths::new(root.path(), "soak")?;
    let spec = EmbeddedSpec {
        hidden_size: 64,
        num_hidden_layers: 2,
        intermediate_size: 128,
        ..EmbeddedSpec::default()
    };
    init_folder(&paths.base_model(), &spec, &LoadOptions::default())?;
    let launcher = ServerLauncher::rollscope(executable);
    let store = Store::connect(&paths.store_dir(), launcher.clone())?;
    let mut config = RunConfig::parse(GRPO_PRESET)?;
    config.grpo.steps = 100_000;
    config.grpo.tasks_per_step = 2;
    config.grpo.group = 4;
    config.tasks.eval_size = 4;
    config.eval.every = 0;
    let job = JobLauncher::rollscope(executable);
    let mut training = job
        .launch(&paths, &Start::New(Box::new(config)), ComputeDevice::Cpu)?
        .child;
    let until = Instant::now() + Duration::from_secs_f64(minutes * 60.0);
    progress(BenchProgress::Begin {
        label: format!("{CLIENTS} clients beside a training run"),
        total: Some((minutes * 60.0).ceil() as u64),
    });
    let done = AtomicBool::new(false);
    let (results, rss) = std::thread::scope(|scope| {
        let clients: Vec<_> = (0..CLIENTS)
            .map(|client| {
                let launcher = launcher.clone();
                let dir = paths.store_dir();
                let done = &done;
                scope.spawn(move || work(&dir, &launcher, client, done))
            })
            .collect();
        let mut rss = Vec::new();
        while Instant::now() < until {
            std::thread::sleep(Duration::from_secs(1));
            if let Some(pid) = store.server_pid() {
                rss.extend(super::process_memory(pid).0);
            }
            progress(BenchProgress::Advance(1));
        }
        done.store(true, Ordering::SeqCst);
        let results: Vec<_> = clients.into_iter().map(|client| client.join()).collect();
        (results, rss)
    });
    progress(BenchProgress::End);
    let run = store
        .runs()?
        .into_iter()
        .next()
        .context("the training process never started its run")?;
    store.request_run(&run.id, Some(RunRequest::Stop))?;
    let _ = training.wait();
    let run = observed(store.get_run(&run.id)?.context("the run went away")?);
    anyhow::ensure!(
        run.status == RunStatus::Stopped,
        "the run ended {} instead of stopping",
        run.status.as_str()
    );
    let mut latencies: Vec<f64> = Vec::new();
    let mut written = BTreeMap::new();
    let mut labels = 0;
    for result in results {
        let client = result.map_err(|_| anyhow::anyhow!("a client panicked"))??;
        labels += client.labels;
        latencies.extend(client.latencies);
        written.extend(client.last_notes);
    }
    let mut lost = 0;
    for ((id, author), note) in &written {
        let found = store.get(*id)?.is_some_and(|trajectory| {
            trajectory.labels.iter().any(|label| {
                label.author.as_deref() == Some(author) && label.note.as_deref() == Some(note)
            })
        });
        lost += usize::from(!found);
    }
    latencies.sort_by(f64::total_cmp);
    let steps: Vec<u64> = store.metrics(&run.id)?.iter().map(|row| row.step).collect();
    let rows_complete = steps == (0..=run.step).collect::<Vec<_>>();
    let rollouts = store.count(&Filter {
        run: Some(run.id.clone()),
        ..Filter::default()
    })?;
    let rss_end = store
        .server_pid()
        .and_then(|pid| super::process_memory(pid).0)
        .unwrap_or(0);
    Ok(SoakReport {
        minutes,
        requests: latencies.len(),
        labels,
        lost,
        p50_ms: percentile(&latencies, 0.50),
        p95_ms: percentile(&latencies, 0.95),
        steps: run.step,
        rows_complete,
        rollouts,
        server_rss_max: rss.iter().copied().max().unwrap_or(0),
        server_rss_end: rss_end,
    })
}

/// What one client did: each request's latency, its label writes, and the last note it
/// wrote on each trajectory (keyed by trajectory and author).
struct ClientWork {
    latencies: Vec<f64>,
    labels: usize,
    last_notes: BTreeMap<(TrajectoryId, String), String>,
}

/// One client: its own connection; lists the run's newest rollouts, reads one, labels it,
/// over and over until `done`.
fn work(
    dir: &Path,
    launcher: &ServerLauncher,
    client: usize,
    done: &AtomicBool,
) -> anyhow::Result<ClientWork> {
    let store = Store::connect(dir, launcher.clone())?;
    let author = format!("client-{client}");
    let mut work = ClientWork {
        latencies: Vec::new(),
        labels: 0,
        last_notes: BTreeMap::new(),
    };
    let mut n = 0usize;
    while !done.load(Ordering::SeqCst) {
        let start = Instant::now();
        let page = store.query(&Query {
            limit: Some(50),
            descending: true,
            ..Query::default()
        })?;
        work.latencies.push(start.elapsed().as_secs_f64() * 1000.0);
        let Some(row) = page.get((n * 7 + client) % page.len().max(1)) else {
            std::thread::sleep(Duration::from_millis(200));
            continue;
        };
        let start = Instant::now();
        store.get(row.id)?;
        work.latencies.push(start.elapsed().as_secs_f64() * 1000.0);
        let note = format!("{author} #{n}");
        let label = Label {
            step: 0,
            kind: ErrorKind::Reasoning,
            status: LabelStatus::Confirmed,
            note: Some(note.clone()),
            author: Some(author.clone()),
            time: crate::trajectory::now_millis(),
        };
        let start = Instant::now();
        store.add_label(row.id, label)?;
        work.latencies.push(start.elapsed().as_secs_f64() * 1000.0);
        work.labels += 1;
        work.last_notes.insert((row.id, author.clone()), note);
        n += 1;
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(work)
}
