//! The networks a policy can be: our trainable Qwen, or candle-transformers' Llama for
//! inference. Generation goes through this enum and never needs to know which.

use super::error::{ModelError, Result};
use super::kv_cache::SequenceKv;
use super::llama::{LlamaCache, LlamaNet};
use super::pool::on_pool;
use super::qwen::{Qwen, Segment};

/// A causal language model that can extend sequences through their caches.
#[derive(Clone, Debug)]
pub enum Network {
    /// Qwen2 or Qwen3, our implementation (trainable).
    Qwen(Qwen),
    /// Llama from candle-transformers (inference only).
    Llama(LlamaNet),
}

/// The cache of one sequence, of the kind its network uses.
#[derive(Clone, Debug)]
pub enum SequenceCache {
    /// Our preallocated per-layer keys and values.
    Qwen(SequenceKv),
    /// candle-transformers' Llama cache.
    Llama(LlamaCache),
}

impl SequenceCache {
    /// Tokens cached.
    pub fn len(&self) -> usize {
        match self {
            Self::Qwen(cache) => cache.len(),
            Self::Llama(cache) => cache.len(),
        }
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// An independent copy.
    pub fn deep_copy(&self) -> Result<Self> {
        Ok(match self {
            Self::Qwen(cache) => Self::Qwen(cache.deep_copy()?),
            Self::Llama(cache) => Self::Llama(cache.clone()),
        })
    }
}

impl Network {
    /// An empty cache for a new sequence.
    pub fn new_cache(&self) -> SequenceCache {
        match self {
            Self::Qwen(model) => SequenceCache::Qwen(model.new_cache()),
            Self::Llama(model) => SequenceCache::Llama(model.new_cache()),
        }
    }

    /// A copy that records no autograd graph (sharing weights with this one).
    pub fn detached(&self) -> Self {
        match self {
            Self::Qwen(model) => Self::Qwen(model.detached()),
            Self::Llama(model) => Self::Llama(model.clone()),
        }
    }

    /// Runs each sequence's new tokens through the model, appending them to its cache, and
    /// returns the logits (f32) after each sequence's last new token.
    pub fn extend(&self, work: Vec<(&[u32], &mut SequenceCache)>) -> Result<Vec<Vec<f32>>> {
        on_pool(|| -> Result<Vec<Vec<f32>>> {
            match self {
                Self::Qwen(model) => {
                    let mut segments = work
                        .into_iter()
                        .map(|(tokens, cache)| match cache {
                            SequenceCache::Qwen(cache) => Ok(Segment { tokens, cache }),
                            SequenceCache::Llama(_) => Err(mismatched_cache()),
                        })
                        .collect::<Result<Vec<_>>>()?;
                    Ok(model.forward_packed(&mut segments)?.to_vec2()?)
                }
                Self::Llama(model) => work
                    .into_iter()
                    .map(|(tokens, cache)| match cache {
                        SequenceCache::Llama(cache) => model.forward(tokens, cache),
                        SequenceCache::Qwen(_) => Err(mismatched_cache()),
                    })
                    .collect(),
            }
        })
    }
}

fn mismatched_cache() -> ModelError {
    ModelError::Request("a sequence's cache belongs to another kind of network".into())
}
