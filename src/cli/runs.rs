//! `rollscope runs`: what trains where (every run of the session, the process and machine
//! training it, its log), and `runs pause|resume|stop RUN` to steer one from any terminal.

use super::Cli;
use crate::run::{ask_run, observed};
use crate::trajectory::{RunInfo, RunRequest, RunStatus};
use clap::{Args, Subcommand};

/// `rollscope runs`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  rollscope runs                      every run: status, progress, the process training it
  rollscope runs stop grpo-0003       checkpoint and end after the current step
  rollscope runs pause grpo-0003      wait after the current step (`runs resume` goes on)")]
pub struct RunsArgs {
    /// Steer a run instead of listing them.
    #[command(subcommand)]
    pub action: Option<RunsAction>,
}

/// What to ask of a run.
#[derive(Debug, Subcommand)]
pub enum RunsAction {
    /// Pause a run after its current step, whichever process trains it.
    Pause {
        /// The run id, e.g. grpo-0003.
        run: String,
    },
    /// Let a paused run go on.
    Resume {
        /// The run id.
        run: String,
    },
    /// Stop a run after its current step, with a checkpoint (`train … --resume` continues).
    Stop {
        /// The run id.
        run: String,
    },
}

/// `rollscope runs …`.
pub fn runs(cli: &Cli, args: &RunsArgs) -> anyhow::Result<()> {
    let store = cli.open_store()?;
    let (run, request) = match &args.action {
        None => return list(cli, store.runs()?.into_iter().map(observed).collect()),
        Some(RunsAction::Pause { run }) => (run, RunRequest::Pause),
        Some(RunsAction::Resume { run }) => (run, RunRequest::Resume),
        Some(RunsAction::Stop { run }) => (run, RunRequest::Stop),
    };
    let info = ask_run(&store, run, request)?;
    let said = match request {
        RunRequest::Pause => "pauses after its current step",
        RunRequest::Resume => "goes on",
        RunRequest::Stop => info.kind.stop_words(),
    };
    println!("{run} {said} ({})", place(&info));
    Ok(())
}

fn list(cli: &Cli, runs: Vec<RunInfo>) -> anyhow::Result<()> {
    if cli.json {
        for run in &runs {
            println!("{}", crate::text_json::inert_json(run)?);
        }
        return Ok(());
    }
    if runs.is_empty() {
        println!(
            "no runs in session `{}` yet: `rollscope` starts the main job, `rollscope train \
             grpo --config examples/grpo-tiny.toml` a run of your own",
            cli.session
        );
        return Ok(());
    }
    println!(
        "{:<13} {:<7} {:<11} {:>11}  {:<16}  where",
        "run", "kind", "status", "step", "started"
    );
    for run in &runs {
        println!(
            "{:<13} {:<7} {:<11} {:>11}  {:<16}  {}",
            run.id,
            run.kind.as_str(),
            run.status.as_str(),
            format!("{}/{}", run.step, run.total_steps),
            crate::text::utc_minute(run.created_at),
            place(run)
        );
    }
    Ok(())
}

/// Where a run trains, in words: its process and log while it trains, what to do when its
/// process is gone.
fn place(run: &RunInfo) -> String {
    let Some(process) = &run.process else {
        return "-".into();
    };
    let log = process
        .log
        .as_ref()
        .map(|log| format!(" · log {log}"))
        .unwrap_or_default();
    match run.status {
        RunStatus::Running | RunStatus::Paused => {
            format!("process {} on {}{log}", process.pid, process.host)
        }
        RunStatus::Interrupted => format!(
            "process {} ended without finishing; `rollscope train {} --resume {}` continues it",
            process.pid,
            run.kind.as_str(),
            run.id
        ),
        _ => format!("ended{log}"),
    }
}
