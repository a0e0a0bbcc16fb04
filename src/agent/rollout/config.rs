//! A rollout run's limits and settings, and the seed each episode derives from them.

use crate::model::SamplingParams;
pub use crate::trajectory::RolloutConfig;
use std::time::Duration;

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
