//! `rollscope stats`: the error analysis as tables with units, or JSON.

use super::{Cli, FilterArgs, output};
use crate::curate::analysis::{Analysis, GroupCounts, KindCounts, VersionStats};
use crate::curate::labels::LabelKinds;
use crate::curate::suggest::Precision;
use crate::trajectory::ErrorKind;
use clap::Args;

/// Arguments of `rollscope stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Agreement between annotators instead: per error kind, Cohen's κ (two authors) and
    /// Krippendorff's α, over the steps of the trajectories each reviewed.
    #[arg(long)]
    pub agreement: bool,
    /// With --agreement: the authors to compare, comma-separated [default: every author].
    #[arg(long, value_delimiter = ',', requires = "agreement")]
    pub authors: Vec<String>,
    /// With --agreement: the rules' suggestions (made afresh) as one more author, `rules`.
    #[arg(long, requires = "agreement")]
    pub rules: bool,
    /// With --agreement: list the steps where the authors differ, with each one's kinds.
    #[arg(long, requires = "agreement")]
    pub disagreements: bool,
    /// Compare two evaluation runs task by task instead, `--paired BEFORE,AFTER`: the
    /// difference of their greedy accuracy on the tasks both attempted, with a 95% interval
    /// that uses the pairing, and the tasks lost and gained.
    #[arg(
        long,
        value_delimiter = ',',
        num_args = 1,
        value_name = "RUN,RUN",
        conflicts_with = "agreement"
    )]
    pub paired: Vec<String>,
    /// Which trajectories.
    #[command(flatten)]
    pub filter: FilterArgs,
}

/// `rollscope stats`.
pub fn stats(cli: &Cli, args: &StatsArgs) -> anyhow::Result<()> {
    let store = cli.open_store()?;
    if !args.paired.is_empty() {
        let [first, second] = args.paired.as_slice() else {
            anyhow::bail!("--paired takes two evaluation runs, e.g. --paired eval-0001,eval-0002");
        };
        let pairs = crate::curate::analysis::paired_runs(&store, first, second)?;
        if cli.json {
            println!("{}", crate::text_json::inert_json_pretty(&pairs)?);
        } else {
            println!(
                "{first} {:.1}% → {second} {:.1}%: {}",
                100.0 * pairs.first as f64 / pairs.items.max(1) as f64,
                100.0 * pairs.second as f64 / pairs.items.max(1) as f64,
                pairs.describe()
            );
        }
        return Ok(());
    }
    let analysis = crate::curate::analyse(&store, &args.filter.to_filter(cli)?)?;
    if cli.json {
        println!("{}", crate::text_json::inert_json_pretty(&analysis)?);
        return Ok(());
    }
    print!("{}", render(&analysis, &cli.label_kinds()?));
    Ok(())
}

fn percent(value: Option<f64>) -> String {
    value.map_or_else(|| "–".into(), |value| format!("{:.1}%", 100.0 * value))
}

fn number(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "–".into(), |value| format!("{value:.decimals$}"))
}

fn kinds_cells(kinds: &KindCounts) -> String {
    ErrorKind::ALL
        .iter()
        .map(|&kind| format!("{:>5}/{:<4}", kinds.confirmed(kind), kinds.suggested(kind)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn kinds_header() -> String {
    ["calc", "reas", "und", "fmt"]
        .iter()
        .map(|name| format!("{name:>10}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn groups(title: &str, rows: &[GroupCounts]) -> String {
    let mut text = format!(
        "\n{:<28} {:>12} {:>8}  {}   (labels: confirmed/suggested)\n",
        title,
        "trajectories",
        "pass",
        kinds_header()
    );
    for row in rows {
        let judged = row.passed + row.failed;
        text.push_str(&format!(
            "{:<28} {:>12} {:>8}  {}\n",
            output::truncate(&row.name, 28),
            row.trajectories,
            percent((judged > 0).then(|| row.passed as f64 / judged as f64)),
            kinds_cells(&row.kinds)
        ));
    }
    text
}

fn versions(rows: &[VersionStats]) -> String {
    let k = rows
        .iter()
        .flat_map(|row| row.pass_at_k.iter().map(|p| p.k))
        .max()
        .unwrap_or(1);
    let mut text = format!(
        "\n{:<24} {:>8} {:>6} {:>8} {:>7} {:>7} {:>6} {:>8} {:>7} {:>9} {:>9} {:>8}  {}\n",
        "policy version",
        "rollouts",
        "tasks",
        "accuracy",
        "pass@1",
        format!("pass@{k}"),
        "turns",
        "chars",
        "format",
        "|err|",
        "|err| med",
        "rel err",
        kinds_header()
    );
    for row in rows {
        let numeric = row.numeric.as_ref();
        text.push_str(&format!(
            "{:<24} {:>8} {:>6} {:>8} {:>7} {:>7} {:>6.1} {:>8} {:>7} {:>9} {:>9} {:>8}  {}\n",
            output::truncate(&row.name(), 24),
            row.trajectories,
            row.tasks,
            percent(row.accuracy()),
            number(row.pass_at(1), 3),
            number(row.pass_at(k), 3),
            row.mean_turns,
            number(row.mean_chars, 0),
            percent(row.format_correct),
            number(numeric.and_then(|n| n.mean_absolute), 2),
            number(numeric.and_then(|n| n.median_absolute), 2),
            percent(numeric.and_then(|n| n.mean_relative)),
            kinds_cells(&row.kinds)
        ));
    }
    text.push_str("  accuracy: passed over judged · pass@k: unbiased estimate over each task's samples · turns: assistant turns · chars: characters the policy wrote · format: marked answer and well-formed calls, over the rollouts whose task has a ground truth, asks for a marked answer or offers tools (– where none does) · |err|: |answer − ground truth| (mean, median) · rel err: mean |err| / |truth|\n");
    text
}

fn histogram(title: &str, counts: &[usize]) -> String {
    if counts.iter().all(|&count| count == 0) {
        return format!("{title}: none\n");
    }
    let max = counts.iter().copied().max().unwrap_or(1).max(1);
    let mut text = format!("{title}\n");
    for (step, &count) in counts.iter().enumerate() {
        text.push_str(&format!(
            "  t{:<3} {:<30} {count}\n",
            step + 1,
            "█".repeat((count * 30).div_ceil(max))
        ));
    }
    text
}

/// The precision table: per kind, suggestions, precision, same-step precision and recall.
pub fn precision_table(precision: &Precision) -> String {
    let mut text = format!(
        "\nsuggested-label precision (vs confirmed), over {} reviewed trajectories\n{:<14} {:>9} {:>9} {:>9} {:>9} {:>7}\n",
        precision.reviewed, "kind", "suggested", "precision", "same step", "confirmed", "recall"
    );
    for kind in ErrorKind::ALL {
        let figures = precision.kind(kind);
        text.push_str(&format!(
            "{:<14} {:>9} {:>9} {:>9} {:>9} {:>7}\n",
            kind.as_str(),
            figures.suggested,
            number(figures.precision(), 2),
            number(figures.step_precision(), 2),
            figures.confirmed,
            number(figures.recall(), 2)
        ));
    }
    text.push_str(&format!(
        "first error's step: the first suggestion on the first confirmed label's step on {} of \
         {} trajectories with both ({})\n",
        precision.first_error_right,
        precision.first_error_compared,
        number(precision.first_error_share(), 2)
    ));
    text
}

/// The whole analysis as text, kinds named as the session names them.
pub fn render(analysis: &Analysis, kinds: &LabelKinds) -> String {
    let unjudged = analysis.trajectories - analysis.passed - analysis.failed;
    let mut text = format!(
        "{} trajectories · {} pass · {} fail · {unjudged} without a verdict\n",
        analysis.trajectories, analysis.passed, analysis.failed
    );
    text.push_str(&format!(
        "\n{:<14} {:>9} {:>9}   (trajectories with a label of the kind)\n",
        "error kind", "confirmed", "suggested"
    ));
    for kind in kinds.kinds() {
        text.push_str(&format!(
            "{:<14} {:>9} {:>9}\n",
            kinds.name(kind),
            analysis.kinds.confirmed(kind),
            analysis.kinds.suggested(kind)
        ));
    }
    text.push_str(&groups("run", &analysis.runs));
    text.push_str(&groups("task source", &analysis.sources));
    text.push_str(&versions(&analysis.versions));
    text.push('\n');
    text.push_str(&histogram(
        "first error at step (confirmed labels)",
        &analysis.first_error.confirmed,
    ));
    text.push_str(&histogram(
        "first error at step (suggested labels)",
        &analysis.first_error.suggested,
    ));
    match &analysis.precision {
        Some(precision) => text.push_str(&precision_table(precision)),
        None => {
            text.push_str("\nsuggested-label precision: no trajectory has a confirmed label yet\n")
        }
    }
    text
}
