//! The main job's pipeline (`rollscope` with no command): on a session's first start it
//! builds the embedded default model, cold-starts it with SFT on scripted calculator
//! demonstrations, then on a mixed set where half the demonstrations answer without the
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
        "a mixed set, half answering without the calculator",
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
    let rows = context.store.metrics(&run)?;
    let accuracy = rows
        .iter()
        .rev()
        .find_map(|row| row.get(metric::EVAL_ACCURACY));
    Ok(accuracy.map(|accuracy| EvalFigures {
        accuracy,
        ..EvalFigures::default()
    }))
}
