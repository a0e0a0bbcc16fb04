//! Runs (training, rollout and evaluation jobs) and their per-step metrics.

use super::RunSettings;
use super::run_live::{MainJobStage, RunActivity, RunProcess};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// What a run does.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    strum::EnumIter,
    strum::IntoStaticStr,
    strum::Display,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum RunKind {
    /// Supervised fine-tuning.
    Sft,
    /// Group-relative policy optimisation.
    Grpo,
    /// Rollouts only, no training.
    Rollout,
    /// Evaluation of a policy on held-out tasks.
    Eval,
    /// Trajectories brought in from files.
    Import,
}

impl RunKind {
    /// What a stop asked of a run of this kind does, in words (`import-0002 stops …`).
    pub fn stop_words(self) -> &'static str {
        match self {
            Self::Import => "stops following at its next poll",
            _ => "stops after its current step, with a checkpoint",
        }
    }

    /// The kind's name as stored and used in run ids.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Where a run stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Working now.
    Running,
    /// Held by the user; can resume.
    Paused,
    /// Stopped by the user before its last step.
    Stopped,
    /// Finished all its steps.
    Done,
    /// Ended by an error (the message is in `RunInfo::note`).
    Failed,
    /// Its process ended before the run did (killed, or the machine went down): never
    /// stored, seen by whoever finds the process gone; it resumes from its checkpoint.
    Interrupted,
}

impl RunStatus {
    /// The status's name as shown.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Paused => "paused",
            Self::Stopped => "stopped",
            Self::Done => "done",
            Self::Failed => "failed",
            Self::Interrupted => "interrupted",
        }
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A run's record: what it is, how it was configured, and how far it got.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// The run id, e.g. `grpo-0007`.
    pub id: String,
    /// What the run does.
    pub kind: RunKind,
    /// Where it stands.
    pub status: RunStatus,
    /// What it was configured with, by what it is.
    #[serde(default, deserialize_with = "super::run_settings::read_settings")]
    pub config: RunSettings,
    /// The seed every random choice derives from.
    pub seed: u64,
    /// The model folder (or served model name) it started from.
    pub model: String,
    /// The version of Rollscope that ran it.
    pub code_version: String,
    /// The checkpoint or run it continues from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_at: i64,
    /// The last step it completed.
    pub step: u64,
    /// How many steps it is set to take.
    pub total_steps: u64,
    /// A message: why it failed, what it was for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The process training it (the latest, after a resume).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<RunProcess>,
    /// What its current step is doing, while it trains.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activity: Option<RunActivity>,
    /// The main job's stage it is, when the main job started it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<MainJobStage>,
}

/// The version of Rollscope recorded in runs and checkpoints, e.g. `rollscope 0.1.0`.
pub const CODE_VERSION: &str = concat!("rollscope ", env!("CARGO_PKG_VERSION"));

impl RunInfo {
    /// A new run record: running, at step 0, created now, by this version of Rollscope.
    pub fn new(id: String, kind: RunKind, seed: u64, model: String, total_steps: u64) -> Self {
        Self {
            id,
            kind,
            status: RunStatus::Running,
            config: RunSettings::None,
            seed,
            model,
            code_version: CODE_VERSION.to_string(),
            parent: None,
            created_at: crate::trajectory::now_millis(),
            step: 0,
            total_steps,
            note: None,
            process: None,
            activity: None,
            stage: None,
        }
    }
}

/// One row of metrics for one step of a run, with the names TRL and verl use.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricsRow {
    /// The run it belongs to.
    pub run: String,
    /// The training step.
    pub step: u64,
    /// When it was recorded, in milliseconds since the Unix epoch.
    pub time: i64,
    /// Metric name to value, e.g. `reward`, `kl`, `grad_norm`.
    pub values: BTreeMap<String, f64>,
}

impl MetricsRow {
    /// A metric's value, if the row has it.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.values.get(name).copied()
    }
}
