//! Step-level generation for agent loops: sequences are added, extended with tokens from
//! outside (tool observations), and advanced one token at a time in batched steps over
//! whichever sequences the caller chooses, so a sequence waiting for a tool blocks nobody.
//!
//! Work is lazy: tokens added by `add_sequence` and `append` (and each sampled token) wait
//! until the next `step` or `prefill` of that sequence, which runs every waiting token of
//! every chosen sequence in one packed forward.

use super::error::{ModelError, Result};
use super::network::{Network, SequenceCache};
use super::prefix_cache::{CachedPrompt, PrefixCache};
use super::sampling::{SampledToken, Sampler, SamplingParams};
use std::collections::BTreeMap;
use std::fmt;

/// A handle to one sequence of a `Decoder`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SequenceId(u64);

impl fmt::Display for SequenceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sequence {}", self.0)
    }
}

struct Sequence {
    tokens: Vec<u32>,
    cache: SequenceCache,
    next_logits: Option<Vec<f32>>,
    sampler: Sampler,
}

impl Sequence {
    fn pending(&self) -> &[u32] {
        &self.tokens[self.cache.len()..]
    }
}

/// Sequences being generated, each with its own cache and seeded sampler.
pub struct Decoder {
    network: Network,
    context: usize,
    sequences: BTreeMap<SequenceId, Sequence>,
    next_id: u64,
    prompts: PrefixCache,
}

impl Decoder {
    /// A decoder over `network` (detached: it records no gradients and sees in-place
    /// parameter updates) with a context window of `context` tokens; every sequence
    /// prefills its own prompt.
    pub fn new(network: &Network, context: usize) -> Self {
        Self {
            network: network.detached(),
            context,
            sequences: BTreeMap::new(),
            next_id: 0,
            prompts: PrefixCache::new(0),
        }
    }

    /// The same decoder keeping prefilled prompts of `tokens` tokens in all (0: none), for
    /// sequences that repeat one (`DEFAULT_PREFIX_CACHE_TOKENS` is a good budget). A kept
    /// prompt is not computed again after a parameter update: use it while the weights
    /// stay as they are.
    pub fn with_prefix_cache(mut self, tokens: usize) -> Self {
        self.prompts = PrefixCache::new(tokens);
        self
    }

    /// Starts a sequence from `prompt`. A prompt the prefix cache keeps is prefilled now,
    /// once, and every sequence with the same prompt starts from a copy of its cache;
    /// another waits for its first step.
    pub fn add_sequence(&mut self, prompt: &[u32], sampling: SamplingParams) -> Result<SequenceId> {
        if prompt.is_empty() {
            return Err(ModelError::Request(
                "a sequence needs at least one prompt token".into(),
            ));
        }
        self.check_room(prompt.len())?;
        let (cache, next_logits) = if self.prompts.keeps(prompt.len()) {
            let (cache, logits) = self.prefilled(prompt)?;
            (cache, Some(logits))
        } else {
            (self.network.new_cache(), None)
        };
        let id = SequenceId(self.next_id);
        self.next_id += 1;
        self.sequences.insert(
            id,
            Sequence {
                tokens: prompt.to_vec(),
                cache,
                next_logits,
                sampler: Sampler::new(sampling),
            },
        );
        Ok(id)
    }

    /// A copy of `prompt`'s prefilled cache and logits, prefilling it (alone, as any prompt
    /// is) when the cache does not hold it yet.
    fn prefilled(&mut self, prompt: &[u32]) -> Result<(SequenceCache, Vec<f32>)> {
        if let Some(kept) = self.prompts.get(prompt) {
            return Ok((kept.cache.deep_copy()?, kept.logits.clone()));
        }
        let mut cache = self.network.new_cache();
        let logits = self
            .network
            .extend(vec![(prompt, &mut cache)])?
            .pop()
            .ok_or_else(|| ModelError::Request("a prefill returned no logits".into()))?;
        let copy = (cache.deep_copy()?, logits.clone());
        self.prompts.insert(prompt, CachedPrompt { cache, logits });
        Ok(copy)
    }

    /// Sequences that started from a prompt the prefix cache already held.
    pub fn prefix_hits(&self) -> u64 {
        self.prompts.hits()
    }

    /// A copy of `parent` (tokens, cache and pending logits) that samples with `sampling`:
    /// a group of samples of one prompt prefills it once.
    pub fn fork(&mut self, parent: SequenceId, sampling: SamplingParams) -> Result<SequenceId> {
        let source = self.sequence(parent)?;
        let child = Sequence {
            tokens: source.tokens.clone(),
            cache: source.cache.deep_copy()?,
            next_logits: source.next_logits.clone(),
            sampler: Sampler::new(sampling),
        };
        let id = SequenceId(self.next_id);
        self.next_id += 1;
        self.sequences.insert(id, child);
        Ok(id)
    }

    /// Appends tokens from outside (an observation) to a sequence.
    pub fn append(&mut self, id: SequenceId, tokens: &[u32]) -> Result<()> {
        let length = self.sequence(id)?.tokens.len() + tokens.len();
        self.check_room(length)?;
        let sequence = self.sequence_mut(id)?;
        sequence.tokens.extend_from_slice(tokens);
        if !tokens.is_empty() {
            sequence.next_logits = None;
        }
        Ok(())
    }

    /// Runs the waiting tokens of the chosen sequences into their caches now.
    pub fn prefill(&mut self, ids: &[SequenceId]) -> Result<()> {
        let chosen = chosen(&mut self.sequences, ids)?;
        let (steps, prompts): (Vec<&mut Sequence>, Vec<&mut Sequence>) = chosen
            .into_iter()
            .filter(|sequence| !sequence.pending().is_empty())
            .partition(|sequence| sequence.pending().len() == 1);
        Self::extend(&self.network, steps)?;
        for prompt in prompts {
            Self::extend(&self.network, vec![prompt])?;
        }
        Ok(())
    }

    /// One packed forward over the waiting tokens of `work`. Decoding steps (one token each)
    /// share a forward, in the small-batch kernel that computes each row alike in any batch;
    /// longer extensions (prompts, observations) run one sequence per forward, so a
    /// sequence's numbers never depend on which other sequences are in flight.
    fn extend(network: &Network, work: Vec<&mut Sequence>) -> Result<()> {
        if work.is_empty() {
            return Ok(());
        }
        let mut pending = Vec::with_capacity(work.len());
        let mut logit_slots = Vec::with_capacity(work.len());
        for sequence in work {
            let start = sequence.cache.len();
            let Sequence {
                tokens,
                cache,
                next_logits,
                ..
            } = sequence;
            pending.push((&tokens[start..], cache));
            logit_slots.push(next_logits);
        }
        let logits = network.extend(pending)?;
        for (slot, row) in logit_slots.into_iter().zip(logits) {
            *slot = Some(row);
        }
        Ok(())
    }

    /// Advances each chosen sequence by one token: runs what waits, samples, and returns the
    /// tokens in the order of `ids`. The sampled token becomes part of the sequence.
    pub fn step(&mut self, ids: &[SequenceId]) -> Result<Vec<SampledToken>> {
        for &id in ids {
            let length = self.sequence(id)?.tokens.len();
            self.check_room(length + 1)?;
        }
        self.prefill(ids)?;
        let mut picked = Vec::with_capacity(ids.len());
        for &id in ids {
            let sequence = self.sequence_mut(id)?;
            let logits = sequence
                .next_logits
                .take()
                .ok_or_else(|| ModelError::Request(format!("{id} has no logits to sample from")))?;
            let token = sequence.sampler.pick(&logits);
            sequence.tokens.push(token.token);
            picked.push(token);
        }
        Ok(picked)
    }

    /// Every token of a sequence so far: prompt, sampled and appended.
    pub fn tokens(&self, id: SequenceId) -> Result<&[u32]> {
        Ok(&self.sequence(id)?.tokens)
    }

    /// How many more tokens the sequence can take before the context is full.
    pub fn room(&self, id: SequenceId) -> Result<usize> {
        Ok(self.context.saturating_sub(self.sequence(id)?.tokens.len()))
    }

    /// Drops a sequence and returns its tokens.
    pub fn remove(&mut self, id: SequenceId) -> Result<Vec<u32>> {
        self.sequences
            .remove(&id)
            .map(|sequence| sequence.tokens)
            .ok_or_else(|| unknown(id))
    }

    /// The live sequences.
    pub fn ids(&self) -> Vec<SequenceId> {
        self.sequences.keys().copied().collect()
    }

    /// Number of live sequences.
    pub fn len(&self) -> usize {
        self.sequences.len()
    }

    /// Whether no sequence is live.
    pub fn is_empty(&self) -> bool {
        self.sequences.is_empty()
    }

    /// The context window in tokens.
    pub fn context_window(&self) -> usize {
        self.context
    }

    fn check_room(&self, tokens: usize) -> Result<()> {
        if tokens > self.context {
            return Err(ModelError::ContextFull {
                tokens,
                limit: self.context,
            });
        }
        Ok(())
    }

    fn sequence(&self, id: SequenceId) -> Result<&Sequence> {
        self.sequences.get(&id).ok_or_else(|| unknown(id))
    }

    fn sequence_mut(&mut self, id: SequenceId) -> Result<&mut Sequence> {
        self.sequences.get_mut(&id).ok_or_else(|| unknown(id))
    }
}

/// The sequences named by `ids`, each at most once.
fn chosen<'a>(
    sequences: &'a mut BTreeMap<SequenceId, Sequence>,
    ids: &[SequenceId],
) -> Result<Vec<&'a mut Sequence>> {
    let mut wanted = ids.to_vec();
    wanted.sort();
    if wanted.windows(2).any(|pair| pair[0] == pair[1]) {
        return Err(ModelError::Request(
            "a sequence was named twice in one step".into(),
        ));
    }
    if let Some(&missing) = wanted.iter().find(|id| !sequences.contains_key(id)) {
        return Err(unknown(missing));
    }
    Ok(sequences
        .iter_mut()
        .filter(|(id, _)| wanted.binary_search(id).is_ok())
        .map(|(_, sequence)| sequence)
        .collect())
}

fn unknown(id: SequenceId) -> ModelError {
    ModelError::Request(format!("no {id} in this decoder"))
}
