//! `rollscope stats --agreement`: how far annotators agree, per error kind, and where they
//! differ.

use super::Cli;
use super::curate_stats::StatsArgs;
use crate::curate::agreement::{AgreementReport, load_ratings};
use crate::curate::labels::LabelKinds;
use crate::trajectory::ErrorKind;

/// `rollscope stats --agreement`: the agreement of the authors the flags name (all by
/// default).
pub fn agreement(cli: &Cli, args: &StatsArgs) -> anyhow::Result<()> {
    let store = cli.open_store()?;
    let ratings = load_ratings(&store, &args.filter.to_filter(cli)?, args.rules)?;
    let known = ratings.authors();
    for author in &args.authors {
        anyhow::ensure!(
            known.contains(author),
            "no confirmed label by `{author}` among these trajectories: the authors are {}{}",
            known.iter().cloned().collect::<Vec<_>>().join(", "),
            if args.rules {
                ""
            } else {
                " (--rules adds the rules as `rules`)"
            }
        );
    }
    let report = ratings.report(&args.authors);
    let disagreements = ratings.disagreements();
    if cli.json {
        let json = serde_json::json!({"agreement": report, "disagreements": disagreements});
        println!("{}", crate::text_json::inert_json(&json)?);
        return Ok(());
    }
    let label_kinds = cli.label_kinds()?;
    print!("{}", render(&report, &label_kinds));
    if report.authors.len() < 2 {
        return Ok(());
    }
    if args.disagreements {
        for step in &disagreements {
            let kinds: Vec<String> = step
                .kinds
                .iter()
                .map(|(author, kinds)| {
                    let names: Vec<&str> =
                        kinds.iter().map(|&kind| label_kinds.name(kind)).collect();
                    let names = if names.is_empty() {
                        "no error".to_string()
                    } else {
                        names.join("+")
                    };
                    format!("{author}: {names}")
                })
                .collect();
            println!(
                "{} t{}  {}",
                step.trajectory,
                step.step + 1,
                kinds.join(" · ")
            );
        }
    }
    println!(
        "{} step(s) where reviewers differ{}",
        disagreements.len(),
        if args.disagreements || disagreements.is_empty() {
            ""
        } else {
            ": --disagreements lists them, `rollscope show ID` opens one"
        }
    );
    Ok(())
}

fn render(report: &AgreementReport, kinds: &LabelKinds) -> String {
    if report.authors.len() < 2 {
        return format!(
            "agreement needs two authors; these trajectories have {} ({}). Import a \
             teammate's labels (`rollscope labels import FILE`) or add --rules.\n",
            report.authors.len(),
            report.authors.join(", ")
        );
    }
    let mut text = format!(
        "{} authors ({}) · {} trajectories reviewed by at least two · {} steps\n\n",
        report.authors.len(),
        report.authors.join(", "),
        report.trajectories,
        report.steps
    );
    let names: Vec<String> = report
        .authors
        .iter()
        .map(|author| super::output::truncate(author, 14))
        .collect();
    text.push_str(&format!("{:<13}", "kind"));
    for name in &names {
        text.push_str(&format!(" {name:>14}"));
    }
    text.push_str(&format!(
        " {:>8} {:>8}   (steps marked per author)\n",
        "κ", "α"
    ));
    for row in &report.kinds {
        let name =
            ErrorKind::from_stored(&row.kind).map_or(row.kind.as_str(), |kind| kinds.name(kind));
        text.push_str(&format!("{:<13}", super::output::truncate(name, 13)));
        for author in &report.authors {
            text.push_str(&format!(
                " {:>12}",
                row.marked.get(author).copied().unwrap_or(0)
            ));
        }
        let show = |value: Option<f64>| value.map_or("–".to_string(), |v| format!("{v:.3}"));
        text.push_str(&format!(" {:>8} {:>8}\n", show(row.kappa), show(row.alpha)));
    }
    if report.authors.len() > 2 {
        text.push_str("κ is for two authors: name two with --authors A,B\n");
    }
    text
}
