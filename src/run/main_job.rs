//! The main job's pipeline (`rollscope` with no command): on a session's first start it
//! builds the embedded default model, cold-starts it with SFT on scripted calculator
//! demonstrations, then on a mixed set where three in four demonstrations answer without the
//! calculator, each run ending in an evaluation. The GRPO preset then starts from there.

use super::control::RunEvent;
use super::train_sft;
use super::{EvalFigures, RunConfig, RunContext, RunOutcome, SFT_MIXED_PRESET, SFT_PRESET};
use crate::model::LoadOptions;
use crate::model::embedded::{self, EmbeddedSpec};
use crate::trajectory::{RunKind, RunStatus, metric};
use anyhow::Context;
use std::path::Path;

/// What the cold start is doing, for a progress display.
#[derive(Debug)]
pub enum ColdStartEvent<'a> {
    /// The embedded default model is being built (tokenizer trained, weights initialised).
    BuildingBase(&'a Path),
    /// It was built, with this many parameters.
    BuiltBase {
        /// Its folder.
        dir: &'a Path,
        /// Its parameter count.
        parameters: usize,
    },
    /// SFT stage `index` (from 1) of `of` begins.
    Stage {
        /// The stage, from 1.
        index: usize,
        /// How many stages there are.
        of: usize,
        /// What it trains on.
        what: &'static str,
        /// The preset's file in the project.
        file: &'static str,
    },
    /// An event of the stage's SFT run.
    Run(RunEvent),
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
        "a mixed set, three in four answering without the calculator",
        SFT_MIXED_PRESET,
    ),
];

/// Builds the embedded model when the session has none and runs the cold start's SFT
/// presets the session has not finished yet, all with `seed` (the weights' initialisation,
/// the data order and sampling). Returns the last SFT run it made.
pub fn cold_start(
    context: &RunContext,
    seed: u64,
    on_event: &mut dyn FnMut(ColdStartEvent),
) -> anyhow::Result<Option<RunOutcome>> {
    let base = context.paths.base_model();
    if !base.join("config.json").is_file() {
        on_event(ColdStartEvent::BuildingBase(&base));
        let spec = EmbeddedSpec {
            seed,
            ..EmbeddedSpec::default()
        };
        let model = embedded::init_folder(&base, &spec, &LoadOptions::default())
            .with_context(|| format!("cannot build {}", base.display()))?;
        on_event(ColdStartEvent::BuiltBase {
            dir: &base,
            parameters: model.config.parameter_count(),
        });
    }
    let mut made = None;
    for (index, (file, what, preset)) in COLD_START.iter().enumerate() {
        if finished_sft_runs(context)?.len() > index {
            continue;
        }
        on_event(ColdStartEvent::Stage {
            index: index + 1,
            of: COLD_START.len(),
            what,
            file,
        });
        let mut config = RunConfig::parse(preset)?;
        config.seed = seed;
        if index == 0 {
            config.model = Some(base.clone());
        }
        made = Some(train_sft(context, &config, &mut |event| {
            on_event(ColdStartEvent::Run(event))
        })?);
    }
    Ok(made)
}

/// Held-out greedy accuracy the calculator SFT must reach: copying numbers formed.
pub const CALCULATOR_SFT_GOAL: f64 = 0.95;
/// Room the mixed SFT must leave GRPO: at most `1 − ROOM_FOR_GRPO` held-out accuracy.
pub const ROOM_FOR_GRPO: f64 = 0.40;
/// Points of held-out accuracy GRPO must add over the cold start.
pub const GRPO_GAIN_GOAL: f64 = 0.10;

/// One of the main job's goals, and what a run measured against it.
#[derive(Clone, Debug, PartialEq)]
pub struct GoalCheck {
    /// The stage, e.g. `calculator SFT`.
    pub stage: &'static str,
    /// The goal in words, e.g. `≥ 95% held-out`.
    pub goal: String,
    /// The held-out accuracy measured (for GRPO: after it).
    pub accuracy: f64,
    /// Whether the goal was met.
    pub met: bool,
}

/// The cold start's goals checked against the session's finished SFT runs (one per stage
/// finished): the calculator SFT reaches `CALCULATOR_SFT_GOAL`, the mixed SFT leaves
/// `ROOM_FOR_GRPO`.
pub fn cold_start_goals(context: &RunContext) -> anyhow::Result<Vec<GoalCheck>> {
    let mut checks = Vec::new();
    for (index, run) in finished_sft_runs(context)?
        .iter()
        .take(COLD_START.len())
        .enumerate()
    {
        let Some(accuracy) = final_accuracy(context, run)? else {
            continue;
        };
        checks.push(if index == 0 {
            GoalCheck {
                stage: "calculator SFT",
                goal: format!("≥ {:.0}% held-out", 100.0 * CALCULATOR_SFT_GOAL),
                accuracy,
                met: accuracy >= CALCULATOR_SFT_GOAL,
            }
        } else {
            GoalCheck {
                stage: "mixed SFT",
                goal: format!("≤ {:.0}% held-out", 100.0 * (1.0 - ROOM_FOR_GRPO)),
                accuracy,
                met: accuracy <= 1.0 - ROOM_FOR_GRPO,
            }
        });
    }
    Ok(checks)
}

/// GRPO's goal: `GRPO_GAIN_GOAL` points over the cold start's accuracy `before`.
pub fn grpo_goal(before: f64, after: f64) -> GoalCheck {
    GoalCheck {
        stage: "GRPO",
        goal: format!(
            "≥ {:.0}% held-out ({:+.0} points)",
            100.0 * (before + GRPO_GAIN_GOAL),
            100.0 * GRPO_GAIN_GOAL
        ),
        accuracy: after,
        met: after >= before + GRPO_GAIN_GOAL,
    }
}

/// The session's finished SFT runs, oldest first.
fn finished_sft_runs(context: &RunContext) -> anyhow::Result<Vec<String>> {
    Ok(context
        .store
        .runs()?
        .into_iter()
        .filter(|run| run.kind == RunKind::Sft && run.status == RunStatus::Done)
        .map(|run| run.id)
        .collect())
}

/// The held-out accuracy that ended the session's newest finished SFT run.
pub fn latest_sft_eval(context: &RunContext) -> anyhow::Result<Option<EvalFigures>> {
    let Some(run) = finished_sft_runs(context)?.pop() else {
        return Ok(None);
    };
    Ok(final_accuracy(context, &run)?.map(|accuracy| EvalFigures {
        accuracy,
        ..EvalFigures::default()
    }))
}

/// The last held-out accuracy a run's metrics rows hold.
fn final_accuracy(context: &RunContext, run: &str) -> anyhow::Result<Option<f64>> {
    let rows = context.store.metrics(run)?;
    Ok(rows
        .iter()
        .rev()
        .find_map(|row| row.get(metric::EVAL_ACCURACY)))
}
