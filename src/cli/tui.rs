//! `rollscope tui` (also `rollscope` alone) and `rollscope demo-data`.

use super::Cli;
use crate::engine::demo;
use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

/// Arguments of `rollscope demo-data`.
#[derive(Debug, Args)]
pub struct DemoDataArgs {
    /// How many synthetic trajectories to write.
    #[arg(long, default_value_t = 2000)]
    pub count: u64,
    /// Tokens in each token trace (every other trajectory has one).
    #[arg(long, default_value_t = 400)]
    pub trace_tokens: usize,
    /// Write even when the session already holds trajectories.
    #[arg(long)]
    pub force: bool,
}

/// Arguments of `rollscope tui`.
#[derive(Debug, Default, Args)]
pub struct TuiArgs {
    /// Blind labelling: only failures, in id order (runs and policies mixed), without runs,
    /// policies, process scores or suggested labels, and only the Rollouts tab; what a
    /// hand-labelled evaluation set needs.
    #[arg(long)]
    pub blind: bool,
}

/// `rollscope tui`: opens the terminal UI on the session.
pub fn tui(cli: &Cli, args: &TuiArgs) -> anyhow::Result<()> {
    crate::tui::run(&cli.session_paths()?, cli.open_store()?, args.blind, None)
}

/// `rollscope demo-data`: fills the session with synthetic GRPO rollouts, tasks, a run and
/// its metrics, to try the TUI on.
pub fn demo_data(cli: &Cli, args: &DemoDataArgs) -> anyhow::Result<()> {
    let store = cli.create_store()?;
    let existing = store.trajectory_count()?;
    anyhow::ensure!(
        existing == 0 || args.force,
        "session `{}` already holds {existing} trajectories; pass --force to add the demo set anyway",
        cli.session
    );
    let spec = demo::spec(args.count, args.trace_tokens);
    let bar = ProgressBar::new(args.count);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} trajectories ({per_sec})")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    demo::fill(&store, &spec, |written| bar.set_position(written))
        .with_context(|| format!("cannot write the demo set into session `{}`", cli.session))?;
    bar.finish_and_clear();
    let message = format!(
        "wrote {} synthetic trajectories ({} per step, run {}) into session `{}`",
        args.count,
        spec.per_step,
        demo::DEMO_RUN,
        cli.session
    );
    if cli.json {
        println!(
            "{}",
            crate::text_json::inert_json(
                &serde_json::json!({"trajectories": args.count, "per_step": spec.per_step, "run": demo::DEMO_RUN})
            )?
        );
    } else {
        println!("{message}");
    }
    Ok(())
}
