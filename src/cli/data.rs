//! `export`, `list`, `tasks`, `delete`, `compact`, `sessions`.

use super::{Cli, FilterArgs, output};
use crate::curate::{self, ExportRequest};
use crate::formats::{ExportOptions, Format, ToolArguments};
use crate::store::{Query, SortKey};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `rollscope export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The format to write: rollscope, openai, sharegpt, trl-prompt-completion, trl-stepwise, rl.
    #[arg(long, value_parser = parse_format, default_value = "rollscope")]
    pub format: Format,
    /// Where to write (standard output when omitted); a manifest goes beside a file.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Tool-call arguments: object (as TRL documents), string (as OpenAI's API) or as-read.
    #[arg(long, default_value = "object")]
    pub tool_arguments: ToolArguments,
    /// Which trajectories.
    #[command(flatten)]
    pub filter: FilterArgs,
}

/// Arguments of `rollscope list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Which trajectories.
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Order by: stored, reward, turns, prm, task, step, id (runs and policies mixed).
    #[arg(long, default_value = "stored")]
    pub sort: SortKey,
    /// Largest first.
    #[arg(long)]
    pub desc: bool,
    /// At most this many (text output shows 50 unless set; --json shows all unless set).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Skip this many.
    #[arg(long, default_value_t = 0)]
    pub offset: usize,
}

/// Arguments of `rollscope tasks`.
#[derive(Debug, Args)]
pub struct TasksArgs {
    /// Only tasks from this source (e.g. gsm8k, arith).
    #[arg(long)]
    pub source: Option<String>,
    /// At most this many.
    #[arg(long)]
    pub limit: Option<usize>,
    /// List a task set instead of the session's tasks: gsm8k:train|test,
    /// arith[:LEVEL[+DISTRACTORS]][:train|eval], lookup[:LEVEL][:train|eval], weather[:train|eval],
    /// or a task file.
    #[arg(long, value_name = "SPEC")]
    pub set: Option<String>,
    /// The seed of generated task sets.
    #[arg(long, default_value_t = 0, requires = "set")]
    pub seed: u64,
}

/// Arguments of `rollscope delete`.
#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// Which trajectories (at least one filter, or --all).
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Delete every trajectory of the session.
    #[arg(long)]
    pub all: bool,
    /// Show how many would go, and delete nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// Parses a `--format` name.
pub(super) fn parse_format(text: &str) -> Result<Format, String> {
    text.parse()
}

/// A spinner counting records, for work of unknown length.
pub(super) fn spinner(message: String) -> ProgressBar {
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} {pos} records ({per_sec})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.set_message(message);
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}

/// A spinner while a search waits for the index to take in writes it has not seen (after a
/// large import, seconds per 100k trajectories); `None` when the index is in step.
fn index_catch_up_spinner(behind: u64) -> Option<ProgressBar> {
    if behind == 0 {
        return None;
    }
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.set_message(format!(
        "the search index is catching up with the store ({behind} write{} behind)",
        if behind == 1 { "" } else { "s" }
    ));
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    Some(bar)
}

/// `rollscope export`: to a file with its manifest beside it, or to standard output.
pub fn export(cli: &Cli, args: &ExportArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.format.can_export(),
        "{} cannot be written; export formats: rollscope, openai, sharegpt, trl-prompt-completion, trl-stepwise, rl",
        args.format
    );
    let store = cli.open_store()?;
    let filter = args.filter.to_filter(cli)?;
    let options = ExportOptions {
        tool_arguments: args.tool_arguments,
    };
    let written = match &args.output {
        Some(path) => {
            let request = ExportRequest {
                filter,
                selection: None,
                format: args.format,
                options,
                path: path.clone(),
                session: Some(cli.session.clone()),
                repairs: Vec::new(),
            };
            let report = curate::export_selection(&store, &request, &mut |_, _| {})?;
            eprintln!(
                "wrote {} records to {} ({}); manifest {}",
                report.manifest.counts.written,
                path.display(),
                args.format,
                report.manifest_path.display()
            );
            report.manifest.counts.written
        }
        None => {
            let ids: Vec<_> = store
                .query(&Query {
                    filter,
                    ..Query::default()
                })?
                .into_iter()
                .map(|summary| summary.id)
                .collect();
            let tasks = curate::TaskIndex::load(&store)?;
            let stdout = std::io::stdout();
            let mut out =
                crate::text_json::InertJsonWriter::new(std::io::BufWriter::new(stdout.lock()));
            let written = curate::export::write_export(
                &store,
                &tasks,
                &ids,
                args.format,
                &options,
                &mut out,
                &mut |_, _| {},
            )?;
            out.flush()?;
            written
        }
    };
    if written == 0 {
        eprintln!("note: no trajectories matched the filter");
    }
    Ok(())
}

/// `rollscope list`.
pub fn list(cli: &Cli, args: &ListArgs) -> anyhow::Result<()> {
    let store = cli.open_store()?;
    let filter = args.filter.to_filter(cli)?;
    let limit = args.limit.or(if cli.json { None } else { Some(50) });
    let catching_up = match filter.full_text {
        Some(_) => index_catch_up_spinner(store.text_index_behind()?),
        None => None,
    };
    let summaries = store.query(&Query {
        filter: filter.clone(),
        sort: args.sort,
        descending: args.desc,
        offset: args.offset,
        limit,
    })?;
    if let Some(bar) = catching_up {
        bar.finish_and_clear();
    }
    if cli.json {
        println!("{}", crate::text_json::inert_json(&summaries)?);
        return Ok(());
    }
    let total = store.count(&filter)?;
    let kinds = cli.label_kinds()?;
    println!("{}", output::summary_header());
    for summary in &summaries {
        println!("{}", output::summary_row(summary, &kinds));
    }
    println!(
        "{} of {total} matching ({}){}",
        summaries.len(),
        filter.describe(),
        if summaries.len() < total.saturating_sub(args.offset) {
            "; --limit N or --offset N for more"
        } else {
            ""
        }
    );
    Ok(())
}

/// `rollscope tasks`.
pub fn tasks(cli: &Cli, args: &TasksArgs) -> anyhow::Result<()> {
    let all = match &args.set {
        Some(spec) => super::agent::task_set(spec, args.limit, args.seed)?,
        None => cli.open_store()?.tasks()?,
    };
    let tasks: Vec<_> = all
        .into_iter()
        .filter(|task| {
            args.source
                .as_ref()
                .is_none_or(|source| &task.source == source)
        })
        .take(args.limit.unwrap_or(usize::MAX))
        .collect();
    if cli.json {
        println!("{}", crate::text_json::inert_json(&tasks)?);
        return Ok(());
    }
    println!(
        "{:<28} {:<12} {:>4} {:<12} question",
        "id", "source", "diff", "answer"
    );
    for task in &tasks {
        println!(
            "{:<28} {:<12} {:>4} {:<12} {}",
            output::truncate(&task.id, 28),
            output::truncate(&task.source, 12),
            task.difficulty.map_or("–".into(), |d| d.to_string()),
            output::truncate(task.ground_truth.as_deref().unwrap_or("–"), 12),
            output::truncate(&task.question().replace('\n', " "), 70)
        );
    }
    println!("{} tasks", tasks.len());
    Ok(())
}

/// `rollscope delete`.
pub fn delete(cli: &Cli, args: &DeleteArgs) -> anyhow::Result<()> {
    let filter = args.filter.to_filter(cli)?;
    anyhow::ensure!(
        args.all || !filter.is_empty(),
        "refusing to delete everything without --all; give a filter such as --run or --fail"
    );
    let store = cli.open_store()?;
    let ids = store.ids(&filter)?;
    if args.dry_run {
        println!(
            "would delete {} trajectories ({})",
            ids.len(),
            filter.describe()
        );
        return Ok(());
    }
    let removed = store.delete_trajectories(&ids)?;
    if cli.json {
        println!(
            "{}",
            crate::text_json::inert_json(&serde_json::json!({"deleted": removed}))?
        );
    } else {
        println!(
            "deleted {removed} trajectories ({}); `rollscope compact` reclaims their space",
            filter.describe()
        );
    }
    Ok(())
}

/// `rollscope compact`.
pub fn compact(cli: &Cli) -> anyhow::Result<()> {
    let store = cli.open_store()?;
    let bar = spinner("compacting".into());
    let (_store, report) = store.compact()?;
    bar.finish_and_clear();
    if cli.json {
        println!(
            "{}",
            crate::text_json::inert_json(
                &serde_json::json!({"before_bytes": report.before, "after_bytes": report.after, "trajectories": report.trajectories})
            )?
        );
    } else {
        println!(
            "compacted {} trajectories: {} → {}",
            report.trajectories,
            output::bytes(report.before),
            output::bytes(report.after)
        );
    }
    Ok(())
}
