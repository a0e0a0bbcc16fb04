//! The badcase loop's settings as plain data (`[loop]` of a run config): what it samples,
//! selects (`curate::select`) and repairs (`run::repair`).

use super::ErrorKind;
use serde::{Deserialize, Serialize};

/// Which failures a repair stage resamples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RepairScope {
    /// Only tasks the selection kept no sample of (where best of N found nothing).
    #[default]
    Unsolved,
    /// Every task with a labelled failure.
    All,
}

/// The `[loop.repair]` table: how labelled failures are repaired.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RepairConfig {
    /// Continuations sampled from each failure's first wrong turn (0: no repair stage).
    pub samples: usize,
    /// Which tasks' failures are repaired: `unsolved` (no sample kept by the selection) or
    /// `all`.
    pub scope: RepairScope,
}

/// How to pick the samples to train on, per task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SelectionRules {
    /// Samples kept per task at most.
    pub per_task: usize,
    /// Keep only samples the verifier passed.
    pub require_pass: bool,
    /// Leave out samples with a confirmed error label.
    pub exclude_confirmed_errors: bool,
    /// Also keep samples a person corrected (`extra.corrected_by`), whatever their verdict
    /// and labels.
    pub include_corrected: bool,
    /// Keep one of several samples of a task with the same completion.
    pub dedup: bool,
    /// Keep as many tasks of each difficulty level as the level with fewest has.
    pub balance_difficulty: bool,
    /// Leave out samples whose lowest process score is below this, or that have none: a
    /// right answer the steps do not support (a lucky guess, a tool result not used) is not
    /// a demonstration.
    pub min_prm: Option<f64>,
    /// Leave out samples with a suggested error label of these kinds too (kinds whose
    /// suggestions are precise enough to trust without a person's look).
    pub exclude_suggested: Vec<ErrorKind>,
    /// Rank a task's samples by their lowest process score before their length (off: the
    /// shortest first, as a selection by the verifier alone does).
    pub rank_by_prm: bool,
}

/// The badcase loop's own settings; the rest of the run config says which tasks it samples
/// (`tasks.train`), evaluates on (`tasks.eval`), and how its RS-SFT trains (`[sft]`,
/// `[trainer]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LoopConfig {
    /// Samples per training task in the badcase pass (the N of best-of-N).
    pub samples: u32,
    /// Which samples the RS-SFT trains on.
    pub select: SelectionRules,
    /// How labelled failures are repaired (`[loop.repair]`).
    pub repair: RepairConfig,
    /// More held-out task sets evaluated before and after, e.g. the cold start's, to see
    /// what the RS-SFT forgot.
    pub also_eval: Vec<String>,
}
