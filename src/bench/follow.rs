//! The follow benchmark: a real `rollscope import --follow` process on a folder another
//! "stack" writes into (JSONL lines appended, TRL parquet files added), and an engine of a
//! third process's kind (a TUI's) on the same session: milliseconds from a write until that
//! engine says the store changed, p50/p95, for lines and for whole files.

use super::BenchProgress;
use super::quantiles::percentile;
use crate::engine::{Engine, EngineConfig, Update};
use crate::session::SessionPaths;
use crate::store::{Filter, ServerLauncher, Store};
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// What the follow benchmark writes.
#[derive(Clone, Debug, Serialize)]
pub struct FollowBenchOptions {
    /// Writes timed (each a line, or a file when `parquet` names one).
    pub samples: usize,
    /// Seconds between the follower's polls.
    pub every: f64,
    /// A TRL completions parquet file to copy in as new step files, else JSONL lines.
    pub parquet: Option<PathBuf>,
    /// The `rollscope` executable that follows (and serves the session).
    pub executable: PathBuf,
}

/// What it measured.
#[derive(Clone, Debug, Serialize)]
pub struct FollowBenchReport {
    /// The options.
    pub options: FollowBenchOptions,
    /// What each write was: `jsonl line` or `parquet file`.
    pub written: String,
    /// Write-to-visible latency, median milliseconds.
    pub p50_ms: f64,
    /// Write-to-visible latency, 95th percentile in milliseconds.
    pub p95_ms: f64,
    /// Records stored in the end (one per line, or the rows of every file).
    pub stored: usize,
}

/// One line of our JSONL as another stack might append it.
fn line(n: usize) -> String {
    let record = serde_json::json!({
        "messages": [
            {"role": "user", "content": format!("What is {n} + {n}?")},
            {"role": "assistant", "content": format!("Final Answer: {}", 2 * n)},
        ]
    });
    format!("{record}\n")
}

/// Runs the benchmark.
pub fn bench_follow(
    options: &FollowBenchOptions,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<FollowBenchReport> {
    let root = tempfile::tempdir()?;
    let followed = tempfile::tempdir()?;
    let paths = SessionPaths::new(root.path(), "bench-follow")?;
    let launcher = ServerLauncher::rollscope(&options.executable);
    let store = Store::connect(&paths.store_dir(), launcher.clone())?;
    let jsonl = followed.path().join("rollouts.jsonl");
    std::fs::write(&jsonl, b"")?;
    let mut follower = FollowerProcess::start(options, root.path(), followed.path())?;
    let (engine, updates) = Engine::spawn(std::sync::Arc::new(store), EngineConfig::default())?;
    let watcher = Store::connect(&paths.store_dir(), launcher)?;
    wait_for_run(&watcher)?;
    std::thread::sleep(Duration::from_millis(800));
    while updates.try_recv().is_ok() {}
    progress(BenchProgress::Begin {
        label: "write to visible".into(),
        total: Some(options.samples as u64),
    });
    let mut file = std::fs::OpenOptions::new().append(true).open(&jsonl)?;
    let mut latencies = Vec::new();
    for n in 0..options.samples {
        std::thread::sleep(Duration::from_millis(97 * (n as u64 % 11)));
        let start = Instant::now();
        match &options.parquet {
            Some(source) => {
                let name = format!("completions_{:05}.parquet", n + 1);
                let partial = followed.path().join(format!(".{name}.partial"));
                std::fs::copy(source, &partial)?;
                std::fs::rename(&partial, followed.path().join(name))?;
            }
            None => {
                file.write_all(line(n).as_bytes())?;
                file.flush()?;
            }
        }
        loop {
            match updates.recv_timeout(Duration::from_secs(20)) {
                Ok(Update::StoreChanged(changed)) if changed.trajectories => break,
                Ok(_) => {}
                Err(_) => anyhow::bail!("write {} did not show within 20 s", n + 1),
            }
        }
        latencies.push(start.elapsed().as_secs_f64() * 1000.0);
        progress(BenchProgress::Advance(1));
    }
    progress(BenchProgress::End);
    drop(engine);
    let stored = watcher.count(&Filter::default())?;
    follower.stop()?;
    latencies.sort_by(f64::total_cmp);
    Ok(FollowBenchReport {
        options: options.clone(),
        written: match options.parquet {
            Some(_) => "parquet file".into(),
            None => "jsonl line".into(),
        },
        p50_ms: percentile(&latencies, 0.50),
        p95_ms: percentile(&latencies, 0.95),
        stored,
    })
}

/// Waits until the follower has made its run.
fn wait_for_run(store: &Store) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(20);
    while store.runs()?.is_empty() {
        anyhow::ensure!(
            Instant::now() < deadline,
            "the follower made no run within 20 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// The `import --follow` process, stopped with SIGINT.
struct FollowerProcess(Child);

impl FollowerProcess {
    fn start(options: &FollowBenchOptions, root: &Path, folder: &Path) -> anyhow::Result<Self> {
        let child = Command::new(&options.executable)
            .arg("--sessions-dir")
            .arg(root)
            .args(["--session", "bench-follow", "import", "--follow"])
            .arg(folder)
            .args(["--every", &options.every.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        Ok(Self(child))
    }

    fn stop(&mut self) -> anyhow::Result<()> {
        // SAFETY: a plain signal to our own child, whose pid is still ours (not yet reaped).
        unsafe { libc::kill(self.0.id() as i32, libc::SIGINT) };
        self.0.wait()?;
        Ok(())
    }
}

impl Drop for FollowerProcess {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}
