//! Run configs: the TOML files `rollscope train sft|grpo --config FILE` reads. Every key has
//! a default, so a config names only what it changes; an unknown key, in any table, is an
//! error that names the file, the line, the table and the key probably meant.

use super::loop_config::LoopConfig;
use crate::agent::rollout::RolloutConfig;
use crate::agent::tasks::TaskSetSpec;
use crate::config_file::from_toml;
use crate::train::advantage::AdvantageScale;
use crate::train::{GrpoConfig, TrainerConfig};
use crate::trajectory::MainJobStage;
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Which tasks a run trains and evaluates on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TaskConfig {
    /// Training tasks: `arith:2`, `gsm8k`, a task JSONL file …
    pub train: String,
    /// How many training tasks to draw.
    pub train_size: usize,
    /// Held-out tasks for evaluation (`arith:2:eval` …).
    pub eval: String,
    /// How many held-out tasks.
    pub eval_size: usize,
    /// Seed of task generation (kept apart from the run seed so seeds share tasks).
    pub seed: u64,
}

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

/// How often a run evaluates and what it measures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EvalConfig {
    /// Evaluate every this many steps (0: only before the first and after the last).
    pub every: u64,
    /// Sampled attempts per task for pass@k (0: greedy accuracy only).
    pub pass_k: usize,
    /// Sampling temperature of the pass@k attempts.
    pub temperature: f64,
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

/// Where the demonstrations of an SFT run come from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum SftSource {
    /// Scripted calculator demonstrations of the training tasks (their annotated solutions
    /// replayed as tool calls whose results the real calculator computes).
    Demos,
    /// A file of conversations: an SFT export (`rollscope select … -o FILE`), OpenAI
    /// messages, ShareGPT, TRL or our own JSONL.
    File(PathBuf),
}

/// The SFT part of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SftConfig {
    /// Where the examples come from.
    pub source: SftSource,
    /// Passes over the examples.
    pub epochs: usize,
    /// Sequences per optimizer step at most.
    pub batch_size: usize,
    /// Padded tokens per optimizer step at most.
    pub batch_tokens: usize,
    /// Token slots of one micro-batch: a step's batch is cut by length into micro-batches
    /// whose gradients are summed (the same step, less memory); 0: the batch at once.
    pub micro_batch_tokens: usize,
    /// Fraction of scripted demonstrations that answer directly, without the calculator
    /// (chosen per task by the run seed): a cold-start set with both styles, so that RL
    /// has a choice to learn.
    pub direct_answers: f64,
    /// Put the user messages' text (the questions) in the loss too, not only what the
    /// policy writes: predicting a question's repeated names and numbers teaches the
    /// attention that copies them.
    pub loss_on_user: bool,
    /// Copy drills mixed into the demonstrations: texts of random whole numbers whose
    /// numbers the assistant lists in order, which teach the attention that copies a
    /// question's numbers into the calculator call (`run::drills`).
    pub copy_drills: usize,
    /// Batch examples of similar length together (little padding, but each batch one kind
    /// of example); false: every batch a random mix, as Hugging Face's Trainer does by
    /// default.
    pub group_by_length: bool,
    /// Scripted calculator demonstrations of task sets mixed into the source (`[[sft.replay]]`
    /// tables): earlier SFT data, so a run on new data (a rejection-sampled selection) does
    /// not forget, or problems of another kind (`weather:train`); one
    /// `replay = { tasks, size }` table reads as a list of one.
    #[serde(deserialize_with = "crate::config_file::one_or_many")]
    pub replay: Vec<ReplayConfig>,
}

/// Scripted calculator demonstrations replayed beside an SFT run's own examples.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayConfig {
    /// The task set whose demonstrations are replayed, e.g. `arith:1:train`.
    pub tasks: String,
    /// How many.
    pub size: usize,
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
            group_by_length: true,
            replay: Vec::new(),
        }
    }
}

/// Sampling task difficulty so that groups succeed about half the time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CurriculumConfig {
    /// Whether difficulty adapts (the training tasks must be `arith` or `lookup` without a
    /// level).
    pub enabled: bool,
    /// The group success rate aimed at.
    pub target: f64,
    /// The level the run starts at.
    pub start_level: u32,
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

/// The GRPO part of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GrpoRunConfig {
    /// Steps: each rolls out a batch of tasks and updates the policy.
    pub steps: u64,
    /// Tasks per step.
    pub tasks_per_step: usize,
    /// G: rollouts per task.
    pub group: u32,
    /// Advantage scale: `unbiased` or `biased` standard deviation, or `none` (Dr. GRPO).
    pub advantage_scale: AdvantageScale,
    /// Drop groups whose rewards are all equal (they carry no signal) and count them.
    pub dynamic_sampling: bool,
    /// Weight of per-turn process scores mixed into per-turn advantages (0: outcome only).
    pub prm_weight: f64,
    /// Trajectories cut by the token budget get this reward instead of their own (none:
    /// keep it).
    pub overlong_reward: Option<f64>,
    /// The update: β, clip ranges, aggregation, μ iterations, temperature.
    pub update: GrpoConfig,
    /// Difficulty sampling.
    pub curriculum: CurriculumConfig,
    /// Generate step k+1's rollouts while step k trains, with a copy of the policy from
    /// before step k's update: staleness 1, recorded on each trajectory; the importance
    /// ratio is against those behaviour log-probs. Full fine-tuning only (not LoRA).
    pub async_rollouts: bool,
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

/// A run config: the shared keys, then `[sft]`, `[grpo]` or `[loop]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunConfig {
    /// Run name prefix (the run id adds a number).
    pub name: String,
    /// Seed of everything random in the run.
    pub seed: u64,
    /// The starting model folder (default: the session's newest policy).
    pub model: Option<PathBuf>,
    /// Save a checkpoint every this many steps (0: only at the end).
    pub checkpoint_every: u64,
    /// The main job's stage this run is (set by the main job for its own runs, so a later
    /// start knows what is done; `calculator-sft`, `mixed-sft` or `grpo`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stage: Option<MainJobStage>,
    /// Tasks.
    pub tasks: TaskConfig,
    /// Optimizer, LoRA, and a fixed schedule when `warmup_decay` is off.
    pub trainer: TrainerConfig,
    /// Warm the learning rate up over 10% of the run's optimizer steps, then decay it
    /// linearly to zero (replaces `trainer.schedule`).
    pub warmup_decay: bool,
    /// Rollout limits and sampling.
    pub rollout: RolloutConfig,
    /// Evaluation.
    pub eval: EvalConfig,
    /// SFT settings (`train sft`).
    pub sft: SftConfig,
    /// GRPO settings (`train grpo`).
    pub grpo: GrpoRunConfig,
    /// The badcase loop's settings (`rollscope loop`).
    #[serde(rename = "loop")]
    pub badcase_loop: LoopConfig,
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
        Ok(())
    }

    /// The config as TOML (what a run records beside its checkpoints).
    pub fn to_toml(&self) -> anyhow::Result<String> {
        Ok(toml::to_string_pretty(self)?)
    }
}

#[cfg(test)]
mod tests;
