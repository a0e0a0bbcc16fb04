//! What a run's record keeps of how it was configured, typed by what the run is; records
//! written before the settings were typed (a JSON value of one of five shapes) still read.

use super::{RolloutConfig, RunConfig};
use serde::{Deserialize, Deserializer, Serialize};
use std::path::PathBuf;

/// A run's settings, by what the run is.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunSettings {
    /// Nothing recorded (a file import).
    #[default]
    None,
    /// A training run's config (`train sft|grpo`, the badcase loop's runs).
    Training(Box<RunConfig>),
    /// The rollout settings of a rollout or fork run.
    Rollout(Box<RolloutConfig>),
    /// An evaluation run.
    Eval {
        /// The held-out task set, e.g. `arith:2:eval`.
        tasks: String,
        /// How many tasks.
        n: usize,
        /// Sampled attempts per task for pass@k (0: greedy only).
        pass_k: usize,
    },
    /// Another stack's run followed as it is written: its files and folders, made absolute.
    Follow(Vec<PathBuf>),
    /// A run folder imported whole, made absolute.
    Folder(PathBuf),
    /// Synthetic demo data (`rollscope demo-data`).
    Demo {
        /// Samples per GRPO group.
        group_size: u32,
    },
}

impl RunSettings {
    /// The training config, for a training run.
    pub fn training(&self) -> Option<&RunConfig> {
        match self {
            Self::Training(config) => Some(config),
            _ => None,
        }
    }

    /// The rollout settings the run sampled with: a rollout or fork run's, or a training
    /// run's `[rollout]`.
    pub fn rollout(&self) -> Option<&RolloutConfig> {
        match self {
            Self::Rollout(config) => Some(config),
            Self::Training(config) => Some(&config.rollout),
            _ => None,
        }
    }

    /// The paths a follow reads.
    pub fn followed(&self) -> Option<&[PathBuf]> {
        match self {
            Self::Follow(paths) => Some(paths),
            _ => None,
        }
    }
}

/// Reads a record's settings in today's form or in the untyped form of earlier versions.
pub(super) fn read_settings<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<RunSettings, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Stored {
        Current(RunSettings),
        Before(Untyped),
    }
    Ok(match Stored::deserialize(deserializer)? {
        Stored::Current(settings) => settings,
        Stored::Before(untyped) => untyped.into(),
    })
}

/// The shapes records held before their settings were typed (a `follow` or `folder` key
/// reads as today's form already).
#[derive(Deserialize)]
#[serde(untagged)]
enum Untyped {
    /// Nothing: `null`.
    Nothing(()),
    /// `{"tasks", "n", "pass_k"}` of an evaluation.
    Eval {
        tasks: String,
        n: usize,
        pass_k: usize,
    },
    /// `{"note", "group_size"}` of demo data.
    Demo {
        #[serde(rename = "note")]
        _note: String,
        group_size: u32,
    },
    /// A training run's whole config.
    Training(Box<RunConfig>),
    /// A rollout or fork run's rollout settings.
    Rollout(Box<RolloutConfig>),
}

impl From<Untyped> for RunSettings {
    fn from(untyped: Untyped) -> Self {
        match untyped {
            Untyped::Nothing(()) => Self::None,
            Untyped::Eval { tasks, n, pass_k } => Self::Eval { tasks, n, pass_k },
            Untyped::Demo { group_size, .. } => Self::Demo { group_size },
            Untyped::Training(config) => Self::Training(config),
            Untyped::Rollout(config) => Self::Rollout(config),
        }
    }
}
