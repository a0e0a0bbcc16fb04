//! The main job, `rollscope` with no command (the README's first command): the library's
//! cold start (`run::cold_start`) with progress in the terminal, then the TUI, where the GRPO
//! preset waits in the Runs tab. `--headless` runs the GRPO preset instead of opening the
//! TUI and prints the figures.

use super::Cli;
use super::run_progress::CliProgress;
use super::train::run_context;
use crate::run::{
    ColdStartEvent, EvalFigures, GRPO_PRESET, GoalCheck, RunConfig, RunOutcome, cold_start,
    cold_start_goals, grpo_goal, latest_sft_eval, train_grpo,
};
use indicatif::ProgressBar;

/// `rollscope` alone: the first-start pipeline, then the TUI (or, headless, GRPO too).
pub fn main_job(cli: &Cli) -> anyhow::Result<()> {
    let context = run_context(cli, &super::model::RuntimeArgs::cpu())?;
    let mut display = ColdStartDisplay::default();
    let cold = cold_start(&context, cli.seed, &mut |event| display.on_event(event));
    display.progress.finish();
    let cold = cold?;
    if let Some(outcome) = &cold {
        print_outcome("cold start (SFT)", outcome);
    }
    print_goals(&cold_start_goals(&context)?);
    if !cli.headless {
        drop(context);
        if cold.is_some() {
            eprintln!("opening the TUI: the GRPO preset is ready in the Runs tab (key `n`)");
        }
        return super::tui::tui(cli, &super::tui::TuiArgs::default());
    }
    let before = latest_sft_eval(&context)?;
    let mut config = RunConfig::parse(GRPO_PRESET)?;
    config.seed = cli.seed;
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
        print_goals(&[grpo_goal(before.accuracy, after.accuracy)]);
    }
    println!(
        "next: the badcase loop on this policy (sample, label, select, RS-SFT, compare): \
         rollscope --session {} loop --set seed={}",
        cli.session, cli.seed
    );
    Ok(())
}

/// The main job's goals, one line each, with the measured figure.
fn print_goals(goals: &[GoalCheck]) {
    for check in goals {
        println!(
            "goal {:<15} {:<28} {:>6.1}%  {}",
            check.stage,
            check.goal,
            100.0 * check.accuracy,
            if check.met { "met" } else { "MISSED" }
        );
    }
}

/// The cold start on standard error: a spinner while the model is built, a bar per SFT run.
struct ColdStartDisplay {
    spinner: Option<ProgressBar>,
    progress: CliProgress,
}

impl Default for ColdStartDisplay {
    fn default() -> Self {
        Self {
            spinner: None,
            progress: CliProgress::new(false),
        }
    }
}

impl ColdStartDisplay {
    fn on_event(&mut self, event: ColdStartEvent) {
        match event {
            ColdStartEvent::BuildingBase(dir) => {
                eprintln!(
                    "first start: building the embedded default model in {}",
                    dir.display()
                );
                self.spinner = Some(super::model::spinner(
                    "training its tokenizer and initialising".into(),
                ));
            }
            ColdStartEvent::BuiltBase { dir, parameters } => {
                if let Some(spinner) = self.spinner.take() {
                    spinner.finish_and_clear();
                }
                eprintln!(
                    "built {} ({:.2}M parameters)",
                    dir.display(),
                    parameters as f64 / 1e6
                );
            }
            ColdStartEvent::Stage {
                index,
                of,
                what,
                file,
            } => {
                self.progress.finish();
                eprintln!("cold start {index}/{of}: SFT on {what} ({file})");
            }
            ColdStartEvent::Run(event) => self.progress.on_event(event),
        }
    }
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
