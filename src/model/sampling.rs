//! Choosing the next token: greedy, or sampling with temperature, top-k and top-p from a
//! seeded generator, with the log-prob and entropy of the choice (see `logprobs` for the
//! convention).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// How to pick tokens.
#[derive(Clone, Debug, PartialEq)]
pub struct SamplingParams {
    /// Softmax temperature; 0 means greedy (the most likely token, lowest id on ties).
    pub temperature: f64,
    /// Nucleus sampling: keep the smallest set of most likely tokens whose probability
    /// reaches `top_p` (1 keeps all).
    pub top_p: f64,
    /// Keep only the `top_k` most likely tokens (0 keeps all).
    pub top_k: usize,
    /// Seed of this sequence's random generator.
    pub seed: u64,
}

impl Default for SamplingParams {
    fn default() -> Self {
        Self::greedy()
    }
}

impl SamplingParams {
    /// Greedy decoding.
    pub fn greedy() -> Self {
        Self {
            temperature: 0.0,
            top_p: 1.0,
            top_k: 0,
            seed: 0,
        }
    }

    /// Sampling at `temperature` with no truncation, seeded.
    pub fn sample(temperature: f64, seed: u64) -> Self {
        Self {
            temperature,
            top_p: 1.0,
            top_k: 0,
            seed,
        }
    }

    /// Whether tokens are picked greedily.
    pub fn is_greedy(&self) -> bool {
        self.temperature <= 0.0
    }

    /// The temperature the recorded log-probs are computed at: the sampling temperature,
    /// or 1 for greedy decoding. Training must use the same one.
    pub fn logprob_temperature(&self) -> f64 {
        if self.is_greedy() {
            1.0
        } else {
            self.temperature
        }
    }

    /// The same settings with another seed.
    pub fn with_seed(&self, seed: u64) -> Self {
        Self {
            seed,
            ..self.clone()
        }
    }
}

/// A chosen token with its log-prob and the entropy of the distribution it came from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SampledToken {
    /// The token id.
    pub token: u32,
    /// `log softmax(logits / T)[token]`, `T = SamplingParams::logprob_temperature()`.
    pub logprob: f32,
    /// Entropy of `softmax(logits / T)`.
    pub entropy: f32,
}

/// Picks tokens for one sequence, with its own seeded generator so that results do not
/// depend on which other sequences share a batch.
#[derive(Clone, Debug)]
pub struct Sampler {
    params: SamplingParams,
    rng: StdRng,
}

impl Sampler {
    /// A sampler seeded from `params.seed`.
    pub fn new(params: SamplingParams) -> Self {
        let rng = StdRng::seed_from_u64(params.seed);
        Self { params, rng }
    }

    /// Its settings.
    pub fn params(&self) -> &SamplingParams {
        &self.params
    }

    /// Chooses a token from one row of logits.
    pub fn pick(&mut self, logits: &[f32]) -> SampledToken {
        let temperature = self.params.logprob_temperature();
        let scaled: Vec<f64> = logits.iter().map(|&x| f64::from(x) / temperature).collect();
        let max = scaled.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = scaled.iter().map(|x| (x - max).exp()).sum();
        let log_norm = max + sum.ln();
        let entropy = scaled
            .iter()
            .map(|x| {
                let logp = x - log_norm;
                -logp.exp() * logp
            })
            .sum::<f64>();
        let token = if self.params.is_greedy() {
            argmax(logits)
        } else {
            self.draw(&scaled, log_norm)
        };
        SampledToken {
            token: token as u32,
            logprob: (scaled[token] - log_norm) as f32,
            entropy: entropy as f32,
        }
    }

    /// Samples from the top-k / top-p truncation of `softmax(scaled)`.
    fn draw(&mut self, scaled: &[f64], log_norm: f64) -> usize {
        let mut candidates: Vec<(usize, f64)> = scaled
            .iter()
            .enumerate()
            .map(|(index, x)| (index, (x - log_norm).exp()))
            .collect();
        let truncate = self.params.top_k > 0 || self.params.top_p < 1.0;
        if truncate {
            candidates.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            if self.params.top_k > 0 {
                candidates.truncate(self.params.top_k);
            }
            if self.params.top_p < 1.0 {
                let total: f64 = candidates.iter().map(|c| c.1).sum();
                let mut cumulative = 0.0;
                let keep = candidates
                    .iter()
                    .position(|c| {
                        cumulative += c.1 / total;
                        cumulative >= self.params.top_p
                    })
                    .map_or(candidates.len(), |index| index + 1);
                candidates.truncate(keep.max(1));
            }
        }
        let total: f64 = candidates.iter().map(|c| c.1).sum();
        let mut threshold = self.rng.random::<f64>() * total;
        for &(index, probability) in &candidates {
            threshold -= probability;
            if threshold < 0.0 {
                return index;
            }
        }
        candidates.last().map_or(0, |c| c.0)
    }
}

/// The index of the largest value (the first one on ties).
pub fn argmax(values: &[f32]) -> usize {
    let mut best = 0;
    for (index, &value) in values.iter().enumerate() {
        if value > values[best] {
            best = index;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greedy_picks_the_first_maximum_with_its_log_prob() {
        let mut sampler = Sampler::new(SamplingParams::greedy());
        let picked = sampler.pick(&[0.0, 2.0, 2.0, -1.0]);
        assert_eq!(picked.token, 1);
        let norm = (1.0f64 + 2.0 * 2f64.exp() + (-1f64).exp()).ln();
        assert!((f64::from(picked.logprob) - (2.0 - norm)).abs() < 1e-6);
    }

    #[test]
    fn top_k_one_is_greedy_and_seeds_repeat() {
        let logits: Vec<f32> = (0..50).map(|i| ((i * 37) % 11) as f32 * 0.3).collect();
        let params = SamplingParams {
            top_k: 1,
            ..SamplingParams::sample(1.0, 9)
        };
        let mut sampler = Sampler::new(params.clone());
        for _ in 0..20 {
            assert_eq!(sampler.pick(&logits).token as usize, argmax(&logits));
        }
        let draw = |seed| {
            let mut sampler = Sampler::new(SamplingParams::sample(1.0, seed));
            (0..30)
                .map(|_| sampler.pick(&logits).token)
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(5), draw(5));
        assert_ne!(draw(5), draw(6));
    }

    #[test]
    fn top_p_keeps_only_the_nucleus() {
        let logits = [5.0f32, 4.9, -5.0, -5.0, -5.0];
        let params = SamplingParams {
            top_p: 0.9,
            ..SamplingParams::sample(1.0, 3)
        };
        let mut sampler = Sampler::new(params);
        for _ in 0..200 {
            assert!(sampler.pick(&logits).token < 2);
        }
    }
}
