//! A padded batch whose sequences start alike computes each shared prefix once: the system
//! prompt and tool list every demonstration carries, a GRPO group's prompt, and the opening
//! turns its samples have in common. The residual stream runs on unique rows (a row per
//! distinct prefix, as in a trie of the sequences), so embeddings, norms, projections and the
//! MLP skip the copies; attention, which needs each sequence whole, takes its queries, keys
//! and values expanded to the `B × T` grid and gives back the unique rows. A causal token
//! attends only to its own prefix, so sequences that agree up to a slot have the same row
//! there, and the expansion's backward sums the gradients the sequences send to it: the same
//! figures and gradients as the whole grid.

use candle_core::{Device, Result, Tensor};
use std::collections::HashMap;

/// Fewest rows saved worth the expansion's copies.
pub const MIN_SAVED_ROWS: usize = 16;

/// Where the unique rows of a batch with shared prefixes sit in its `B × T` grid.
#[derive(Clone, Debug)]
pub struct SharedRows {
    /// For each grid slot (`B·T`, u32), its unique row.
    expand: Tensor,
    /// For each unique row (u32), the first grid slot holding it.
    compress: Tensor,
}

impl SharedRows {
    /// The layout of the row-major grid `ids`/`mask` (`batch` rows of `len`), or `None`
    /// when sharing saves fewer than `MIN_SAVED_ROWS` rows.
    pub(crate) fn of(
        ids: &[u32],
        mask: &[u8],
        (batch, len): (usize, usize),
        device: &Device,
    ) -> Result<Option<Self>> {
        if batch < 2 {
            return Ok(None);
        }
        let (expand, compress) = unique_rows(ids, mask, len);
        if batch * len - compress.len() < MIN_SAVED_ROWS {
            return Ok(None);
        }
        let unique = compress.len();
        Ok(Some(Self {
            expand: Tensor::from_vec(expand, batch * len, device)?,
            compress: Tensor::from_vec(compress, unique, device)?,
        }))
    }

    /// How many rows the batch computes.
    pub fn unique_rows(&self) -> usize {
        self.compress.elem_count()
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

/// For each slot of the row-major grid `ids`/`mask` (rows of `len`), its unique row, and for
/// each unique row its first slot. A real token shares the row of every earlier sequence with
/// the same real tokens at the same slots up to it; every padding slot shares one row (no
/// real token sees it, and no loss reads it), and real tokens after padding in a row (left
/// padding) have rows of their own.
fn unique_rows(ids: &[u32], mask: &[u8], len: usize) -> (Vec<u32>, Vec<u32>) {
    const ROOT: u32 = u32::MAX;
    let mut expand = Vec::with_capacity(ids.len());
    let mut compress: Vec<u32> = Vec::new();
    let mut children: HashMap<(u32, u32), u32> = HashMap::new();
    let mut padding_row = None;
    for (row_ids, row_mask) in ids.chunks(len).zip(mask.chunks(len)) {
        let mut parent = Some(ROOT);
        for (&id, &bit) in row_ids.iter().zip(row_mask) {
            let slot = expand.len() as u32;
            let mut new_row = || {
                compress.push(slot);
                compress.len() as u32 - 1
            };
            let row = if bit == 0 {
                parent = None;
                *padding_row.get_or_insert_with(new_row)
            } else if let Some(key) = parent.map(|parent| (parent, id)) {
                let row = *children.entry(key).or_insert_with(new_row);
                parent = Some(row);
                row
            } else {
                new_row()
            };
            expand.push(row);
        }
    }
    (expand, compress)
}
