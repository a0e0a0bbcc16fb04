//! The main job, `rollscope` with no command (the README's first command): on the first start
//! of a session it builds the embedded default model, cold-starts it with SFT on scripted
//! calculator demonstrations, then on a mixed set where half the demonstrations answer
//! without the calculator, and evaluates it, all with progress in the terminal; then it
//! opens the TUI, where the GRPO preset waits in the Runs tab. `--headless` runs the same
//! pipeline and the GRPO preset without the TUI and prints the figures.

use super::Cli;
use super::run_progress::CliProgress;
use super::train::run_context;
use crate::model::LoadOptions;
use crate::model::embedded::{self, EmbeddedSpec};
use crate::run::{
    EvalFigures, GRPO_PRESET, RunConfig, RunContext, RunOutcome, SFT_MIXED_PRESET, SFT_PRESET,
    train_grpo, train_sft,
};
use crate::trajectory::{RunKind, RunStatus};
use anyhow::Context;

/// `rollscope` alone: the first-start pipeline, then the TUI (or, headless, GRPO too).
pub fn main_job(cli: &Cli) -> anyhow::Result<()> {
    let context = run_context(cli, &super::model::RuntimeArgs::cpu())?;
    let cold_start = cold_start(&context)?;
    if let Some(outcome) = &cold_start {
        print_outcome("cold start (SFT)", outcome);
    }
    if !cli.headless {
        drop(context);
        if cold_start.is_some() {
            eprintln!("opening the TUI: the GRPO preset is ready in the Runs tab (key `n`)");
        }
        return super::tui::tui(cli);
    }
    let before = latest_sft_eval(&context)?;
    let config = RunConfig::parse(GRPO_PRESET)?;
    let mut progress = CliProgress::new(cli.json);
    let grpo = train_grpo(&context, &config, &mut |event| progress.on_event(event));
    progress.finish();
    let grpo = grpo?;
    print_outcome("GRPO", &grpo);
    if let (Some(before), Some(after)) = (before, &grpo.eval) {
        println!(
            "held-out accuracy: SFT {:.1}% → GRPO {:.1}% ({:+.1} points)",
            100.0 * before.accuracy,
            100.0 * after.accuracy,
            100.0 * (after.accuracy - before.accuracy)
        );
    }
    Ok(())
}

/// Builds the embedded model and runs the cold start's SFT presets the session has not
/// finished yet. Returns the last SFT run it made.
pub fn cold_start(context: &RunContext) -> anyhow::Result<Option<RunOutcome>> {
    let paths = &context.paths;
    let base = paths.models_dir().join("base");
    if !base.join("config.json").is_file() {
        eprintln!(
            "first start: building the embedded default model in {}",
            base.display()
        );
        let spinner = super::model::spinner("training its tokenizer and initialising".into());
        let built = embedded::init_folder(&base, &EmbeddedSpec::default(), &LoadOptions::default());
        spinner.finish_and_clear();
        let model = built.with_context(|| format!("cannot build {}", base.display()))?;
        eprintln!(
            "built {} ({:.2}M parameters)",
            base.display(),
            model.config.parameter_count() as f64 / 1e6
        );
    }
    let mut made = None;
    for (index, (file, what, preset)) in COLD_START.iter().enumerate() {
        if finished_sft_runs(context)?.len() > index {
            continue;
        }
        eprintln!(
            "cold start {}/{}: SFT on {what} ({file})",
            index + 1,
            COLD_START.len()
        );
        let mut config = RunConfig::parse(preset)?;
        if index == 0 {
            config.model = Some(base.clone());
        }
        let mut progress = CliProgress::new(false);
        let outcome = train_sft(context, &config, &mut |event| progress.on_event(event));
        progress.finish();
        made = Some(outcome?);
    }
    Ok(made)
}

/// The cold start's SFT runs in order: preset file, what it trains on, the preset.
const COLD_START: [(&str, &str, &str); 2] = [
    (
        "examples/sft-tiny.toml",
        "scripted calculator demonstrations",
        SFT_PRESET,
    ),
    (
        "examples/sft-mixed.toml",
        "a mixed set, half answering without the calculator",
        SFT_MIXED_PRESET,
    ),
];

fn finished_sft_runs(context: &RunContext) -> anyhow::Result<Vec<String>> {
    Ok(context
        .store
        .runs()?
        .into_iter()
        .filter(|run| run.kind == RunKind::Sft && run.status == RunStatus::Done)
        .map(|run| run.id)
        .collect())
}

/// The evaluation that ended the session's newest finished SFT run.
fn latest_sft_eval(context: &RunContext) -> anyhow::Result<Option<EvalFigures>> {
    let Some(run) = finished_sft_runs(context)?.pop() else {
        return Ok(None);
    };
    let rows = context.store.metrics(&run)?;
    let Some(accuracy) = rows
        .iter()
        .rev()
        .find_map(|row| row.values.get("eval/accuracy"))
    else {
        return Ok(None);
    };
    Ok(Some(EvalFigures {
        accuracy: *accuracy,
        ..EvalFigures::default()
    }))
}

fn print_outcome(what: &str, outcome: &RunOutcome) {
    let eval = outcome
        .eval
        .as_ref()
        .map(EvalFigures::line)
        .unwrap_or_else(|| "not evaluated".into());
    println!(
        "{what}: {} {} after {} steps · held-out {eval}\n  policy: {}",
        outcome.run,
        outcome.status.as_str(),
        outcome.step,
        outcome.model.display()
    );
}
