//! `rollscope suggest`, `audit` and `select` (alias `curate`).

use super::{Cli, FilterArgs, output};
use crate::curate::select::{SelectionPreview, SelectionRules};
use crate::curate::suggest::write_suggestions;
use crate::curate::{AuditOptions, ExportRequest};
use crate::formats::{ExportOptions, Format, ToolArguments};

use crate::trajectory::ErrorKind;
use clap::Args;
use std::path::PathBuf;

/// Arguments of `rollscope suggest`.
#[derive(Debug, Args)]
pub struct SuggestArgs {
    /// Which trajectories.
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Show what would be suggested, and write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// Arguments of `rollscope audit`.
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Which trajectories.
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Audit rewards at least this [default: the ones the verifier passed].
    #[arg(long, allow_hyphen_values = true)]
    pub min_reward: Option<f64>,
    /// A length this many times the median (or that fraction of it) is anomalous.
    #[arg(long, default_value_t = 3.0)]
    pub length_ratio: f64,
    /// Show at most this many (text output).
    #[arg(long, default_value_t = 30)]
    pub limit: usize,
}

/// Arguments of `rollscope select`.
#[derive(Debug, Args)]
pub struct SelectArgs {
    /// Which trajectories to select from.
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Samples kept per task at most.
    #[arg(long, default_value_t = 1)]
    pub per_task: usize,
    /// Keep samples the verifier failed too (ranked after passing ones).
    #[arg(long)]
    pub allow_fail: bool,
    /// Keep samples that carry a confirmed error label.
    #[arg(long)]
    pub keep_labelled: bool,
    /// Also keep samples a person corrected (`extra.corrected_by`).
    #[arg(long)]
    pub include_corrected: bool,
    /// Keep duplicate completions of a task.
    #[arg(long)]
    pub no_dedup: bool,
    /// Keep as many tasks per difficulty level as the smallest level has.
    #[arg(long)]
    pub balance: bool,
    /// Leave out samples whose lowest process score is below this (e.g. 1: every step
    /// checked, the answer supported by the tool results; no lucky guesses).
    #[arg(long, value_name = "SCORE")]
    pub min_prm: Option<f64>,
    /// Leave out samples with a suggested error label of these kinds too, comma-separated
    /// (those whose suggestions `stats` measures as precise enough to trust), e.g.
    /// calculation,format.
    #[arg(long, value_name = "KINDS", value_delimiter = ',')]
    pub exclude_suggested: Vec<ErrorKind>,
    /// Rank a task's samples by length alone, not by their lowest process score first (as
    /// a selection by the verifier alone does).
    #[arg(long)]
    pub shortest_first: bool,
    /// Only print the counts, write nothing.
    #[arg(long)]
    pub preview: bool,
    /// The format to write: openai, trl-prompt-completion, sharegpt, rl, rollscope.
    #[arg(long, value_parser = parse_format, default_value = "openai")]
    pub format: Format,
    /// Tool-call arguments: object (TRL), string (OpenAI) or as-read.
    #[arg(long, default_value = "object")]
    pub tool_arguments: ToolArguments,
    /// Where to write the selection (its manifest goes beside it).
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

fn parse_format(text: &str) -> Result<Format, String> {
    text.parse()
}

impl SelectArgs {
    fn rules(&self) -> SelectionRules {
        SelectionRules {
            per_task: self.per_task.max(1),
            require_pass: !self.allow_fail,
            exclude_confirmed_errors: !self.keep_labelled,
            include_corrected: self.include_corrected,
            dedup: !self.no_dedup,
            balance_difficulty: self.balance,
            min_prm: self.min_prm,
            exclude_suggested: self.exclude_suggested.clone(),
            rank_by_prm: !self.shortest_first,
        }
    }
}

/// `rollscope suggest`: writes suggested labels (replacing earlier suggestions).
pub fn suggest(cli: &Cli, args: &SuggestArgs) -> anyhow::Result<()> {
    let store = cli.open_store()?;
    let ids = store.ids(&args.filter.to_filter(cli)?)?;
    let counts = write_suggestions(&store, &ids, args.dry_run)?;
    if cli.json {
        let kinds: serde_json::Map<String, serde_json::Value> = ErrorKind::ALL
            .iter()
            .map(|kind| (kind.to_string(), counts.of(*kind).into()))
            .collect();
        println!(
            "{}",
            crate::text_json::inert_json(
                &serde_json::json!({"read": counts.read, "suggestions": counts.suggestions, "trajectories": counts.trajectories, "kinds": kinds, "changed": counts.changed, "written": !args.dry_run})
            )?
        );
        return Ok(());
    }
    println!(
        "{} suggested labels on {} of {} trajectories ({}); {} trajectories {}",
        counts.suggestions,
        counts.trajectories,
        counts.read,
        counts.per_kind_text(),
        counts.changed,
        if args.dry_run {
            "would change (--dry-run: nothing written)"
        } else {
            "changed; accept them in the TUI with `a`"
        }
    );
    Ok(())
}

/// `rollscope audit`: the queue of suspicious high-reward trajectories.
pub fn audit(cli: &Cli, args: &AuditArgs) -> anyhow::Result<()> {
    let store = cli.open_store()?;
    let options = AuditOptions {
        min_reward: args.min_reward,
        length_ratio: args.length_ratio,
    };
    let (findings, audited) = crate::curate::audit(&store, &args.filter.to_filter(cli)?, &options)?;
    if cli.json {
        println!(
            "{}",
            crate::text_json::inert_json(
                &serde_json::json!({"audited": audited, "findings": findings})
            )?
        );
        return Ok(());
    }
    println!(
        "{} of {audited} high-reward trajectories look suspicious (most traits first)",
        findings.len()
    );
    for finding in findings.iter().take(args.limit) {
        println!(
            "{} {:<22} reward {:>6}  {}",
            finding.id,
            output::truncate(&finding.task_id, 22),
            output::decimal(finding.reward),
            finding
                .signs
                .iter()
                .map(|sign| sign.kind.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        for sign in &finding.signs {
            println!("    {}: {}", sign.kind, sign.evidence);
        }
    }
    if findings.len() > args.limit {
        println!(
            "… {} more (--limit N, or --json)",
            findings.len() - args.limit
        );
    }
    Ok(())
}

/// The preview as lines of text.
pub fn preview_lines(preview: &SelectionPreview, rules: &SelectionRules) -> Vec<String> {
    let share = |count: usize| 100.0 * count as f64 / preview.tasks.max(1) as f64;
    let levels: Vec<String> = preview
        .kept_by_difficulty
        .iter()
        .map(|(level, count)| match level {
            Some(level) => format!("L{level} {count}"),
            None => format!("no level {count}"),
        })
        .collect();
    vec![
        format!(
            "source    {} samples of {} tasks",
            preview.samples, preview.tasks
        ),
        format!("keep      {}", rules.describe()),
        format!(
            "preview   {} tasks kept ({:.0}%) · {} samples · {} with no passing sample · {} excluded by labels ({} samples)",
            preview.tasks_kept,
            share(preview.tasks_kept),
            preview.samples_kept,
            preview.tasks_no_pass,
            preview.tasks_excluded_by_labels,
            preview.samples_excluded_by_labels
        ),
        format!(
            "          {} below the PRM threshold ({} samples) · {} duplicates dropped · {} over the cap · {} tasks dropped to balance · {} corrected by a person · by difficulty: {}",
            preview.tasks_below_prm,
            preview.samples_below_prm,
            preview.duplicates,
            preview.capped,
            preview.dropped_by_balance,
            preview.corrected,
            if levels.is_empty() {
                "–".to_string()
            } else {
                levels.join(", ")
            }
        ),
    ]
}

/// `rollscope select`: previews a best-of-N selection and writes it with `-o`.
pub fn select(cli: &Cli, args: &SelectArgs) -> anyhow::Result<()> {
    let store = cli.open_store()?;
    let filter = args.filter.to_filter(cli)?;
    let rules = args.rules();
    let output = args.output.as_ref().filter(|_| !args.preview);
    let Some(path) = output else {
        let selection = crate::curate::select(&store, &filter, &rules)?;
        if cli.json {
            let preview = serde_json::json!({"rules": rules, "preview": selection.preview});
            println!("{}", crate::text_json::inert_json(&preview)?);
        } else {
            for line in preview_lines(&selection.preview, &rules) {
                println!("{line}");
            }
            if !args.preview {
                println!(
                    "write it with -o FILE (format {}, --format to change)",
                    args.format
                );
            }
        }
        return Ok(());
    };
    let request = ExportRequest {
        filter,
        selection: Some(rules.clone()),
        format: args.format,
        options: ExportOptions {
            tool_arguments: args.tool_arguments,
        },
        path: path.clone(),
        session: Some(cli.session.clone()),
        repairs: Vec::new(),
    };
    let report = crate::curate::export_selection(&store, &request, &mut |_, _| {})?;
    if cli.json {
        println!("{}", crate::text_json::inert_json_pretty(&report.manifest)?);
        return Ok(());
    }
    if let Some(preview) = &report.manifest.preview {
        for line in preview_lines(preview, &rules) {
            println!("{line}");
        }
    }
    println!(
        "wrote {} records to {} ({}, {}) in {:.2} s; manifest {}",
        report.manifest.counts.written,
        report.path.display(),
        report.manifest.format,
        output::bytes(report.manifest.bytes),
        report.seconds,
        report.manifest_path.display()
    );
    Ok(())
}
