//! The names of the metrics in a run's rows, under the spellings TRL and verl users know.
//! The trainer writes them, and the CLI, `watch` and the TUI read them, through these names
//! only; the other stacks' spellings that readers also accept are grouped at the end.

/// Mean outcome reward of the step's rollouts.
pub const REWARD: &str = "reward";
/// Standard deviation of the outcome reward.
pub const REWARD_STD: &str = "reward_std";
/// Share of the step's rollouts that solved their task.
pub const SUCCESS_RATE: &str = "success_rate";
/// Share of groups whose rewards were all equal (no learning signal).
pub const FRAC_REWARD_ZERO_STD: &str = "frac_reward_zero_std";
/// Mean completion length, in tokens.
pub const MEAN_LENGTH: &str = "completions/mean_length";
/// Longest completion, in tokens.
pub const MAX_LENGTH: &str = "completions/max_length";
/// Share of completions cut at the token budget.
pub const CLIPPED_RATIO: &str = "completions/clipped_ratio";
/// Mean assistant turns per rollout.
pub const NUM_TURNS: &str = "num_turns";
/// Tool calls per rollout.
pub const TOOL_CALL_FREQUENCY: &str = "tools/call_frequency";
/// Failed tool calls per rollout.
pub const TOOL_FAILURE_FREQUENCY: &str = "tools/failure_frequency";
/// The prefix of one reward component's mean, e.g. `rewards/format`.
pub const REWARD_COMPONENT_PREFIX: &str = "rewards/";

/// The training loss.
pub const LOSS: &str = "loss";
/// Gradient norm before clipping.
pub const GRAD_NORM: &str = "grad_norm";
/// The learning rate of the step.
pub const LEARNING_RATE: &str = "learning_rate";
/// KL divergence from the reference policy.
pub const KL: &str = "kl";
/// Mean token entropy of the policy.
pub const ENTROPY: &str = "entropy";
/// Share of tokens clipped below the ratio's range.
pub const CLIP_LOW: &str = "clip_ratio/low_mean";
/// Share of tokens clipped above the ratio's range.
pub const CLIP_HIGH: &str = "clip_ratio/high_mean";
/// Share of tokens clipped on either side.
pub const CLIP_REGION: &str = "clip_ratio/region_mean";
/// Tokens trained on.
pub const POLICY_TOKENS: &str = "policy_tokens";
/// Tokens of padding in the step's batches.
pub const PADDED_TOKENS: &str = "padded_tokens";
/// SFT: share of target tokens predicted right.
pub const MEAN_TOKEN_ACCURACY: &str = "mean_token_accuracy";
/// SFT: the epoch, from 1.
pub const EPOCH: &str = "epoch";
/// 1 when a GRPO step had no informative group to train on.
pub const SKIPPED_UPDATE: &str = "skipped_update";
/// The GRPO curriculum's difficulty level.
pub const CURRICULUM_LEVEL: &str = "curriculum/level";
/// Mean staleness of asynchronous rollouts, in policy versions.
pub const ASYNC_STALENESS: &str = "async/staleness";

/// Seconds the step took.
pub const STEP_TIME: &str = "step_time";
/// Tokens trained on per second of the step.
pub const TOKENS_PER_SECOND: &str = "tokens_per_second";
/// Seconds of generation.
pub const TIMING_GENERATE: &str = "timing/generate";
/// Seconds waiting for asynchronous rollouts.
pub const TIMING_WAIT_ROLLOUTS: &str = "timing/wait_rollouts";
/// Seconds of the policy update.
pub const TIMING_TRAIN: &str = "timing/train";
/// Seconds of tool calls.
pub const TIMING_TOOLS: &str = "timing/tools";
/// Seconds of reward computation.
pub const TIMING_REWARD: &str = "timing/reward";
/// Seconds of the held-out evaluation.
pub const TIMING_EVAL: &str = "timing/eval";
/// The prefix of the phases' wall-clock seconds, e.g. `timing/train`.
pub const TIMING_PREFIX: &str = "timing/";

/// Whether a metric measures wall-clock time, so that two runs computing the same numbers
/// still record different values for it.
pub fn is_timing(name: &str) -> bool {
    name == STEP_TIME || name == TOKENS_PER_SECOND || name.starts_with(TIMING_PREFIX)
}

/// Held-out greedy accuracy.
pub const EVAL_ACCURACY: &str = "eval/accuracy";
/// Held-out mean completion length, in tokens.
pub const EVAL_MEAN_LENGTH: &str = "eval/mean_length";
/// Held-out share of well-formed answers.
pub const EVAL_FORMAT_CORRECT: &str = "eval/format_correct";
/// Held-out share of attempts that gave an answer.
pub const EVAL_ANSWERED: &str = "eval/answered";
/// Held-out mean assistant turns.
pub const EVAL_NUM_TURNS: &str = "eval/num_turns";
/// Held-out mean absolute numeric error.
pub const EVAL_NUMERIC_ABS_ERROR: &str = "eval/numeric_abs_error";

/// The name of held-out pass@k, e.g. `eval/pass@4`.
pub fn eval_pass_at(k: usize) -> String {
    format!("eval/pass@{k}")
}

/// The name of one reward component's mean, e.g. `rewards/format`.
pub fn reward_component(name: &str) -> String {
    format!("{REWARD_COMPONENT_PREFIX}{name}")
}

/// Other stacks' spellings of our metrics, each beside the name it stands for.
pub mod foreign {
    /// verl's KL loss.
    pub const VERL_KL_LOSS: &str = "actor/kl_loss";
    /// TRL's KL.
    pub const TRL_KL: &str = "objective/kl";
    /// verl's gradient norm.
    pub const VERL_GRAD_NORM: &str = "actor/grad_norm";
    /// verl's entropy.
    pub const VERL_ENTROPY: &str = "actor/entropy";
    /// verl's clip fraction.
    pub const VERL_CLIP_FRACTION: &str = "actor/pg_clipfrac";
    /// TRL's older clip ratio.
    pub const TRL_CLIP_RATIO: &str = "clip_ratio";
    /// verl's mean response length.
    pub const VERL_RESPONSE_LENGTH: &str = "response_length/mean";
    /// An accuracy logged under its plain name.
    pub const ACCURACY: &str = "accuracy";
    /// Held-out accuracy logged with an underscore.
    pub const EVAL_ACCURACY: &str = "eval_accuracy";
}
