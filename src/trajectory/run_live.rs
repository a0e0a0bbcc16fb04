//! A run while it trains, as every process on the session sees it: the process that trains
//! it, what its current step is doing, what a user asked of it, and which stage of the main
//! job it is.

use serde::{Deserialize, Serialize};

/// The part of a step a run is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Generating rollouts.
    Rollouts,
    /// Updating the policy.
    Update,
    /// Evaluating on held-out tasks.
    Eval,
    /// Writing a checkpoint.
    Checkpoint,
}

impl Phase {
    /// The phase's name in progress lines.
    pub fn name(self) -> &'static str {
        match self {
            Self::Rollouts => "rollouts",
            Self::Update => "update",
            Self::Eval => "eval",
            Self::Checkpoint => "checkpoint",
        }
    }
}

/// Progress inside a step: `done` of `total` units of `phase`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunActivity {
    /// The step being made (1-based; 0 is the evaluation before the first).
    pub step: u64,
    /// Rollouts, update, evaluation or checkpoint.
    pub phase: Phase,
    /// Units done.
    pub done: u64,
    /// Units in all.
    pub total: u64,
}

/// The process that trains a run: enough to tell, on its machine, whether it still lives
/// (a pid alone can be reused; its start time cannot).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunProcess {
    /// Its process id.
    pub pid: u32,
    /// The machine's host name.
    pub host: String,
    /// When the process started, in clock ticks since the machine booted (`/proc/PID/stat`).
    pub started_ticks: u64,
    /// Where its output goes, when it runs in the background.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
}

/// What a user asked of a training run, from any process on the session; the process that
/// trains it acts on it between steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunRequest {
    /// Wait after the current step.
    Pause,
    /// Go on after a pause.
    Resume,
    /// Checkpoint and end after the current step.
    Stop,
}

/// The main job's stages: its own runs, so a later start knows what is done (a user's own
/// SFT run is not the cold start).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MainJobStage {
    /// SFT on scripted calculator demonstrations.
    CalculatorSft,
    /// SFT on the mixed set.
    MixedSft,
    /// The GRPO preset.
    Grpo,
}

impl MainJobStage {
    /// The stage in words.
    pub fn name(self) -> &'static str {
        match self {
            Self::CalculatorSft => "cold start 1/2: calculator SFT",
            Self::MixedSft => "cold start 2/2: mixed SFT",
            Self::Grpo => "the GRPO preset",
        }
    }
}
