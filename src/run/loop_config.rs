//! The `[loop]` table of a run config: what the badcase loop samples, selects and measures.

use super::repair::RepairConfig;
use crate::agent::tasks::TaskSetSpec;
use crate::curate::SelectionRules;
pub use crate::trajectory::LoopConfig;

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
