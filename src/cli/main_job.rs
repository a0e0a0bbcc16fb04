//! The main job, `rollscope` with no command (the README's first command): the TUI at once,
//! while the first start's work (the embedded model, the cold start's SFT runs with their
//! evaluations, then the GRPO preset) runs as a background job of the session, live in the
//! Runs tab. `--headless` does that work in the foreground with progress in the terminal
//! and prints the figures (the background job does the same work in a session of its own,
//! launched as a job spec: `engine::Start::MainJob`). Later starts skip what the main job finished.

use super::Cli;
use super::run_progress::CliProgress;
use super::train::run_context;
use crate::engine::{ComputeDevice, JobLauncher, Start};
use crate::run::{
    ColdStartEvent, EvalFigures, GoalCheck, MainJobLock, RunOutcome, cold_start, cold_start_goals,
    grpo_goal, latest_sft_eval, main_job_grpo, main_job_grpo_eval, main_job_remaining,
};
use crate::session::SessionPaths;
use indicatif::ProgressBar;

/// `rollscope` alone: the TUI, with the main job's remaining work started in the background
/// (or, headless, that work here).
pub fn main_job(cli: &Cli) -> anyhow::Result<()> {
    if cli.headless {
        return headless(cli);
    }
    let paths = cli.session_paths()?;
    let store = cli.create_store()?;
    let notice = match main_job_remaining(&store)?.first() {
        None => None,
        Some(stage) => Some(start_in_background(cli, &paths, stage.name())?),
    };
    crate::tui::run(&paths, store, false, notice)
}

/// Starts the main job (`rollscope --headless`'s work) for the session in the background
/// unless a main job runs already; says what runs for the status bar.
fn start_in_background(cli: &Cli, paths: &SessionPaths, next: &str) -> anyhow::Result<String> {
    if MainJobLock::try_acquire(paths)?.is_none() {
        return Ok(format!(
            "the main job runs in another process ({next}); the Runs tab (F2) follows it"
        ));
    }
    let launched = JobLauncher::this_program()?.launch(
        paths,
        &Start::MainJob { seed: cli.seed },
        ComputeDevice::Cpu,
    )?;
    let (child, log) = (launched.child, launched.log);
    Ok(format!(
        "the main job started in the background (process {}): {next} first; the Runs tab (F2) \
         shows it live; log {}",
        child.id(),
        log.display()
    ))
}

/// `rollscope --headless`: the main job in the foreground, figures printed.
pub(super) fn headless(cli: &Cli) -> anyhow::Result<()> {
    let paths = cli.session_paths()?;
    let Some(_lock) = MainJobLock::try_acquire(&paths)? else {
        anyhow::bail!(
            "the main job of session `{}` already runs in another process; `rollscope runs` \
             shows its runs",
            cli.session
        );
    };
    let context = run_context(cli, &super::model::RuntimeArgs::cpu())?;
    println!(
        "instruction set: {} (the best here: {}; `--isa` chooses, and a run reproduces bit for \
         bit on the same one)",
        crate::model::Isa::chosen(),
        crate::model::Isa::best()
    );
    let mut display = ColdStartDisplay::default();
    let cold = cold_start(&context, cli.seed, &mut |event| display.on_event(event));
    display.progress.finish();
    if let Some(outcome) = &cold? {
        print_outcome("cold start (SFT)", outcome);
    }
    print_goals(&cold_start_goals(&context)?);
    let before = latest_sft_eval(&context)?;
    let mut progress = CliProgress::new(cli.json);
    let grpo = main_job_grpo(&context, cli.seed, &mut |event| progress.on_event(event));
    progress.finish();
    match grpo? {
        Some(outcome) => print_outcome("GRPO", &outcome),
        None => println!("GRPO: the main job's GRPO preset run is done already"),
    }
    if let (Some(before), Some((run, after))) = (before, main_job_grpo_eval(&context)?) {
        println!(
            "held-out accuracy: SFT {:.1}% → GRPO {:.1}% ({:+.1} points, {run})",
            100.0 * before.accuracy,
            100.0 * after,
            100.0 * (after - before.accuracy)
        );
        print_goals(&[grpo_goal(before.accuracy, after)]);
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
