//! `rollscope import --follow`: another stack's run read as it is written.

use super::Cli;
use crate::formats::Format;
use crate::ingest::{FollowPoll, Follower};
use crate::run::{RequestFollower, RunControl};
use crate::trajectory::RunStatus;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a wait between polls looks whether it should end.
const TICK: Duration = Duration::from_millis(100);

/// Follows `files` (in `format`, else detected), polling every `every` seconds, until Ctrl-C
/// (or a stop asked from the TUI or `rollscope runs stop`).
pub fn follow(
    cli: &Cli,
    files: &[PathBuf],
    format: Option<Format>,
    every: f64,
) -> anyhow::Result<()> {
    let store = Arc::new(cli.create_store()?);
    let mut follower = Follower::start(&store, files, format)?;
    let run = follower.run().to_string();
    let control = RunControl::new();
    let _requests = RequestFollower::start(Arc::clone(&store), &run, control.clone())?;
    stop_on_ctrl_c(control.clone())?;
    if !cli.json {
        let roots: Vec<String> = follower
            .roots()
            .iter()
            .map(|root| root.display().to_string())
            .collect();
        eprintln!(
            "following {} as run {run}, every {} s; Ctrl-C stops (the same command resumes)",
            roots.join(", "),
            every
        );
    }
    let mut paused = false;
    while !control.stopping() {
        if control.paused() != paused {
            paused = control.paused();
            let status = if paused {
                RunStatus::Paused
            } else {
                RunStatus::Running
            };
            store.set_run_progress(&run, status, None)?;
        }
        if !paused {
            let poll = follower.poll(&store)?;
            print_poll(cli, &run, &poll);
        }
        let next = Instant::now() + Duration::from_secs_f64(every);
        while Instant::now() < next && !control.stopping() {
            std::thread::sleep(TICK.min(next.saturating_duration_since(Instant::now())));
        }
    }
    follower.finish(&store, RunStatus::Stopped)?;
    if !cli.json {
        eprintln!("stopped following; run {run} keeps what was read");
    }
    Ok(())
}

/// Stops the follow on the first Ctrl-C.
fn stop_on_ctrl_c(control: RunControl) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    std::thread::Builder::new()
        .name("rollscope-ctrl-c".into())
        .spawn(move || {
            if runtime.block_on(tokio::signal::ctrl_c()).is_ok() {
                control.stop();
            }
        })?;
    Ok(())
}

/// Prints what a poll stored and found, when it stored or found anything.
fn print_poll(cli: &Cli, run: &str, poll: &FollowPoll) {
    for problem in &poll.problems {
        eprintln!("warning: {problem}");
    }
    for (path, why) in &poll.unreadable {
        eprintln!("warning: {}: {why}", path.display());
    }
    if !poll.stored() {
        return;
    }
    if cli.json {
        let line = serde_json::json!({
            "run": run,
            "trajectories": poll.trajectories,
            "tasks": poll.tasks,
            "metrics_rows": poll.metrics_rows,
            "problems": poll.problems.len(),
        });
        println!(
            "{}",
            crate::text_json::inert_json(&line).unwrap_or_default()
        );
        return;
    }
    println!(
        "{}  run {run}: +{} trajectories, +{} tasks, +{} metrics rows",
        chrono::Local::now().format("%H:%M:%S"),
        poll.trajectories,
        poll.tasks,
        poll.metrics_rows
    );
}
