//! Prefix caching for the decoder: a prompt prefilled once is kept (its cache and the logits
//! after it), and a later sequence with the very same prompt starts from a copy, so the G
//! samples of a GRPO group or the N continuations of a fork compute their shared prefix
//! once. Exact matches only: the copy holds the numbers a fresh prefill would compute, so
//! sharing never changes what a sequence samples. Least recently used prompts leave first
//! once the kept prompts pass a token budget.

use super::network::SequenceCache;
use std::collections::{BTreeMap, VecDeque};

/// The default token budget of the prompts a decoder keeps.
pub const DEFAULT_PREFIX_CACHE_TOKENS: usize = 8192;

/// A prefilled prompt: its cache and the logits after its last token.
pub struct CachedPrompt {
    /// The prompt's keys and values.
    pub cache: SequenceCache,
    /// The logits after the prompt.
    pub logits: Vec<f32>,
}

/// Prefilled prompts by their tokens, least recently used first.
pub struct PrefixCache {
    prompts: BTreeMap<Vec<u32>, CachedPrompt>,
    order: VecDeque<Vec<u32>>,
    tokens: usize,
    budget: usize,
    hits: u64,
}

impl PrefixCache {
    /// A cache that keeps prompts of `budget` tokens in all (0 keeps none).
    pub fn new(budget: usize) -> Self {
        Self {
            prompts: BTreeMap::new(),
            order: VecDeque::new(),
            tokens: 0,
            budget,
            hits: 0,
        }
    }

    /// Whether a prompt of `len` tokens would be kept.
    pub fn keeps(&self, len: usize) -> bool {
        len > 0 && len <= self.budget
    }

    /// The cached prefill of exactly `prompt`, marked as just used.
    pub fn get(&mut self, prompt: &[u32]) -> Option<&CachedPrompt> {
        let position = self.order.iter().position(|kept| kept == prompt)?;
        if let Some(key) = self.order.remove(position) {
            self.order.push_back(key);
        }
        self.hits += 1;
        self.prompts.get(prompt)
    }

    /// Keeps `prompt`'s prefill, dropping the least recently used ones past the budget.
    pub fn insert(&mut self, prompt: &[u32], cached: CachedPrompt) {
        if !self.keeps(prompt.len()) || self.prompts.contains_key(prompt) {
            return;
        }
        while self.tokens + prompt.len() > self.budget {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            self.tokens -= oldest.len();
            self.prompts.remove(&oldest);
        }
        self.tokens += prompt.len();
        self.order.push_back(prompt.to_vec());
        self.prompts.insert(prompt.to_vec(), cached);
    }

    /// Sequences that started from a kept prompt so far.
    pub fn hits(&self) -> u64 {
        self.hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::kv_cache::SequenceKv;

    fn prompt() -> CachedPrompt {
        CachedPrompt {
            cache: SequenceCache::Qwen(SequenceKv::new(1, 16)),
            logits: vec![0.5],
        }
    }

    #[test]
    fn the_least_recently_used_prompt_leaves_past_the_budget() {
        let mut cache = PrefixCache::new(6);
        cache.insert(&[1, 2, 3], prompt());
        cache.insert(&[4, 5], prompt());
        assert!(cache.get(&[1, 2, 3]).is_some());
        cache.insert(&[6, 7], prompt());
        assert!(cache.get(&[4, 5]).is_none(), "the oldest use left");
        assert!(cache.get(&[1, 2, 3]).is_some() && cache.get(&[6, 7]).is_some());
        assert!(cache.get(&[1, 2]).is_none(), "exact matches only");
        cache.insert(&[1; 7], prompt());
        assert!(
            cache.get(&[1; 7]).is_none(),
            "longer than the budget: not kept"
        );
        assert_eq!(cache.hits(), 3);
        assert!(!PrefixCache::new(0).keeps(1));
    }
}
