//! Run configs as plain data: the TOML files `rollscope train sft|grpo --config FILE` reads
//! (every key has a default, an unknown key is refused), recorded in each training run's
//! record. Reading, checking and applying them is `run::config`'s.

use super::{AdvantageScale, GrpoConfig};
use super::{LoopConfig, MainJobStage, RolloutConfig, TrainerConfig};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;

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
    /// Share of a drill's numbers drawn from 0–40 (what level-1 problems copy: their operands
    /// and results) instead of every whole-number token (0: uniform over all of them).
    pub drill_focus: f64,
    /// Batch examples of similar length together (little padding, but each batch one kind
    /// of example); false: every batch a random mix, as Hugging Face's Trainer does by
    /// default.
    pub group_by_length: bool,
    /// Scripted calculator demonstrations of task sets mixed into the source (`[[sft.replay]]`
    /// tables): earlier SFT data, so a run on new data (a rejection-sampled selection) does
    /// not forget, or problems of another kind (`weather:train`); one
    /// `replay = { tasks, size }` table reads as a list of one.
    #[serde(deserialize_with = "one_or_many")]
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

/// A key that takes one table or an array of them (`x = { … }`, or `[[x]]` tables), read as
/// a list either way: for `#[serde(deserialize_with = "one_or_many")]`. Errors inside a
/// table keep their key, so an unknown one is still named.
pub fn one_or_many<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    struct OneOrMany<T>(std::marker::PhantomData<T>);
    impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for OneOrMany<T> {
        type Value = Vec<T>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a table or an array of tables")
        }

        fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Vec<T>, A::Error> {
            T::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(|one| vec![one])
        }

        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Vec<T>, A::Error> {
            serde::Deserialize::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))
        }
    }
    deserializer.deserialize_any(OneOrMany(std::marker::PhantomData))
}
