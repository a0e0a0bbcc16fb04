//! `rollscope loop`: the badcase loop after GRPO, stage by stage with progress, then the
//! held-out figures and error counts of both policies side by side.

use super::Cli;
use super::model::RuntimeArgs;
use super::run_progress::{CliProgress, count_bar};
use super::train::{config_text, run_context};
use crate::curate::SelectionRules;
use crate::run::{
    ConfigSource, LOOP_PRESET, LOOP_STAGES, LoopEvent, LoopOutcome, run_configs, run_loop,
};
use clap::Args;
use indicatif::ProgressBar;
use std::path::PathBuf;

/// Arguments of `rollscope loop`.
#[derive(Debug, Args)]
pub struct LoopArgs {
    /// The run config with a `[loop]` table [default: examples/loop-tiny.toml].
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Override a config key, e.g. `--set seed=1 --set loop.samples=16`.
    #[arg(long, value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Start from this policy folder [default: the config's `model`, else the session's
    /// newest policy].
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Select by the verifier alone (no process scores, no labels), `loop.select.per_task`
    /// kept: the ablation that shows what the labels add. The four arms from one policy:
    /// `--verifier-only --set loop.repair.samples=0` (verifier alone), `--set
    /// loop.repair.samples=0` (labels as a filter), the preset (filter + repair),
    /// `--verifier-only` (repair alone).
    #[arg(long)]
    pub verifier_only: bool,
    /// Device and dtype.
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

/// `rollscope loop`.
pub fn badcase_loop(cli: &Cli, args: &LoopArgs) -> anyhow::Result<()> {
    let (origin, text) = config_text(
        args.config.as_deref(),
        "examples/loop-tiny.toml",
        LOOP_PRESET,
    )?;
    let (_, mut config) = run_configs(&ConfigSource {
        origin: &origin,
        text: &text,
        sets: &args.set,
        sweeps: &[],
    })?
    .remove(0);
    if let Some(model) = &args.model {
        config.model = Some(model.clone());
    }
    let rules = args
        .verifier_only
        .then(|| SelectionRules::verifier_only(config.badcase_loop.select.per_task));
    let context = run_context(cli, &args.runtime)?;
    let mut view = LoopView::new(cli.json);
    let outcome = run_loop(&context, &config, rules, &mut |event| view.on_event(event));
    view.finish();
    let outcome = outcome?;
    if cli.json {
        println!(
            "{}",
            crate::text_json::inert_json_pretty(&summary_json(&outcome))?
        );
    } else {
        for line in summary_lines(&outcome) {
            println!("{line}");
        }
    }
    Ok(())
}

/// The loop's progress on standard error: a line per stage, a bar for the attempts.
struct LoopView {
    json: bool,
    bar: ProgressBar,
    run: CliProgress,
}

impl LoopView {
    fn new(json: bool) -> Self {
        Self {
            json,
            bar: ProgressBar::hidden(),
            run: CliProgress::new(json),
        }
    }

    fn on_event(&mut self, event: LoopEvent) {
        match event {
            LoopEvent::Stage(index) => {
                self.bar.finish_and_clear();
                if !self.json {
                    eprintln!(
                        "loop {}/{}: {}",
                        index + 1,
                        LOOP_STAGES.len(),
                        LOOP_STAGES[index]
                    );
                }
            }
            LoopEvent::EvalProgress { done, total } => self.advance("eval", done, total),
            LoopEvent::Rollout(progress) => self.advance("samples", progress.done, progress.total),
            LoopEvent::RepairProgress { done, total } => self.advance("repairs", done, total),
            LoopEvent::Evaluated(outcome) => {
                self.bar.finish_and_clear();
                if !self.json {
                    eprintln!("  {}: {}", outcome.run, outcome.figures.line());
                }
            }
            LoopEvent::Run(event) => self.run.on_event(event),
        }
    }

    /// Moves the attempts bar, starting a new one when a new count begins.
    fn advance(&mut self, name: &str, done: usize, total: usize) {
        if self.bar.is_finished() || self.bar.length() != Some(total as u64) {
            self.bar.finish_and_clear();
            self.bar = count_bar(total, name, self.json);
        }
        self.bar.set_position(done as u64);
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
        self.run.finish();
    }
}

/// What the loop did and measured, in lines.
fn summary_lines(outcome: &LoopOutcome) -> Vec<String> {
    let (run, rollout) = &outcome.rollout;
    let selection = &outcome.selection;
    let mut lines = vec![
        format!("started from {}", outcome.policy.display()),
        format!(
            "badcase pass {run}: {} samples of {} tasks · success {:.1}% · suggested labels on {} ({})",
            rollout.trajectories,
            selection.tasks,
            100.0 * rollout.success_rate,
            outcome.suggestions.trajectories,
            outcome.suggestions.per_kind_text()
        ),
        format!("selection: {}", outcome.rules.describe()),
        format!(
            "  kept {} samples of {} tasks ({} tasks without a passing sample, {} samples left out by labels, {} below the PRM threshold) → {}",
            selection.samples_kept,
            selection.tasks_kept,
            selection.tasks_no_pass,
            selection.samples_excluded_by_labels,
            selection.samples_below_prm,
            outcome.selection_file.display()
        ),
        repair_line(outcome),
        format!(
            "RS-SFT {}: {} after {} steps · policy {}",
            outcome.sft.run,
            outcome.sft.status.as_str(),
            outcome.sft.step,
            outcome.sft.model.display()
        ),
        String::new(),
        format!(
            "{:<22} {:>8} {:>8}  change, paired by task",
            "held-out (greedy)", "before", "after"
        ),
    ];
    for comparison in &outcome.evals {
        let (before, after) = (
            comparison.before.eval.figures.accuracy,
            comparison.after.eval.figures.accuracy,
        );
        lines.push(format!(
            "{:<22} {:>7.1}% {:>7.1}%  {}",
            comparison.tasks.to_string(),
            100.0 * before,
            100.0 * after,
            comparison.change.describe()
        ));
    }
    lines.push(String::new());
    lines.push("suggested error labels on the held-out attempts, before → after:".into());
    for comparison in &outcome.evals {
        lines.push(format!("  {}", comparison.tasks));
        lines.push(format!(
            "    before {}",
            comparison.before.errors.per_kind_text()
        ));
        lines.push(format!(
            "    after  {}",
            comparison.after.errors.per_kind_text()
        ));
    }
    let runs: Vec<String> = outcome
        .evals
        .iter()
        .flat_map(|c| [c.before.eval.run.clone(), c.after.eval.run.clone()])
        .collect();
    lines.push(format!(
        "compare: rollscope stats (policy versions {}) · label the failures blind: rollscope tui",
        runs.join(", ")
    ));
    lines
}

/// What the repair stage did, in a line.
fn repair_line(outcome: &LoopOutcome) -> String {
    let repair = &outcome.repair;
    let Some(run) = &repair.run else {
        return "repair: no labelled failure to resample (loop.repair.samples, loop.repair.scope)"
            .into();
    };
    format!(
        "repair {run}: {} failures resampled from their first wrong turn ({} placed by a person's label) · {} of {} continuations passed · kept {} samples of {} tasks",
        repair.failures,
        repair.by_hand,
        repair.passed,
        repair.continuations,
        repair.repairs.len(),
        repair.tasks()
    )
}

/// The outcome as JSON.
fn summary_json(outcome: &LoopOutcome) -> serde_json::Value {
    let evals: Vec<serde_json::Value> = outcome
        .evals
        .iter()
        .map(|c| {
            serde_json::json!({
                "tasks": c.tasks.to_string(),
                "before": {"run": c.before.eval.run, "figures": c.before.eval.figures, "errors": c.before.errors},
                "after": {"run": c.after.eval.run, "figures": c.after.eval.figures, "errors": c.after.errors},
                "change": c.change,
            })
        })
        .collect();
    serde_json::json!({
        "policy": outcome.policy,
        "rollout": {"run": outcome.rollout.0, "summary": outcome.rollout.1},
        "suggestions": outcome.suggestions,
        "rules": outcome.rules,
        "selection": outcome.selection,
        "repair": outcome.repair,
        "selection_file": outcome.selection_file,
        "sft": {"run": outcome.sft.run, "status": outcome.sft.status.as_str(), "step": outcome.sft.step, "model": outcome.sft.model},
        "evals": evals,
    })
}
