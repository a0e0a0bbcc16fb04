//! `rollscope watch`: follow a run's metrics file, ours or another stack's, read-only (the
//! following is `formats::MetricsFollower`'s), or a run of the session through its store
//! (`watch_run`); the printing is here.

use super::Cli;
use crate::figures::significant;
use crate::formats::{MetricsFollower, Problem};
use crate::trajectory::MetricsRow;
use crate::trajectory::metric;
use anyhow::Context;
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Metrics shown by default, in this order, when a file has them.
const PREFERRED: [&str; 16] = [
    metric::REWARD,
    metric::REWARD_STD,
    metric::SUCCESS_RATE,
    metric::KL,
    metric::LOSS,
    metric::GRAD_NORM,
    metric::ENTROPY,
    metric::CLIP_REGION,
    metric::MEAN_LENGTH,
    metric::LEARNING_RATE,
    metric::STEP_TIME,
    "critic/score/mean",
    metric::foreign::VERL_KL_LOSS,
    metric::foreign::VERL_GRAD_NORM,
    metric::foreign::VERL_ENTROPY,
    metric::foreign::VERL_RESPONSE_LENGTH,
];

/// Arguments of `rollscope watch`.
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// A metrics file (our metrics.jsonl, verl's file logger JSONL, TRL's trainer_state.json)
    /// or the id of a run of the session.
    pub target: String,
    /// Metrics to show, comma-separated (default: the usual ones the file has).
    #[arg(long, value_delimiter = ',')]
    pub metrics: Vec<String>,
    /// Print what is there and exit instead of following the file.
    #[arg(long)]
    pub once: bool,
    /// Seconds between checks for new rows.
    #[arg(long, default_value_t = 1.0)]
    pub every: f64,
}

/// `rollscope watch`.
pub fn watch(cli: &Cli, args: &WatchArgs) -> anyhow::Result<()> {
    let path = PathBuf::from(&args.target);
    if !path.is_file() {
        return watch_session_run(cli, args);
    }
    let run = path.parent().and_then(Path::file_name).map_or_else(
        || "external".to_string(),
        |name| name.to_string_lossy().into_owned(),
    );
    let mut follower = MetricsFollower::new(&path, &run);
    let initial = follower
        .poll()
        .with_context(|| format!("cannot read {}", path.display()))?;
    warn(&initial.problems);
    let columns = if args.metrics.is_empty() {
        default_columns(&initial.rows)
    } else {
        args.metrics.clone()
    };
    let printer = Printer {
        columns,
        json: cli.json,
    };
    if !cli.json {
        eprintln!(
            "{} · {} · {} rows{}",
            path.display(),
            follower
                .source()
                .map_or("no rows yet", |source| source.name()),
            initial.rows.len(),
            if args.once {
                ""
            } else {
                " · following (Ctrl-C to stop)"
            }
        );
        printer.header();
    }
    printer.rows(&initial.rows);
    if args.once {
        return Ok(());
    }
    loop {
        std::thread::sleep(Duration::from_secs_f64(args.every.max(0.05)));
        let update = match follower.poll() {
            Ok(update) => update,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
            Err(error) => {
                return Err(error).with_context(|| format!("cannot read {}", path.display()));
            }
        };
        if update.rewritten {
            eprintln!("{} was rewritten: its rows again", path.display());
        }
        warn(&update.problems);
        printer.rows(&update.rows);
    }
}

fn warn(problems: &[Problem]) {
    for problem in problems {
        eprintln!("warning: {problem}");
    }
}

/// `watch RUN` for a run of the session: its rows, rollouts and status from the store.
fn watch_session_run(cli: &Cli, args: &WatchArgs) -> anyhow::Result<()> {
    let store = cli.open_store()?;
    let run = &args.target;
    anyhow::ensure!(
        store.get_run(run)?.is_some(),
        "`{run}` is neither a metrics file nor a run of session `{}`; `rollscope runs` lists \
         the session's runs",
        cli.session
    );
    let columns = match args.metrics.is_empty() {
        true => default_columns(&store.metrics(run)?),
        false => args.metrics.clone(),
    };
    let printer = Printer {
        columns,
        json: cli.json,
    };
    if !cli.json {
        eprintln!(
            "{run} in session `{}`{}",
            cli.session,
            if args.once {
                ""
            } else {
                " · following until it ends (Ctrl-C to stop watching)"
            }
        );
        printer.header();
    }
    let every = Duration::from_secs_f64(args.every.max(0.05));
    super::watch_run::follow_session_run(cli, &store, run, every, args.once, &mut |rows| {
        printer.rows(rows)
    })
}

fn default_columns(rows: &[MetricsRow]) -> Vec<String> {
    let present = |name: &str| {
        rows.iter()
            .take(20)
            .any(|row| row.values.contains_key(name))
    };
    let mut columns: Vec<String> = PREFERRED
        .iter()
        .filter(|name| present(name))
        .take(8)
        .map(ToString::to_string)
        .collect();
    if columns.is_empty() {
        columns = rows
            .first()
            .map(|row| row.values.keys().take(6).cloned().collect())
            .unwrap_or_else(|| PREFERRED[..6].iter().map(ToString::to_string).collect());
    }
    columns
}

struct Printer {
    columns: Vec<String>,
    json: bool,
}

impl Printer {
    fn header(&self) {
        let names: Vec<String> = self
            .columns
            .iter()
            .map(|name| format!("{:>12}", short(name)))
            .collect();
        println!("{:>6} {}", "step", names.join(" "));
    }

    fn rows(&self, rows: &[MetricsRow]) {
        for row in rows {
            if self.json {
                println!("{}", crate::text_json::inert_json(row).unwrap_or_default());
                continue;
            }
            let cells: Vec<String> = self
                .columns
                .iter()
                .map(|name| {
                    row.get(name).map_or(format!("{:>12}", "–"), |value| {
                        format!("{:>12}", significant(value, 4))
                    })
                })
                .collect();
            println!("{:>6} {}", row.step, cells.join(" "));
        }
    }
}

fn short(name: &str) -> String {
    let tail = name.rsplit('/').next().unwrap_or(name);
    let base = if tail == "mean" || tail == "region_mean" {
        name.split('/').next().unwrap_or(name)
    } else {
        tail
    };
    base.chars().take(12).collect()
}
