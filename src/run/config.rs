//! Run configs: the TOML files `rollscope train sft|grpo --config FILE` reads. Every key has
//! a default, so a config names only what it changes; an unknown key, in any table, is an
//! error that names the file, the line, the table and the key probably meant. The types are
//! plain data in `trajectory` (a training run's record keeps its config: `RunSettings`); their
//! defaults, reading and checks are here.

use super::loop_config::LoopConfig;
use crate::agent::rollout::RolloutConfig;
use crate::agent::tasks::TaskSetSpec;
use crate::config_file::from_toml;
use crate::train::advantage::AdvantageScale;
use crate::train::{GrpoConfig, TrainerConfig};
pub use crate::trajectory::{
    CurriculumConfig, EvalConfig, GrpoRunConfig, ReplayConfig, RunConfig, SftConfig, SftSource,
    TaskConfig,
};
use anyhow::Context;
use std::path::Path;

impl Default for TaskConfig {
    fn default() -> Self {
        Self {
            train: "arith:2:train".into(),
            train_size: 2000,
            eval: "arith:2:eval".into(),
            eval_size: 200,
            seed: 0,
        }
    }
}

impl TaskConfig {
    /// The training task set.
    pub fn train_spec(&self) -> anyhow::Result<TaskSetSpec> {
        parse_spec(&self.train, "tasks.train")
    }

    /// The held-out task set.
    pub fn eval_spec(&self) -> anyhow::Result<TaskSetSpec> {
        parse_spec(&self.eval, "tasks.eval")
    }
}

fn parse_spec(text: &str, field: &str) -> anyhow::Result<TaskSetSpec> {
    text.parse::<TaskSetSpec>()
        .map_err(|error| anyhow::anyhow!("{field}: {error}"))
}

impl Default for EvalConfig {
    fn default() -> Self {
        Self {
            every: 10,
            pass_k: 0,
            temperature: 1.0,
        }
    }
}

impl ReplayConfig {
    /// The replayed task set.
    pub fn spec(&self) -> anyhow::Result<TaskSetSpec> {
        parse_spec(&self.tasks, "sft.replay.tasks")
    }
}

impl Default for SftConfig {
    fn default() -> Self {
        Self {
            source: SftSource::Demos,
            epochs: 1,
            batch_size: 16,
            batch_tokens: 8192,
            micro_batch_tokens: 0,
            direct_answers: 0.0,
            loss_on_user: false,
            copy_drills: 0,
            drill_focus: 0.0,
            group_by_length: true,
            replay: Vec::new(),
        }
    }
}

impl Default for CurriculumConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            target: 0.5,
            start_level: 1,
        }
    }
}

impl Default for GrpoRunConfig {
    fn default() -> Self {
        Self {
            steps: 40,
            tasks_per_step: 16,
            group: 8,
            advantage_scale: AdvantageScale::Unbiased,
            dynamic_sampling: true,
            prm_weight: 0.0,
            overlong_reward: None,
            update: GrpoConfig::default(),
            curriculum: CurriculumConfig::default(),
            async_rollouts: false,
        }
    }
}

impl Default for RunConfig {
    fn default() -> Self {
        Self {
            name: "run".into(),
            seed: 0,
            model: None,
            checkpoint_every: 10,
            stage: None,
            warmup_decay: true,
            tasks: TaskConfig::default(),
            trainer: TrainerConfig::default(),
            rollout: RolloutConfig::default(),
            eval: EvalConfig::default(),
            sft: SftConfig::default(),
            grpo: GrpoRunConfig::default(),
            badcase_loop: LoopConfig::default(),
        }
    }
}

impl RunConfig {
    /// Reads a config file; errors name the file, the line and the key.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the run config {}", path.display()))?;
        Self::read(&text, &path.display().to_string())
    }

    /// Parses config text (a preset's); errors name `the run config` and the line.
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        Self::read(text, "the run config")
    }

    /// Parses config text read from `origin`, every key checked, and validates it.
    pub fn read(text: &str, origin: &str) -> anyhow::Result<Self> {
        let config: Self = from_toml(text, origin)?;
        config.validate().with_context(|| origin.to_string())?;
        Ok(config)
    }

    /// Checks the values serde cannot, naming the key.
    pub fn validate(&self) -> anyhow::Result<()> {
        self.trainer.validate()?;
        self.tasks.train_spec()?;
        self.tasks.eval_spec()?;
        for replay in &self.sft.replay {
            replay.spec()?;
        }
        self.badcase_loop.validate()?;
        let grpo = &self.grpo;
        anyhow::ensure!(
            grpo.group >= 2,
            "grpo.group must be at least 2 (got {})",
            grpo.group
        );
        anyhow::ensure!(
            grpo.tasks_per_step > 0,
            "grpo.tasks_per_step must be positive"
        );
        anyhow::ensure!(
            grpo.update.iterations > 0,
            "grpo.update.iterations must be positive"
        );
        anyhow::ensure!(
            (0.0..=1.0).contains(&grpo.curriculum.target),
            "grpo.curriculum.target must lie in [0, 1]"
        );
        anyhow::ensure!(
            grpo.update.temperature == self.rollout.temperature,
            "grpo.update.temperature ({}) must equal rollout.temperature ({}): the behaviour \
             log-probs are recorded at the sampling temperature",
            grpo.update.temperature,
            self.rollout.temperature
        );
        anyhow::ensure!(self.sft.batch_size > 0, "sft.batch_size must be positive");
        anyhow::ensure!(self.sft.epochs > 0, "sft.epochs must be positive");
        anyhow::ensure!(
            !(self.grpo.async_rollouts && self.trainer.lora.is_some()),
            "grpo.async_rollouts works with full fine-tuning only: remove [trainer.lora] or \
             set grpo.async_rollouts = false"
        );
        anyhow::ensure!(
            (0.0..=1.0).contains(&self.sft.direct_answers),
            "sft.direct_answers must be a fraction between 0 and 1, not {}",
            self.sft.direct_answers
        );
        anyhow::ensure!(
            (0.0..=1.0).contains(&self.sft.drill_focus),
            "sft.drill_focus must be a fraction between 0 and 1, not {}",
            self.sft.drill_focus
        );
        Ok(())
    }

    /// The config as TOML (what a run records beside its checkpoints).
    pub fn to_toml(&self) -> anyhow::Result<String> {
        Ok(toml::to_string_pretty(self)?)
    }
}

#[cfg(test)]
mod tests;
