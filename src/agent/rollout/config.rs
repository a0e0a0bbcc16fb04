//! A rollout run's limits and settings, and the seed each episode derives from them.

use crate::model::SamplingParams;
use serde::{Deserialize, Serialize};
use std::time::Duration;

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

impl Default for RolloutConfig {
    fn default() -> Self {
        Self {
            max_turns: 4,
            max_new_tokens: 192,
            max_tokens: 512,
            temperature: 1.0,
            top_p: 1.0,
            top_k: 0,
            seed: 0,
            tool_timeout_ms: 10_000,
            tools: Vec::new(),
            prm_rule: true,
            prm_monte_carlo: 0,
            max_in_flight: 256,
            max_concurrent_tools: 0,
        }
    }
}

impl RolloutConfig {
    /// The sampling settings of one episode, seeded from its place.
    pub fn sampling(&self, salt: u64) -> SamplingParams {
        SamplingParams {
            temperature: self.temperature,
            top_p: self.top_p,
            top_k: self.top_k,
            seed: mix(self.seed, salt),
        }
    }

    pub(crate) fn tool_timeout(&self) -> Duration {
        Duration::from_millis(self.tool_timeout_ms)
    }
}

/// Mixes two numbers into a seed (splitmix64).
pub fn mix(seed: u64, salt: u64) -> u64 {
    let mut z = seed ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
