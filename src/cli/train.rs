//! `rollscope train sft|grpo` and `rollscope eval`: runs from a TOML config with a progress
//! bar and a one-line summary per step, resumable after a crash, sweeps over config keys.

use super::Cli;
use super::model::{RuntimeArgs, load_model};
use super::run_progress::CliProgress;
use crate::agent::tasks::TaskSetSpec;
use crate::run::{
    ConfigSource, EvalJob, EvalJobOutcome, RunConfig, RunContext, RunControl, RunOutcome,
    SFT_PRESET, SftSource, SweepPoint, evaluate_model, resume_grpo, resume_sft, run_configs,
    train_grpo, train_sft,
};
use crate::trajectory::{RunKind, RunStatus};
use anyhow::Context;
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::sync::Arc;

/// `rollscope train …`.
#[derive(Debug, Subcommand)]
pub enum TrainCommand {
    /// Supervised fine-tuning on demonstrations or an exported SFT file.
    Sft(TrainArgs),
    /// GRPO: rollouts through the agent loop, group-relative advantages, clipped updates.
    Grpo(TrainArgs),
}

/// Arguments of `rollscope train sft|grpo`.
#[derive(Debug, Args)]
pub struct TrainArgs {
    /// The run config (TOML), e.g. examples/grpo-tiny.toml; every key has a default.
    #[arg(long, required_unless_present_any = ["resume", "from"])]
    pub config: Option<PathBuf>,
    /// `train sft` only: fine-tune the session's newest policy on this SFT export (from
    /// `rollscope select … -o FILE`); the other keys come from `--config`, else from
    /// examples/sft-tiny.toml.
    #[arg(long, value_name = "EXPORT", conflicts_with = "resume")]
    pub from: Option<PathBuf>,
    /// Continue run RUN from its latest checkpoint (after a crash, a stop or a SIGKILL).
    #[arg(long, value_name = "RUN", conflicts_with_all = ["config", "set", "sweep"])]
    pub resume: Option<String>,
    /// Override a config key, e.g. `--set seed=2 --set grpo.steps=10`.
    #[arg(long, value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Sweep a key over values, e.g. `--sweep trainer.learning_rate=1e-4,3e-4`; several
    /// sweeps form a grid; each point is a sibling run, compared at the end.
    #[arg(long, value_name = "KEY=V1,V2,…")]
    pub sweep: Vec<String>,
    /// Device and dtype.
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

/// Arguments of `rollscope eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The model folder [default: the session's newest policy].
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Held-out tasks: arith:2:eval, gsm8k:test, a task JSONL file …
    #[arg(long, default_value = "arith:2:eval")]
    pub tasks: TaskSetSpec,
    /// How many tasks.
    #[arg(long, short = 'n', default_value_t = 200)]
    pub n: usize,
    /// Sampled attempts per task for pass@k (0: greedy accuracy only).
    #[arg(long, default_value_t = 4)]
    pub pass_k: usize,
    /// Tools to offer, comma-separated (default: the tools each task offers).
    #[arg(long, value_delimiter = ',', default_value = "calculator")]
    pub tools: Vec<String>,
    /// Seed of task generation.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Device and dtype.
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

/// `rollscope train …`.
pub fn train(cli: &Cli, command: &TrainCommand) -> anyhow::Result<()> {
    let (kind, args) = match command {
        TrainCommand::Sft(args) => (RunKind::Sft, args),
        TrainCommand::Grpo(args) => (RunKind::Grpo, args),
    };
    if let Some(run) = &args.resume {
        return resume(cli, kind, run, &args.runtime);
    }
    anyhow::ensure!(
        args.from.is_none() || kind == RunKind::Sft,
        "--from EXPORT trains on an SFT file: use it with `train sft`"
    );
    let (origin, text) = config_text(args.config.as_deref(), "examples/sft-tiny.toml", SFT_PRESET)?;
    if let Some(export) = &args.from {
        anyhow::ensure!(
            export.is_file(),
            "no SFT export at {}: write one with `rollscope select --per-task 1 -o FILE`",
            export.display()
        );
    }
    let mut configs = run_configs(&ConfigSource {
        origin: &origin,
        text: &text,
        sets: &args.set,
        sweeps: &args.sweep,
    })?;
    if let Some(export) = &args.from {
        for (_, config) in &mut configs {
            config.sft.source = SftSource::File(export.clone());
        }
    }
    train_configs(cli, kind, configs, &args.runtime)
}

/// Trains a run of `kind` for each config (the points of a sweep one after another, until
/// one does not finish), then prints the outcomes.
pub(super) fn train_configs(
    cli: &Cli,
    kind: RunKind,
    configs: Vec<(SweepPoint, RunConfig)>,
    runtime: &RuntimeArgs,
) -> anyhow::Result<()> {
    let context = run_context(cli, runtime)?;
    let mut outcomes = Vec::new();
    for (point, config) in configs {
        if !point.is_empty() {
            eprintln!("sweep point: {}", point.describe());
        }
        let mut progress = CliProgress::new(cli.json);
        let outcome = match kind {
            RunKind::Sft => train_sft(&context, &config, &mut |e| progress.on_event(e)),
            _ => train_grpo(&context, &config, &mut |e| progress.on_event(e)),
        };
        progress.finish();
        let outcome = outcome?;
        let stopped = outcome.status != RunStatus::Done;
        outcomes.push(outcome);
        if stopped {
            break;
        }
    }
    report(cli, &outcomes)
}

/// Continues run `run` of `kind` from its latest checkpoint, then prints the outcome.
pub(super) fn resume(
    cli: &Cli,
    kind: RunKind,
    run: &str,
    runtime: &RuntimeArgs,
) -> anyhow::Result<()> {
    let context = run_context(cli, runtime)?;
    let mut progress = CliProgress::new(cli.json);
    let outcome = match kind {
        RunKind::Sft => resume_sft(&context, run, &mut |e| progress.on_event(e)),
        _ => resume_grpo(&context, run, &mut |e| progress.on_event(e)),
    };
    progress.finish();
    report(cli, &[outcome?])
}

/// The text of a run config and where it came from: the file given, else the preset
/// compiled in from `preset_file`.
pub(super) fn config_text(
    path: Option<&std::path::Path>,
    preset_file: &str,
    preset: &str,
) -> anyhow::Result<(String, String)> {
    Ok(match path {
        Some(path) => (
            path.display().to_string(),
            std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the run config {}", path.display()))?,
        ),
        None => (preset_file.to_string(), preset.to_string()),
    })
}

/// The run context of the CLI: the session's store and tools, a control that Ctrl-C stops.
pub(super) fn run_context(cli: &Cli, runtime_args: &RuntimeArgs) -> anyhow::Result<RunContext> {
    let control = RunControl::new();
    let store = Arc::new(cli.create_store()?);
    let context = RunContext::new(
        store,
        cli.session_paths()?,
        runtime_args.load_options()?,
        control.clone(),
    )?;
    context.runtime.spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!(
                "\nstopping after this step (a checkpoint is written); Ctrl-C again to abort"
            );
            control.stop();
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(130);
            }
        }
    });
    Ok(context)
}

fn report(cli: &Cli, outcomes: &[RunOutcome]) -> anyhow::Result<()> {
    if cli.json {
        for outcome in outcomes {
            let line = serde_json::json!({
                "run": outcome.run, "status": outcome.status.as_str(), "step": outcome.step,
                "model": outcome.model, "eval": outcome.eval,
            });
            println!("{}", crate::text_json::inert_json(&line)?);
        }
        return Ok(());
    }
    for outcome in outcomes {
        let eval = outcome
            .eval
            .as_ref()
            .map(|figures| figures.line())
            .unwrap_or_else(|| "not evaluated".into());
        println!(
            "{} {} after {} steps · {eval}\n  policy: {}\n  resume: rollscope train … --resume {}",
            outcome.run,
            outcome.status.as_str(),
            outcome.step,
            outcome.model.display(),
            outcome.run
        );
    }
    Ok(())
}

/// `rollscope eval`.
pub fn eval(cli: &Cli, args: &EvalArgs) -> anyhow::Result<()> {
    let context = run_context(cli, &args.runtime)?;
    context
        .environment
        .tools
        .check_names(&args.tools)
        .context("--tools")?;
    let dir = super::model::policy_dir(cli, args.model.as_deref(), Some(&context.store))?;
    let model = load_model(&dir, &args.runtime)?;
    let job = EvalJob {
        tasks: args.tasks.clone(),
        n: args.n,
        pass_k: args.pass_k,
        tools: args.tools.clone(),
        seed: args.seed,
    };
    let bar = super::run_progress::count_bar(job.attempts(args.n), "eval", cli.json);
    let outcome = evaluate_model(&context, &model, &dir, &job, &mut |done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    });
    bar.finish_and_clear();
    let EvalJobOutcome {
        run,
        model,
        figures,
    } = outcome?;
    if cli.json {
        println!(
            "{}",
            crate::text_json::inert_json(
                &serde_json::json!({"run": run, "model": model, "figures": figures})
            )?
        );
    } else {
        println!(
            "{run}: {} on {} tasks of {}",
            figures.line(),
            figures.tasks,
            args.tasks
        );
        println!("  attempts stored: rollscope list --run {run}");
    }
    Ok(())
}
