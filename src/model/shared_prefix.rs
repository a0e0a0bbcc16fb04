//! A padded batch whose sequences start with the same tokens (the system prompt and tool
//! list every demonstration carries, a group's prompt) computes those tokens once. The
//! residual stream runs on unique rows, the shared prefix once and then each sequence's own
//! slots, so embeddings, norms, projections and the MLP skip the copies; attention, which
//! needs each sequence whole, takes its queries, keys and values expanded to the `B × T`
//! grid and gives back the unique rows. A causal prefix attends only to itself, so its rows
//! are the same in every sequence, and the expansion's backward sums the gradients the
//! sequences send to them: the same figures and gradients as the whole grid.

use super::batch::TokenBatch;
use candle_core::{Device, Result, Tensor};

/// Fewest shared tokens worth the expansion's copies.
pub const MIN_SHARED_TOKENS: usize = 16;

/// Where the unique rows of a batch with a shared prefix sit in its `B × T` grid.
#[derive(Clone, Debug)]
pub struct SharedRows {
    /// For each grid slot (`B·T`, u32), its unique row.
    expand: Tensor,
    /// For each unique row (u32), a grid slot holding it: the first sequence's for the prefix.
    compress: Tensor,
}

impl SharedRows {
    /// The layout of `batch`, or `None` when its sequences share fewer than
    /// `MIN_SHARED_TOKENS` leading tokens.
    pub fn of(batch: &TokenBatch, device: &Device) -> Result<Option<Self>> {
        let prefix = batch.shared_prefix();
        if prefix < MIN_SHARED_TOKENS {
            return Ok(None);
        }
        let (b, t) = (batch.batch_size(), batch.seq_len());
        let own = t - prefix;
        let expand: Vec<u32> = (0..b)
            .flat_map(|row| {
                (0..t).map(move |slot| {
                    let unique = if slot < prefix {
                        slot
                    } else {
                        prefix + row * own + slot - prefix
                    };
                    unique as u32
                })
            })
            .collect();
        let compress: Vec<u32> = (0..prefix)
            .chain((0..b).flat_map(|row| (prefix..t).map(move |slot| row * t + slot)))
            .map(|slot| slot as u32)
            .collect();
        let unique = compress.len();
        Ok(Some(Self {
            expand: Tensor::from_vec(expand, b * t, device)?,
            compress: Tensor::from_vec(compress, unique, device)?,
        }))
    }

    /// The batch's token ids `[B, T]` as unique rows `[U]`.
    pub fn unique_ids(&self, ids: &Tensor) -> Result<Tensor> {
        ids.flatten_all()?.index_select(&self.compress, 0)
    }

    /// Unique rows `[U, width]` spread over the grid, `[B·T, width]`.
    pub fn expand(&self, rows: &Tensor) -> Result<Tensor> {
        rows.index_select(&self.expand, 0)
    }

    /// Grid rows `[B·T, width]` gathered to the unique rows, `[U, width]`.
    pub fn compress(&self, grid: &Tensor) -> Result<Tensor> {
        grid.index_select(&self.compress, 0)
    }

    /// Grid slots (u32, indices into `B·T`) as the unique rows holding them.
    pub fn unique_slots(&self, slots: &Tensor) -> Result<Tensor> {
        self.expand.index_select(slots, 0)
    }
}
