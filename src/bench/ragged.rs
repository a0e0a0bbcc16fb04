//! Decoding at the rollout shape: the agent loop keeps many sequences in flight, each with its
//! own prompt (multi-turn prefixes differ in length) and its own answer length; a finished
//! sequence leaves the batch at once and a waiting one takes its place, its prompt prefilled
//! in the same packed step (continuous batching). Every length is a pure function of the
//! sequence's index, so `examples/bench_pytorch.py` builds the same workload.

use super::random_tokens;
use super::steps::{Timing, timed};
use crate::model::{Decoder, Network, SamplingParams, SequenceId};
use rand::rngs::StdRng;
use serde::Serialize;

/// A ragged decoding workload.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct RaggedShape {
    /// Sequences in all.
    pub sequences: usize,
    /// Most sequences decoded together.
    pub in_flight: usize,
}

impl RaggedShape {
    /// What a GRPO step of the preset decodes at most: 64 sequences in flight, 128 in all.
    pub const ROLLOUT: Self = Self {
        sequences: 128,
        in_flight: 64,
    };

    /// Prompt tokens of sequence `index`: 32 to 352.
    pub fn prompt_tokens(index: usize) -> usize {
        32 + (index * 97) % 321
    }

    /// New tokens of sequence `index`: 16 to 127.
    pub fn new_tokens(index: usize) -> usize {
        16 + (index * 53) % 112
    }

    /// New tokens of every sequence together.
    pub fn total_new_tokens(&self) -> usize {
        (0..self.sequences).map(Self::new_tokens).sum()
    }

    /// The longest sequence, prompt and new tokens, of the workload.
    pub fn longest(&self) -> usize {
        (0..self.sequences)
            .map(|index| Self::prompt_tokens(index) + Self::new_tokens(index))
            .max()
            .unwrap_or(0)
    }

    /// Random prompts of the workload's lengths.
    pub fn prompts(&self, rng: &mut StdRng, vocab: usize) -> Vec<Vec<u32>> {
        (0..self.sequences)
            .map(|index| random_tokens(rng, Self::prompt_tokens(index), vocab))
            .collect()
    }
}

/// Times greedy decoding of `prompts` (one per sequence of `shape`), each for its own number
/// of new tokens, at most `shape.in_flight` at a time.
pub fn time_ragged_decode(
    network: &Network,
    context: usize,
    shape: RaggedShape,
    prompts: &[Vec<u32>],
) -> anyhow::Result<Timing> {
    timed(|| {
        let mut decoder = Decoder::new(network, context);
        let mut waiting = (0..prompts.len()).rev().collect::<Vec<_>>();
        let mut in_flight: Vec<(SequenceId, usize)> = Vec::with_capacity(shape.in_flight);
        loop {
            while in_flight.len() < shape.in_flight
                && let Some(index) = waiting.pop()
            {
                let id = decoder.add_sequence(&prompts[index], SamplingParams::greedy())?;
                in_flight.push((id, RaggedShape::new_tokens(index)));
            }
            if in_flight.is_empty() {
                return Ok(());
            }
            let ids: Vec<SequenceId> = in_flight.iter().map(|(id, _)| *id).collect();
            decoder.step(&ids)?;
            for (id, left) in &mut in_flight {
                *left -= 1;
                if *left == 0 {
                    decoder.remove(*id)?;
                }
            }
            in_flight.retain(|(_, left)| *left > 0);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::RaggedShape;

    #[test]
    fn lengths_stay_in_their_ranges_and_vary() {
        let prompts: Vec<usize> = (0..128).map(RaggedShape::prompt_tokens).collect();
        let answers: Vec<usize> = (0..128).map(RaggedShape::new_tokens).collect();
        assert!(prompts.iter().all(|&n| (32..=352).contains(&n)));
        assert!(answers.iter().all(|&n| (16..=127).contains(&n)));
        assert!(prompts.iter().max().unwrap() - prompts.iter().min().unwrap() > 300);
        assert!(answers.iter().max().unwrap() - answers.iter().min().unwrap() > 100);
        assert_eq!(RaggedShape::ROLLOUT.longest(), 466);
        assert_eq!(
            RaggedShape::ROLLOUT.total_new_tokens(),
            answers.iter().sum::<usize>()
        );
    }
}
