//! How rollouts run, as plain data: turn and token budgets, sampling, tools and process
//! scores (`[rollout]` of a run config; a rollout or fork run's record). The loop is
//! `agent::rollout`.

use serde::{Deserialize, Serialize};

/// Limits and settings of a rollout run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RolloutConfig {
    /// Assistant turns at most.
    pub max_turns: usize,
    /// New tokens per turn at most.
    pub max_new_tokens: usize,
    /// Policy tokens per trajectory at most.
    pub max_tokens: usize,
    /// Sampling temperature (0 = greedy).
    pub temperature: f64,
    /// Nucleus sampling (1 keeps all).
    pub top_p: f64,
    /// Top-k sampling (0 keeps all).
    pub top_k: usize,
    /// Seed of the samplers (each episode derives its own from it).
    pub seed: u64,
    /// Deadline of each tool call, in milliseconds.
    pub tool_timeout_ms: u64,
    /// Tools offered: the task's tools that are in this list (all of them when empty).
    pub tools: Vec<String>,
    /// Score every step with the rule checker.
    pub prm_rule: bool,
    /// Monte-Carlo process scores: continuations per step (0 = off).
    pub prm_monte_carlo: usize,
    /// Episodes in flight at most.
    pub max_in_flight: usize,
    /// Tool calls running at once across the run, at most (0 = no limit). A call waiting
    /// for its turn has not started: its deadline counts from when it does.
    pub max_concurrent_tools: usize,
}
