//! Rotary causal self-attention over a padded batch as one candle op, with a hand-written
//! backward. Work is split into one task per (sequence, KV head) running on the thread pool,
//! each doing its small matrix products single-threaded; the query heads of a group share
//! their key/value head without copies. The forward keeps the rotated queries and keys and the
//! attention probabilities for the backward.
//!
//! Masking is what `TokenBatch::attention_bias` describes: query `t` sees key `s` when
//! `s ≤ t` and `s` is a real token; a query that sees nothing (padding before a left-padded
//! sequence) averages every key uniformly, as the plain path does in f32.

use super::float::KernelFloat;
use super::gemm::{MatMut, MatRef, matmul};
use super::{Isa, host_slice};
use candle_core::{CpuStorage, CustomOp3, DType, Layout, Result, Shape, Tensor};
use rayon::prelude::*;
use std::sync::Mutex;

/// The head layout of one attention layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttentionGeometry {
    /// Query heads.
    pub heads: usize,
    /// Key/value heads (dividing `heads`).
    pub kv_heads: usize,
    /// Width of each head (even).
    pub head_dim: usize,
}

impl AttentionGeometry {
    fn group(&self) -> usize {
        self.heads / self.kv_heads
    }
}

/// The rotary tables and mask of a padded batch of `batch × len` tokens.
pub struct RotaryTables<'a> {
    /// Half-width cosines at each token's position, `[B·T, d/2]`.
    pub cos: &'a Tensor,
    /// Half-width sines at each token's position, `[B·T, d/2]`.
    pub sin: &'a Tensor,
    /// 1 on real tokens, 0 on padding, B×T.
    pub mask: &'a [u8],
    /// Sequences `B`.
    pub batch: usize,
    /// Padded length `T`.
    pub len: usize,
}

/// Attention of a padded batch: `q` with `B·T` rows of `heads·d`, `k` and `v` with rows of
/// `kv_heads·d` (the projections, before the rotary embedding; any leading shape). Returns
/// the output rows in `q`'s shape; differentiable in q, k, v.
pub fn rotary_attention(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    tables: &RotaryTables<'_>,
    geometry: AttentionGeometry,
    isa: Isa,
) -> Result<Tensor> {
    let (batch, len) = (tables.batch, tables.len);
    let tokens = batch * len;
    let kv_width = geometry.kv_heads * geometry.head_dim;
    let valid = geometry.kv_heads > 0
        && geometry.heads.is_multiple_of(geometry.kv_heads)
        && geometry.head_dim.is_multiple_of(2)
        && q.elem_count() == tokens * geometry.heads * geometry.head_dim
        && k.elem_count() == tokens * kv_width
        && v.elem_count() == tokens * kv_width
        && tables.mask.len() == tokens
        && tables.cos.elem_count() == tokens * geometry.head_dim / 2
        && tables.sin.elem_count() == tables.cos.elem_count();
    if !valid {
        candle_core::bail!(
            "rotary attention: q {:?}, k {:?}, v {:?}, cos {:?} and a mask of {} do not fit {batch}×{len} tokens of {geometry:?}",
            q.shape(),
            k.shape(),
            v.shape(),
            tables.cos.shape(),
            tables.mask.len()
        );
    }
    let (q, k, v) = (q.contiguous()?, k.contiguous()?, v.contiguous()?);
    match q.dtype() {
        DType::F32 => q.apply_op3(&k, &v, RotaryAttention::<f32>::new(tables, geometry, isa)?),
        DType::F64 => q.apply_op3(&k, &v, RotaryAttention::<f64>::new(tables, geometry, isa)?),
        dtype => candle_core::bail!("rotary attention: no kernel for {dtype:?}"),
    }
}

/// What one (sequence, KV head) task keeps for the backward.
struct Saved<F> {
    /// Rotated queries of the group's heads times `1/√d`, `[group, T, d]`.
    queries: Vec<F>,
    /// Rotated keys, `[T, d]`.
    keys: Vec<F>,
    /// Attention probabilities, `[group, T, T]`.
    probs: Vec<F>,
}

struct RotaryAttention<F> {
    geometry: AttentionGeometry,
    batch: usize,
    len: usize,
    isa: Isa,
    cos: Vec<F>,
    sin: Vec<F>,
    mask: Vec<u8>,
    saved: Mutex<Vec<Saved<F>>>,
}

/// Rotates one head `x` by the half-width tables (`x·cos + rotate_half(x)·sin`), times
/// `factor`, into `out`.
pub(super) fn rotate<F: KernelFloat>(x: &[F], cos: &[F], sin: &[F], factor: F, out: &mut [F]) {
    let half = cos.len();
    for i in 0..half {
        let (a, b) = (x[i], x[i + half]);
        out[i] = (a * cos[i] - b * sin[i]) * factor;
        out[i + half] = (b * cos[i] + a * sin[i]) * factor;
    }
}

/// The transpose of `rotate` applied to a gradient, times `factor`, into `out`.
fn rotate_back<F: KernelFloat>(grad: &[F], cos: &[F], sin: &[F], factor: F, out: &mut [F]) {
    let half = cos.len();
    for i in 0..half {
        let (a, b) = (grad[i], grad[i + half]);
        out[i] = (a * cos[i] + b * sin[i]) * factor;
        out[i + half] = (b * cos[i] - a * sin[i]) * factor;
    }
}

impl<F: KernelFloat> RotaryAttention<F> {
    fn new(tables: &RotaryTables<'_>, geometry: AttentionGeometry, isa: Isa) -> Result<Self> {
        Ok(Self {
            geometry,
            batch: tables.batch,
            len: tables.len,
            isa,
            cos: host_slice(&tables.cos.to_dtype(F::DTYPE)?)?,
            sin: host_slice(&tables.sin.to_dtype(F::DTYPE)?)?,
            mask: tables.mask.to_vec(),
            saved: Mutex::new(Vec::new()),
        })
    }

    /// The tables of token `t` of sequence `b`.
    fn tables(&self, b: usize, t: usize) -> (&[F], &[F]) {
        let half = self.geometry.head_dim / 2;
        let row = (b * self.len + t) * half;
        (&self.cos[row..row + half], &self.sin[row..row + half])
    }

    /// Turns row `t` of scores into probabilities in place.
    fn softmax_row(&self, b: usize, t: usize, row: &mut [F]) {
        let mask = &self.mask[b * self.len..(b + 1) * self.len];
        let visible = if mask.iter().all(|&bit| bit == 1) {
            t + 1
        } else {
            for (s, score) in row.iter_mut().enumerate() {
                if s > t || mask[s] == 0 {
                    *score = F::neg_infinity();
                }
            }
            if mask[..=t].iter().all(|&bit| bit == 0) {
                row.fill(F::one() / F::from_f64(row.len() as f64));
                return;
            }
            row.len()
        };
        let (seen, unseen) = row.split_at_mut(visible);
        let max = F::max_of(self.isa, seen);
        let sum = F::exp_sum(self.isa, seen, max);
        let inverse = F::one() / sum;
        seen.iter_mut().for_each(|p| *p *= inverse);
        unseen.fill(F::zero());
    }

    /// Forward of sequence `b`, KV head `kv`: the group's outputs `[group, T, d]`.
    fn forward_task(&self, q: &[F], k: &[F], v: &[F], b: usize, kv: usize) -> (Vec<F>, Saved<F>) {
        let AttentionGeometry {
            heads,
            kv_heads,
            head_dim: d,
        } = self.geometry;
        let (g, len) = (self.geometry.group(), self.len);
        let scale = F::from_f64(1.0 / (d as f64).sqrt());
        let mut keys = vec![F::zero(); len * d];
        let mut queries = vec![F::zero(); g * len * d];
        for t in 0..len {
            let (cos, sin) = self.tables(b, t);
            let k_row = ((b * len + t) * kv_heads + kv) * d;
            rotate(
                &k[k_row..k_row + d],
                cos,
                sin,
                F::one(),
                &mut keys[t * d..(t + 1) * d],
            );
            for j in 0..g {
                let q_row = ((b * len + t) * heads + kv * g + j) * d;
                let out = &mut queries[(j * len + t) * d..(j * len + t + 1) * d];
                rotate(&q[q_row..q_row + d], cos, sin, scale, out);
            }
        }
        let values = MatRef::new(&v[(b * len * kv_heads + kv) * d..], len, d, kv_heads * d, 1);
        let mut probs = vec![F::zero(); g * len * len];
        let mut out = vec![F::zero(); g * len * d];
        for j in 0..g {
            let head_probs = &mut probs[j * len * len..(j + 1) * len * len];
            let head_queries = MatRef::rows(&queries[j * len * d..(j + 1) * len * d], len, d);
            matmul(
                self.isa,
                MatMut::rows(head_probs, len, len),
                head_queries,
                MatRef::rows(&keys, len, d).t(),
                false,
            );
            for (t, row) in head_probs.chunks_mut(len).enumerate() {
                self.softmax_row(b, t, row);
            }
            let head_out = MatMut::rows(&mut out[j * len * d..(j + 1) * len * d], len, d);
            matmul(
                self.isa,
                head_out,
                MatRef::rows(head_probs, len, len),
                values,
                false,
            );
        }
        (
            out,
            Saved {
                queries,
                keys,
                probs,
            },
        )
    }

    /// Backward of sequence `b`, KV head `kv` given the output gradient: the gradients of the
    /// group's query heads `[group, T, d]`, of the key head and of the value head `[T, d]`.
    fn backward_task(
        &self,
        saved: &Saved<F>,
        v: &[F],
        grad: &[F],
        b: usize,
        kv: usize,
    ) -> [Vec<F>; 3] {
        let AttentionGeometry {
            heads,
            kv_heads,
            head_dim: d,
        } = self.geometry;
        let (g, len) = (self.geometry.group(), self.len);
        let scale = F::from_f64(1.0 / (d as f64).sqrt());
        let values = MatRef::new(&v[(b * len * kv_heads + kv) * d..], len, d, kv_heads * d, 1);
        let keys = MatRef::rows(&saved.keys, len, d);
        let mut d_keys = vec![F::zero(); len * d];
        let mut d_values = vec![F::zero(); len * d];
        let mut d_scores = vec![F::zero(); len * len];
        let mut d_queries = vec![F::zero(); g * len * d];
        for j in 0..g {
            let probs = &saved.probs[j * len * len..(j + 1) * len * len];
            let d_out = MatRef::new(
                &grad[(b * len * heads + kv * g + j) * d..],
                len,
                d,
                heads * d,
                1,
            );
            matmul(
                self.isa,
                MatMut::rows(&mut d_values, len, d),
                MatRef::rows(probs, len, len).t(),
                d_out,
                j > 0,
            );
            matmul(
                self.isa,
                MatMut::rows(&mut d_scores, len, len),
                d_out,
                values.t(),
                false,
            );
            for (p, dp) in probs.chunks(len).zip(d_scores.chunks_mut(len)) {
                let projection = F::dot(self.isa, p, dp);
                dp.iter_mut()
                    .zip(p)
                    .for_each(|(dp, &p)| *dp = p * (*dp - projection));
            }
            let scores = MatRef::rows(&d_scores, len, len);
            let head_queries = MatRef::rows(&saved.queries[j * len * d..(j + 1) * len * d], len, d);
            matmul(
                self.isa,
                MatMut::rows(&mut d_keys, len, d),
                scores.t(),
                head_queries,
                j > 0,
            );
            let rotated = MatMut::rows(&mut d_queries[j * len * d..(j + 1) * len * d], len, d);
            matmul(self.isa, rotated, scores, keys, false);
        }
        let mut row = vec![F::zero(); d];
        for t in 0..len {
            let (cos, sin) = self.tables(b, t);
            let key = &mut d_keys[t * d..(t + 1) * d];
            rotate_back(key, cos, sin, F::one(), &mut row);
            key.copy_from_slice(&row);
            for j in 0..g {
                let query = &mut d_queries[(j * len + t) * d..(j * len + t + 1) * d];
                rotate_back(query, cos, sin, scale, &mut row);
                query.copy_from_slice(&row);
            }
        }
        [d_queries, d_keys, d_values]
    }

    /// Copies `[group, T, d]` blocks of each task into `[B, T, heads·d]` rows (or, with a
    /// group of 1, `[T, d]` blocks into `[B, T, kv_heads·d]`).
    fn scatter(&self, blocks: &[&Vec<F>], group: usize) -> Vec<F> {
        let AttentionGeometry {
            kv_heads,
            head_dim: d,
            ..
        } = self.geometry;
        let (len, width) = (self.len, kv_heads * group * d);
        let mut out = vec![F::zero(); self.batch * len * width];
        for (task, block) in blocks.iter().enumerate() {
            let (b, kv) = (task / kv_heads, task % kv_heads);
            for j in 0..group {
                for t in 0..len {
                    let from = (j * len + t) * d;
                    let to = (b * len + t) * width + (kv * group + j) * d;
                    out[to..to + d].copy_from_slice(&block[from..from + d]);
                }
            }
        }
        out
    }
}

fn contiguous<'a, F: KernelFloat>(storage: &'a CpuStorage, layout: &Layout) -> Result<&'a [F]> {
    match layout.contiguous_offsets() {
        Some((start, end)) => Ok(&F::cpu_storage_as_slice(storage)?[start..end]),
        None => candle_core::bail!("rotary attention: inputs must be contiguous"),
    }
}

impl<F: KernelFloat> CustomOp3 for RotaryAttention<F> {
    fn name(&self) -> &'static str {
        "rollscope-rotary-attention"
    }

    fn cpu_fwd(
        &self,
        q: &CpuStorage,
        q_layout: &Layout,
        k: &CpuStorage,
        k_layout: &Layout,
        v: &CpuStorage,
        v_layout: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let (q, k, v) = (
            contiguous::<F>(q, q_layout)?,
            contiguous::<F>(k, k_layout)?,
            contiguous::<F>(v, v_layout)?,
        );
        let tasks = self.batch * self.geometry.kv_heads;
        let (outputs, saved): (Vec<Vec<F>>, Vec<Saved<F>>) = (0..tasks)
            .into_par_iter()
            .map(|task| {
                self.forward_task(
                    q,
                    k,
                    v,
                    task / self.geometry.kv_heads,
                    task % self.geometry.kv_heads,
                )
            })
            .unzip();
        let out = self.scatter(&outputs.iter().collect::<Vec<_>>(), self.geometry.group());
        *self
            .saved
            .lock()
            .map_err(|_| candle_core::Error::Msg("rotary attention: poisoned state".into()))? =
            saved;
        Ok((F::to_cpu_storage_owned(out), q_layout.shape().clone()))
    }

    fn bwd(
        &self,
        q: &Tensor,
        k: &Tensor,
        v: &Tensor,
        _: &Tensor,
        grad: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
        let saved = self
            .saved
            .lock()
            .map_err(|_| candle_core::Error::Msg("rotary attention: poisoned state".into()))?;
        let tasks = self.batch * self.geometry.kv_heads;
        if saved.len() != tasks {
            candle_core::bail!("rotary attention: backward before forward");
        }
        let (values, grad) = (host_slice::<F>(v)?, host_slice::<F>(grad)?);
        let grads: Vec<[Vec<F>; 3]> = (0..tasks)
            .into_par_iter()
            .map(|task| {
                let (b, kv) = (task / self.geometry.kv_heads, task % self.geometry.kv_heads);
                self.backward_task(&saved[task], &values, &grad, b, kv)
            })
            .collect();
        let pick = |index: usize| grads.iter().map(|task| &task[index]).collect::<Vec<_>>();
        let d_q = self.scatter(&pick(0), self.geometry.group());
        let d_k = self.scatter(&pick(1), 1);
        let d_v = self.scatter(&pick(2), 1);
        Ok((
            Some(Tensor::from_vec(d_q, q.shape(), q.device())?),
            Some(Tensor::from_vec(d_k, k.shape(), k.device())?),
            Some(Tensor::from_vec(d_v, v.shape(), v.device())?),
        ))
    }
}
