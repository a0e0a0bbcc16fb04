//! `rollscope labels export` and `rollscope labels import`: labels that travel between
//! teammates' sessions.

use super::{Cli, FilterArgs};
use crate::curate::labels::{Prefer, collect_labels, merge_labels, read_labels, write_labels};
use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use std::io::Write;
use std::path::PathBuf;

/// What to do with labels.
#[derive(Debug, Subcommand)]
pub enum LabelsCommand {
    /// Write the labels of the trajectories a filter selects as JSONL.
    Export(LabelsExportArgs),
    /// Merge a label file into the session per author: a teammate's labels go beside yours,
    /// identical ones are skipped, and a label that differs from the stored one of its author,
    /// step and kind is a conflict, listed (and resolved only with --prefer).
    Import(LabelsImportArgs),
}

/// Arguments of `rollscope labels export`.
#[derive(Debug, Args)]
pub struct LabelsExportArgs {
    /// Which trajectories.
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Where to write (standard output when omitted).
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

/// Which side wins a conflict.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum PreferArg {
    /// Keep the session's labels.
    Ours,
    /// Take the file's labels.
    Theirs,
}

/// Arguments of `rollscope labels import`.
#[derive(Debug, Args)]
pub struct LabelsImportArgs {
    /// The label file (JSONL of {trajectory, step, kind, status, note, author, time}).
    pub file: PathBuf,
    /// Resolve conflicts: keep ours, or take theirs.
    #[arg(long, value_enum)]
    pub prefer: Option<PreferArg>,
    /// Report what would change, and write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// Runs a `labels` subcommand.
pub fn run(cli: &Cli, command: &LabelsCommand) -> anyhow::Result<()> {
    match command {
        LabelsCommand::Export(args) => export(cli, args),
        LabelsCommand::Import(args) => import(cli, args),
    }
}

fn export(cli: &Cli, args: &LabelsExportArgs) -> anyhow::Result<()> {
    let store = cli.open_store()?;
    let records = collect_labels(&store, &args.filter.to_filter(cli)?)?;
    match &args.output {
        Some(path) => {
            let file = std::fs::File::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?;
            let mut out = std::io::BufWriter::new(file);
            write_labels(&records, &mut out)?;
            out.flush()?;
            eprintln!("wrote {} labels to {}", records.len(), path.display());
        }
        None => {
            let mut out = crate::text_json::InertJsonWriter::new(std::io::BufWriter::new(
                std::io::stdout().lock(),
            ));
            write_labels(&records, &mut out)?;
            out.flush()?;
        }
    }
    Ok(())
}

fn import(cli: &Cli, args: &LabelsImportArgs) -> anyhow::Result<()> {
    let records = read_labels(&args.file)?;
    let store = cli.open_store()?;
    let prefer = args.prefer.map(|prefer| match prefer {
        PreferArg::Ours => Prefer::Ours,
        PreferArg::Theirs => Prefer::Theirs,
    });
    let report = merge_labels(&store, &records, prefer, args.dry_run)?;
    if cli.json {
        println!("{}", crate::text_json::inert_json_pretty(&report)?);
        return Ok(());
    }
    println!(
        "{} labels read: {} added · {} already here · {} conflicting steps · {} trajectories {}",
        report.read,
        report.added,
        report.identical,
        report.conflicts.len(),
        report.changed,
        if args.dry_run {
            "would change (--dry-run)"
        } else {
            "changed"
        }
    );
    for conflict in &report.conflicts {
        let show = |labels: &[crate::curate::labels::LabelRecord]| {
            labels
                .iter()
                .map(|label| {
                    format!(
                        "{} {}{}{}",
                        format!("{:?}", label.status).to_lowercase(),
                        label.kind,
                        label
                            .note
                            .as_ref()
                            .map_or(String::new(), |note| format!(" \"{note}\"")),
                        label
                            .author
                            .as_ref()
                            .map_or(String::new(), |author| format!(" by {author}"))
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        println!(
            "conflict {} t{} ({}): ours [{}] · theirs [{}]",
            conflict.trajectory,
            conflict.step + 1,
            conflict.resolution,
            show(&conflict.ours),
            show(&conflict.theirs)
        );
    }
    if report
        .conflicts
        .iter()
        .any(|c| c.resolution == "unresolved")
    {
        println!("nothing was overwritten; rerun with --prefer ours or --prefer theirs to resolve");
    }
    if !report.missing.is_empty() {
        println!(
            "{} trajectories are not in this session (first: {})",
            report.missing.len(),
            report.missing[0]
        );
    }
    for bad in &report.bad_steps {
        println!(
            "skipped: {} has no step {} (label {})",
            bad.trajectory,
            bad.step + 1,
            bad.kind
        );
    }
    Ok(())
}
