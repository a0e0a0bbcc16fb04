//! A padded batch of token sequences for the full-sequence (training and scoring) forward:
//! ids, per-token positions and the attention mask, for left or right padding.

use super::error::{ModelError, Result};
use super::shared_prefix::SharedRows;
use candle_core::{DType, Device, Tensor};

/// Which side the padding goes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Padding {
    /// Pads before each sequence (sequences end together; the usual layout for prompts).
    Left,
    /// Pads after each sequence (sequences start together; the usual layout for training).
    Right,
}

/// `B` sequences padded to a common length `T`, ready for `Qwen::forward`.
#[derive(Clone, Debug)]
pub struct TokenBatch {
    /// Token ids `[B, T]` (u32); padding slots hold the pad id.
    pub ids: Tensor,
    /// Position of each token within its own sequence `[B, T]` (u32; 0 on padding), so a
    /// padded sequence is computed exactly as it would be alone.
    pub positions: Tensor,
    /// 1 on real tokens, 0 on padding, row-major `B × T`.
    pub mask: Vec<u8>,
    batch: usize,
    len: usize,
    shared: Option<SharedRows>,
}

impl TokenBatch {
    /// Pads `sequences` to the longest with `pad_id` on the given side.
    pub fn pad(
        sequences: &[Vec<u32>],
        padding: Padding,
        pad_id: u32,
        device: &Device,
    ) -> Result<Self> {
        let len = sequences.iter().map(Vec::len).max().unwrap_or(0);
        let mut ids = Vec::with_capacity(sequences.len() * len);
        let mut mask = Vec::with_capacity(sequences.len() * len);
        for sequence in sequences {
            let pads = len - sequence.len();
            let (before, after) = match padding {
                Padding::Left => (pads, 0),
                Padding::Right => (0, pads),
            };
            ids.extend(
                std::iter::repeat_n(pad_id, before)
                    .chain(sequence.iter().copied())
                    .chain(std::iter::repeat_n(pad_id, after)),
            );
            mask.extend(
                std::iter::repeat_n(0u8, before)
                    .chain(std::iter::repeat_n(1u8, sequence.len()))
                    .chain(std::iter::repeat_n(0u8, after)),
            );
        }
        Self::from_flat(ids, mask, sequences.len(), len, device)
    }

    /// A batch from already padded rows and their attention masks (1 = real token).
    pub fn from_rows(
        ids: &[Vec<u32>],
        attention_mask: &[Vec<u8>],
        device: &Device,
    ) -> Result<Self> {
        let len = ids.first().map_or(0, Vec::len);
        if ids.len() != attention_mask.len() {
            return Err(ModelError::Request(format!(
                "{} rows of ids but {} rows of attention mask",
                ids.len(),
                attention_mask.len()
            )));
        }
        for (row, (tokens, mask)) in ids.iter().zip(attention_mask).enumerate() {
            if tokens.len() != len || mask.len() != len {
                return Err(ModelError::Request(format!(
                    "row {row}: {} ids and {} mask entries, expected {len} of each",
                    tokens.len(),
                    mask.len()
                )));
            }
        }
        let flat_ids = ids.concat();
        let flat_mask = attention_mask
            .iter()
            .flatten()
            .map(|&bit| u8::from(bit != 0))
            .collect();
        Self::from_flat(flat_ids, flat_mask, ids.len(), len, device)
    }

    fn from_flat(
        ids: Vec<u32>,
        mask: Vec<u8>,
        batch: usize,
        len: usize,
        device: &Device,
    ) -> Result<Self> {
        if batch == 0 || len == 0 {
            return Err(ModelError::Request(
                "an empty batch has nothing to compute".into(),
            ));
        }
        let shared = SharedRows::of(&ids, &mask, (batch, len), device)?;
        let mut positions = Vec::with_capacity(ids.len());
        for row in mask.chunks(len) {
            let mut next = 0u32;
            for &bit in row {
                positions.push(if bit == 1 { next } else { 0 });
                next += u32::from(bit);
            }
        }
        Ok(Self {
            ids: Tensor::from_vec(ids, (batch, len), device)?,
            positions: Tensor::from_vec(positions, (batch, len), device)?,
            mask,
            batch,
            len,
            shared,
        })
    }

    /// Number of sequences `B`.
    pub fn batch_size(&self) -> usize {
        self.batch
    }

    /// Padded length `T`.
    pub fn seq_len(&self) -> usize {
        self.len
    }

    /// Where the rows of the prefixes its sequences share sit (`Kernels::shared_prefix`
    /// computes each once), or `None` when sharing would save too little.
    pub fn shared_rows(&self) -> Option<&SharedRows> {
        self.shared.as_ref()
    }

    /// The largest position any token takes, plus one: the context the batch needs.
    pub fn context_needed(&self) -> usize {
        self.mask
            .chunks(self.len)
            .map(|row| row.iter().filter(|&&bit| bit == 1).count())
            .max()
            .unwrap_or(0)
    }

    /// The additive attention bias `[B, 1, 1, T, T]` in `dtype`: 0 where query `t` may see
    /// key `s` (`s ≤ t` and `s` is a real token), a large negative number elsewhere. Rows of
    /// padding queries see nothing and come out as harmless uniform averages.
    pub fn attention_bias(&self, dtype: DType, device: &Device) -> Result<Tensor> {
        const BLOCKED: f32 = -1e9;
        let (batch, len) = (self.batch, self.len);
        let mut bias = vec![BLOCKED; batch * len * len];
        for b in 0..batch {
            let row = &self.mask[b * len..(b + 1) * len];
            for t in 0..len {
                let start = (b * len + t) * len;
                for (s, &bit) in row.iter().enumerate().take(t + 1) {
                    if bit == 1 {
                        bias[start + s] = 0.0;
                    }
                }
            }
        }
        Ok(Tensor::from_vec(bias, (batch, 1, 1, len, len), device)?.to_dtype(dtype)?)
    }
}
