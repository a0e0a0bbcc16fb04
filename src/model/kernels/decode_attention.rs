//! Decoding attention on a host key/value cache: for the new tokens of several sequences at
//! once, rotate queries and keys, append keys and values to each sequence's cache, and attend
//! causally over it, with one task per (sequence, KV head) on the thread pool.

use super::attention::{AttentionGeometry, rotate};
use super::{Isa, simd};
use rayon::prelude::*;

/// One layer's cache of one sequence: rotated keys and values, token-major
/// `[len, kv_heads, head_dim]`, in plain vectors that grow by appending.
#[derive(Clone, Debug, Default)]
pub struct HostKv {
    keys: Vec<f32>,
    values: Vec<f32>,
    width: usize,
}

impl HostKv {
    /// An empty cache with room for `tokens` tokens of `kv_heads · head_dim` values.
    pub fn with_capacity(tokens: usize, width: usize) -> Self {
        Self {
            keys: Vec::with_capacity(tokens * width),
            values: Vec::with_capacity(tokens * width),
            width,
        }
    }

    /// Tokens cached.
    pub fn len(&self) -> usize {
        self.keys.len().checked_div(self.width).unwrap_or(0)
    }

    fn key(&self, token: usize, head: usize, dim: usize) -> &[f32] {
        let start = token * self.width + head * dim;
        &self.keys[start..start + dim]
    }

    fn value(&self, token: usize, head: usize, dim: usize) -> &[f32] {
        let start = token * self.width + head * dim;
        &self.values[start..start + dim]
    }
}

/// Where one sequence's new tokens sit among the packed rows.
#[derive(Clone, Copy, Debug)]
pub struct PackedSequence {
    /// Its first row.
    pub start: usize,
    /// Its number of new tokens.
    pub count: usize,
}

/// Packed rows of one decoding step: `q [N, heads·d]`, `k` and `v [N, kv_heads·d]` before the
/// rotary embedding, `cos`/`sin [N, d/2]` at each row's position.
pub struct DecodeRows<'a> {
    /// Query projections.
    pub q: &'a [f32],
    /// Key projections.
    pub k: &'a [f32],
    /// Value projections.
    pub v: &'a [f32],
    /// Half-width rotary cosines of each row's position.
    pub cos: &'a [f32],
    /// Half-width rotary sines of each row's position.
    pub sin: &'a [f32],
}

/// Appends each sequence's new keys and values to its cache and returns the attention output
/// `[N, heads·d]` of every packed row; row `t` of a sequence sees its cache up to itself.
pub fn attend_packed(
    rows: &DecodeRows<'_>,
    sequences: &[PackedSequence],
    caches: &mut [&mut HostKv],
    geometry: AttentionGeometry,
    isa: Isa,
) -> Vec<f32> {
    let AttentionGeometry {
        heads,
        kv_heads,
        head_dim: d,
    } = geometry;
    let (group, half) = (heads / kv_heads, d / 2);
    let scale = 1.0 / (d as f32).sqrt();
    let total = rows.q.len() / (heads * d);
    let mut queries = vec![0.0f32; rows.q.len()];
    let mut rotated_key = vec![0.0f32; d];
    for (sequence, cache) in sequences.iter().zip(caches.iter_mut()) {
        if cache.width == 0 {
            cache.width = kv_heads * d;
        }
        for row in sequence.start..sequence.start + sequence.count {
            let (cos, sin) = (
                &rows.cos[row * half..(row + 1) * half],
                &rows.sin[row * half..(row + 1) * half],
            );
            for head in 0..heads {
                let at = (row * heads + head) * d;
                rotate(
                    &rows.q[at..at + d],
                    cos,
                    sin,
                    scale,
                    &mut queries[at..at + d],
                );
            }
            for head in 0..kv_heads {
                let at = (row * kv_heads + head) * d;
                rotate(&rows.k[at..at + d], cos, sin, 1.0, &mut rotated_key);
                cache.keys.extend_from_slice(&rotated_key);
                cache.values.extend_from_slice(&rows.v[at..at + d]);
            }
        }
    }
    let caches: Vec<&HostKv> = caches.iter().map(|cache| &**cache).collect();
    let outputs: Vec<Vec<f32>> = (0..sequences.len() * kv_heads)
        .into_par_iter()
        .map(|task| {
            let (index, kv) = (task / kv_heads, task % kv_heads);
            let (sequence, cache) = (sequences[index], caches[index]);
            let past = cache.len() - sequence.count;
            let mut out = vec![0.0f32; sequence.count * group * d];
            let mut scores = Vec::with_capacity(cache.len());
            for t in 0..sequence.count {
                for j in 0..group {
                    let at = ((sequence.start + t) * heads + kv * group + j) * d;
                    let query = &queries[at..at + d];
                    scores.clear();
                    scores
                        .extend((0..=past + t).map(|s| simd::dot(isa, query, cache.key(s, kv, d))));
                    let max = simd::max(isa, &scores);
                    let inverse = 1.0 / simd::exp_sum(isa, &mut scores, max);
                    let head_out = &mut out[(t * group + j) * d..(t * group + j + 1) * d];
                    for (s, &weight) in scores.iter().enumerate() {
                        let weight = weight * inverse;
                        for (y, &value) in head_out.iter_mut().zip(cache.value(s, kv, d)) {
                            *y += weight * value;
                        }
                    }
                }
            }
            out
        })
        .collect();
    let mut out = vec![0.0f32; total * heads * d];
    for (task, block) in outputs.iter().enumerate() {
        let (sequence, kv) = (sequences[task / kv_heads], task % kv_heads);
        for t in 0..sequence.count {
            for j in 0..group {
                let to = ((sequence.start + t) * heads + kv * group + j) * d;
                let from = (t * group + j) * d;
                out[to..to + d].copy_from_slice(&block[from..from + d]);
            }
        }
    }
    out
}
