//! `rollscope score`: per-token log-probs of each trajectory's policy tokens under a model.

use super::Cli;
use super::model::{RuntimeArgs, load_model, policy_dir};
use crate::formats::{self, ImportOptions, Item};
use crate::model::score_trajectory;
use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `rollscope score`.
#[derive(Debug, Args)]
pub struct ScoreArgs {
    /// The model folder [default: the session's newest policy, else models/base].
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Trajectories to score (Rollscope JSONL).
    #[arg(long)]
    pub input: PathBuf,
    /// Where to write the scores as JSONL (standard output when omitted).
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Temperature of the scored distribution; use the sampling temperature to compare with
    /// recorded log-probs.
    #[arg(long, default_value_t = 1.0)]
    pub temperature: f64,
    /// Device and dtype.
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

/// `rollscope score`.
pub fn score(cli: &Cli, args: &ScoreArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.temperature > 0.0, "--temperature must be positive");
    let model = load_model(
        &policy_dir(cli, args.model.as_deref(), None)?,
        &args.runtime,
    )?;
    let mut trajectories = Vec::new();
    let report = formats::import_file(&args.input, ImportOptions::default(), &mut |item| {
        if let Item::Trajectory(trajectory) = item {
            trajectories.push(*trajectory);
        }
        Ok(())
    })?;
    for problem in &report.problems {
        eprintln!("skipped {problem}");
    }
    let mut out: Box<dyn Write> = match &args.output {
        Some(path) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?,
        )),
        None => Box::new(crate::text_json::InertJsonWriter::new(
            std::io::stdout().lock(),
        )),
    };
    let bar = ProgressBar::new(trajectories.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} trajectories {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let (mut scored, mut tokens, mut logprob_sum, mut kl_sum, mut kl_count) =
        (0usize, 0usize, 0.0, 0.0, 0usize);
    for trajectory in &trajectories {
        bar.inc(1);
        let score = match score_trajectory(&model, trajectory, args.temperature) {
            Ok(score) => score,
            Err(error) => {
                bar.suspend(|| {
                    eprintln!(
                        "{}: trajectory {}: {error}",
                        args.input.display(),
                        trajectory.id
                    )
                });
                continue;
            }
        };
        scored += 1;
        tokens += score.logprobs.len();
        logprob_sum += score.logprobs.iter().map(|&x| f64::from(x)).sum::<f64>();
        if let Some(kl) = score.kl_k3 {
            kl_sum += kl;
            kl_count += 1;
        }
        serde_json::to_writer(&mut out, &score)?;
        out.write_all(b"\n")?;
    }
    bar.finish_and_clear();
    out.flush()?;
    let mut summary = format!(
        "scored {scored} of {} trajectories, {tokens} policy tokens, mean log-prob {:.4}",
        trajectories.len(),
        logprob_sum / tokens.max(1) as f64
    );
    if kl_count > 0 {
        summary.push_str(&format!(
            ", mean k3 KL to the sampling policy {:.5}",
            kl_sum / kl_count as f64
        ));
    }
    eprintln!("{summary}");
    Ok(())
}
