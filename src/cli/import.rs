//! `rollscope import`: files, and run output folders as runs of their own.

use super::Cli;
use super::data::{parse_format, spinner};
use crate::formats::{Format, ImportOptions, ImportReport};
use crate::ingest::{self, FolderImport};
use clap::Args;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Seconds between a follow's polls unless `--every` says otherwise.
pub(super) const FOLLOW_EVERY_SECONDS: f64 = 0.5;

/// Arguments of `rollscope import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Files to import, or a run's output folder (TRL's `output_dir`, an Inspect log folder, a
    /// folder of .traj files): a folder imports as a run of its own, with its metrics.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The format of every file, instead of detecting it.
    #[arg(long, value_parser = parse_format)]
    pub format: Option<Format>,
    /// Import nothing from a file that has any bad record.
    #[arg(long, conflicts_with = "follow")]
    pub strict: bool,
    /// Keep reading: poll the files and folders for what is new (a TRL or verl run as it
    /// trains) until Ctrl-C; the same paths again resume the same run.
    #[arg(long)]
    pub follow: bool,
    /// Seconds between polls when following.
    #[arg(long, default_value_t = FOLLOW_EVERY_SECONDS, requires = "follow", value_parser = parse_seconds)]
    pub every: f64,
}

fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(seconds) if seconds > 0.0 && seconds.is_finite() => Ok(seconds),
        _ => Err(format!(
            "`{text}` is not a number of seconds above 0 (e.g. 1 or 0.5)"
        )),
    }
}

/// `rollscope import` (`--follow` is `import_follow::follow`).
pub fn import(cli: &Cli, args: &ImportArgs) -> anyhow::Result<()> {
    let store = cli.create_store()?;
    let mut reports = Vec::new();
    let mut failures = 0;
    for path in &args.files {
        let bar = spinner(format!("importing {}", path.display()));
        let options = ImportOptions {
            format: args.format,
            strict: args.strict,
            growing: false,
        };
        if path.is_dir() {
            let result = ingest::import_folder(&store, path, options, &mut || bar.inc(1));
            bar.finish_and_clear();
            match result {
                Ok(folder) => reports.push(folder_report(cli, args, path, folder, &mut failures)),
                Err(error) => {
                    failures += 1;
                    eprintln!("error: {error:#}");
                    reports.push(json!({"folder": path, "error": format!("{error:#}")}));
                }
            }
            continue;
        }
        let result = ingest::import_into(&store, path, options, &mut || bar.inc(1));
        bar.finish_and_clear();
        reports.push(file_report(cli, args, path, result, &mut failures));
    }
    if cli.json {
        println!("{}", crate::text_json::inert_json_pretty(&reports)?);
    }
    anyhow::ensure!(
        failures == 0,
        "{failures} of {} files could not be imported",
        args.files.len()
    );
    Ok(())
}

/// Prints what a folder's import did, file by file, then its run; returns it as JSON.
fn folder_report(
    cli: &Cli,
    args: &ImportArgs,
    dir: &Path,
    folder: FolderImport,
    failures: &mut usize,
) -> Value {
    let mut trajectories = 0;
    let files: Vec<Value> = folder
        .files
        .into_iter()
        .map(|(path, result)| {
            if let Ok(report) = &result {
                trajectories += report.trajectories;
            }
            file_report(cli, args, &path, result, failures)
        })
        .collect();
    for (path, why) in &folder.skipped {
        eprintln!("skipped {}: {why}", path.display());
    }
    let metrics = folder.metrics.as_ref().map(|(path, rows, problems)| {
        for problem in problems {
            eprintln!("warning: {problem}");
        }
        json!({"file": path, "rows": rows, "problems": problems.len()})
    });
    if !cli.json {
        let metrics_words = match &folder.metrics {
            Some((path, rows, _)) => format!(", {rows} metrics rows from {}", path.display()),
            None => ", no metrics file".to_string(),
        };
        println!(
            "{}: run {} ({trajectories} trajectories{metrics_words}); see it with `rollscope runs` or in the Runs tab",
            dir.display(),
            folder.run
        );
    }
    json!({
        "folder": dir,
        "run": folder.run,
        "files": files,
        "skipped": folder.skipped.iter().map(|(path, why)| json!({"file": path, "why": why})).collect::<Vec<_>>(),
        "metrics": metrics,
    })
}

/// Prints what one file's import did; returns it as JSON.
fn file_report(
    cli: &Cli,
    args: &ImportArgs,
    path: &Path,
    result: anyhow::Result<ImportReport>,
    failures: &mut usize,
) -> Value {
    let report = match result {
        Ok(report) => report,
        Err(error) => {
            *failures += 1;
            eprintln!("error: {error:#}");
            return json!({"file": path, "error": format!("{error:#}")});
        }
    };
    for problem in &report.problems {
        eprintln!("warning: {problem}");
    }
    if args.strict && !report.problems.is_empty() {
        *failures += 1;
        eprintln!(
            "{}: {} bad records; nothing imported from it (--strict)",
            path.display(),
            report.problems.len()
        );
    }
    if !cli.json {
        let skipped = match report.problems.len() {
            0 => String::new(),
            count => format!(", {count} records skipped"),
        };
        let new = report.trajectories - report.already_stored;
        let already = match report.already_stored {
            0 => String::new(),
            count => format!(", {count} already stored"),
        };
        println!(
            "{}: {} trajectories ({new} new{already}), {} tasks ({}){skipped}",
            path.display(),
            report.trajectories,
            report.tasks,
            report.format.map_or("?", Format::name),
        );
    }
    json!({
        "file": path,
        "format": report.format.map(Format::name),
        "trajectories": report.trajectories,
        "new": report.trajectories - report.already_stored,
        "already_stored": report.already_stored,
        "tasks": report.tasks,
        "problems": report.problems.iter().map(ToString::to_string).collect::<Vec<_>>(),
    })
}
