//! The main job's pipeline (`rollscope` with no command): on a session's first start it
//! builds the embedded default model, cold-starts it with SFT on scripted calculator
//! demonstrations, then on a mixed set where three in four demonstrations answer without the
//! calculator, each run ending in an evaluation. The GRPO preset then starts from there.
//! Each of its runs records its stage (`RunInfo::stage`), so a later start skips what the
//! main job finished (a user's own runs do not count) and resumes what it left unfinished.

use super::control::RunEvent;
use super::{EvalFigures, RunConfig, RunContext, RunOutcome, SFT_MIXED_PRESET, SFT_PRESET};
use super::{GRPO_PRESET, resume_grpo, resume_sft, train_grpo, train_sft};
use crate::model::LoadOptions;
use crate::model::embedded::{self, EmbeddedSpec};
use crate::store::Store;
use crate::trajectory::{MainJobStage, RunInfo, RunStatus, metric};
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

/// The cold start's SFT runs in order: stage, preset file, what it trains on, the preset.
const COLD_START: [(MainJobStage, &str, &str, &str); 2] = [
    (
        MainJobStage::CalculatorSft,
        "examples/sft-tiny.toml",
        "scripted calculator demonstrations",
        SFT_PRESET,
    ),
    (
        MainJobStage::MixedSft,
        "examples/sft-mixed.toml",
        "a mixed set, three in four answering without the calculator",
        SFT_MIXED_PRESET,
    ),
];

/// Builds the embedded model when the session has none and runs the cold start's SFT
/// presets the main job has not finished yet (resuming one it left unfinished), all with
/// `seed` (the weights' initialisation, the data order and sampling). Returns the last SFT
/// run it made.
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
    for (index, (stage, file, what, preset)) in COLD_START.iter().enumerate() {
        let latest = latest_of_stage(&context.store, *stage)?;
        if latest
            .as_ref()
            .is_some_and(|run| run.status == RunStatus::Done)
        {
            continue;
        }
        on_event(ColdStartEvent::Stage {
            index: index + 1,
            of: COLD_START.len(),
            what,
            file,
        });
        let on_run = &mut |event| on_event(ColdStartEvent::Run(event));
        let resume = match &latest {
            Some(run) => resumable(run)? && has_checkpoint(context, &run.id),
            None => false,
        };
        made = Some(match latest.filter(|_| resume) {
            Some(run) => resume_sft(context, &run.id, on_run)?,
            None => {
                let mut config = RunConfig::parse(preset)?;
                config.seed = seed;
                config.stage = Some(*stage);
                if index == 0 {
                    config.model = Some(base.clone());
                }
                train_sft(context, &config, on_run)?
            }
        });
    }
    Ok(made)
}

/// The main job's GRPO preset with `seed`: `None` when the main job already finished it, a
/// run it left unfinished resumed, else a new one.
pub fn main_job_grpo(
    context: &RunContext,
    seed: u64,
    on_event: &mut dyn FnMut(RunEvent),
) -> anyhow::Result<Option<RunOutcome>> {
    let latest = latest_of_stage(&context.store, MainJobStage::Grpo)?;
    match latest {
        Some(run) if run.status == RunStatus::Done => Ok(None),
        Some(run) if resumable(&run)? => resume_grpo(context, &run.id, on_event).map(Some),
        _ => {
            let mut config = RunConfig::parse(GRPO_PRESET)?;
            config.seed = seed;
            config.stage = Some(MainJobStage::Grpo);
            train_grpo(context, &config, on_event).map(Some)
        }
    }
}

/// The main job's stages not finished yet in the session at `store`, in order.
pub fn main_job_remaining(store: &Store) -> anyhow::Result<Vec<MainJobStage>> {
    let mut remaining = Vec::new();
    for stage in [
        MainJobStage::CalculatorSft,
        MainJobStage::MixedSft,
        MainJobStage::Grpo,
    ] {
        if finished_of_stage(store, stage)?.is_none() {
            remaining.push(stage);
        }
    }
    Ok(remaining)
}

/// Whether a main-job run is resumed rather than started again: it was stopped or its
/// process ended; one that another process still trains is left to it (an error says so).
fn resumable(run: &RunInfo) -> anyhow::Result<bool> {
    match run.status {
        RunStatus::Stopped | RunStatus::Interrupted => Ok(true),
        RunStatus::Running | RunStatus::Paused => anyhow::bail!(
            "the main job's run {} ({}) is training in another process ({}); `rollscope runs` \
             shows it",
            run.id,
            run.stage.map_or("", MainJobStage::name),
            run.process.as_ref().map_or_else(
                || "unknown".to_string(),
                |process| format!("pid {}", process.pid)
            )
        ),
        RunStatus::Done | RunStatus::Failed => Ok(false),
    }
}

/// Whether run `id` saved a checkpoint to resume from.
fn has_checkpoint(context: &RunContext, id: &str) -> bool {
    let files = super::RunFiles::of(&context.paths, id);
    crate::train::latest_checkpoint(&files.checkpoints()).is_ok_and(|found| found.is_some())
}

/// The newest run of a main-job stage, as seen now.
fn latest_of_stage(store: &Store, stage: MainJobStage) -> anyhow::Result<Option<RunInfo>> {
    Ok(store
        .runs()?
        .into_iter()
        .filter(|run| run.stage == Some(stage))
        .map(super::observed)
        .next_back())
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
    for (stage, ..) in COLD_START {
        let Some(run) = finished_of_stage(&context.store, stage)? else {
            continue;
        };
        let Some(accuracy) = final_accuracy(context, &run)? else {
            continue;
        };
        checks.push(match stage {
            MainJobStage::CalculatorSft => GoalCheck {
                stage: "calculator SFT",
                goal: format!("≥ {:.0}% held-out", 100.0 * CALCULATOR_SFT_GOAL),
                accuracy,
                met: accuracy >= CALCULATOR_SFT_GOAL,
            },
            _ => GoalCheck {
                stage: "mixed SFT",
                goal: format!("≤ {:.0}% held-out", 100.0 * (1.0 - ROOM_FOR_GRPO)),
                accuracy,
                met: accuracy <= 1.0 - ROOM_FOR_GRPO,
            },
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

/// The main job's newest finished run of `stage`.
fn finished_of_stage(store: &Store, stage: MainJobStage) -> anyhow::Result<Option<String>> {
    Ok(store
        .runs()?
        .into_iter()
        .filter(|run| run.stage == Some(stage) && run.status == RunStatus::Done)
        .map(|run| run.id)
        .next_back())
}

/// The held-out accuracy that ended the main job's cold start (its mixed SFT run).
pub fn latest_sft_eval(context: &RunContext) -> anyhow::Result<Option<EvalFigures>> {
    let Some(run) = finished_of_stage(&context.store, MainJobStage::MixedSft)? else {
        return Ok(None);
    };
    Ok(final_accuracy(context, &run)?.map(|accuracy| EvalFigures {
        accuracy,
        ..EvalFigures::default()
    }))
}

/// The held-out accuracy that ended the main job's GRPO preset run, with its id.
pub fn main_job_grpo_eval(context: &RunContext) -> anyhow::Result<Option<(String, f64)>> {
    let Some(run) = finished_of_stage(&context.store, MainJobStage::Grpo)? else {
        return Ok(None);
    };
    Ok(final_accuracy(context, &run)?.map(|accuracy| (run, accuracy)))
}

/// The last held-out accuracy a run's metrics rows hold.
fn final_accuracy(context: &RunContext, run: &str) -> anyhow::Result<Option<f64>> {
    let rows = context.store.metrics(run)?;
    Ok(rows
        .iter()
        .rev()
        .find_map(|row| row.get(metric::EVAL_ACCURACY)))
}

/// The lock the main job holds while it works, so a session runs one main job at a time
/// (`<session>/main-job.lock`; the lock ends with the process, however it ends).
pub struct MainJobLock {
    _file: std::fs::File,
}

impl MainJobLock {
    /// Takes the session's main-job lock; `None` when another process holds it.
    pub fn try_acquire(paths: &crate::session::SessionPaths) -> anyhow::Result<Option<Self>> {
        std::fs::create_dir_all(&paths.dir)
            .with_context(|| format!("cannot create {}", paths.dir.display()))?;
        let path = paths.dir.join("main-job.lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => Ok(Some(Self { _file: file })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(error)) => {
                Err(error).with_context(|| format!("cannot lock {}", path.display()))
            }
        }
    }
}
