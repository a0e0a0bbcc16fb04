//! The `[loop]` table of a run config: what the badcase loop samples, selects and measures.

use super::repair::RepairConfig;
use crate::agent::tasks::TaskSetSpec;
use crate::curate::SelectionRules;
use serde::{Deserialize, Serialize};

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

impl Default for LoopConfig {
    fn default() -> Self {
        Self {
            samples: 8,
            select: SelectionRules::default(),
            repair: RepairConfig::default(),
            also_eval: Vec::new(),
        }
    }
}

impl LoopConfig {
    /// The extra held-out sets, each checked.
    pub fn also_eval_specs(&self) -> anyhow::Result<Vec<TaskSetSpec>> {
        self.also_eval
            .iter()
            .map(|text| {
                text.parse::<TaskSetSpec>()
                    .map_err(|error| anyhow::anyhow!("loop.also_eval: {error}"))
            })
            .collect()
    }

    /// Checks the values serde cannot, naming the key.
    pub fn validate(&self) -> anyhow::Result<()> {
        anyhow::ensure!(self.samples > 0, "loop.samples must be positive");
        anyhow::ensure!(
            self.select.per_task > 0,
            "loop.select.per_task must be positive"
        );
        self.also_eval_specs()?;
        Ok(())
    }
}
