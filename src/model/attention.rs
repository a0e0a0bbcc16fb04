//! Grouped-query self-attention with rotary embeddings (and Qwen3's query/key norms).
//!
//! Query heads are grouped under their key/value head (`[B, kv_heads, group·T, d]`) so keys
//! and values are never copied per query head. Two paths: `forward` over a padded batch,
//! differentiable (the rotary attention kernel, or plain candle ops); `forward_packed` over
//! the new tokens of several sequences at once, each attending to its own key/value cache
//! (the host decoding kernel, or candle's fused inference ops).

use super::config::ModelConfig;
use super::kernels::{
    self, AttentionGeometry, DecodeRows, Kernels, PackedSequence, RotaryTables, host_slice,
    on_host_f32, reshaped,
};
use super::kv_cache::SequenceKv;
use super::layers::{
    RmsNorm, accumulation_dtype, apply_rotary, detach_linear, forward_rows, linear, project,
};
use super::linear::Linear;
use super::shared_prefix::SharedRows;
use candle_core::{D, Result, Tensor};
use candle_nn::VarBuilder;

/// What attention over a padded batch needs besides the hidden states.
pub struct BatchAttention<'a> {
    /// Sequences `B` in the batch.
    pub batch: usize,
    /// Their padded length `T`.
    pub len: usize,
    /// Rotary tables and mask, in the form the chosen path takes.
    pub masking: Masking<'a>,
    /// Where the residual stream holds a shared prefix once: the rows to expand to the grid.
    pub shared: Option<&'a SharedRows>,
}

/// Rotary tables and mask of a padded batch.
pub enum Masking<'a> {
    /// Plain candle ops: full-width rotary tables `[B, 1, T, d]` and the additive bias
    /// `[B, 1, 1, T, T]`.
    Plain {
        /// Cosines at each token's position.
        cos: Tensor,
        /// Sines at each token's position.
        sin: Tensor,
        /// 0 where a query may see a key, a large negative number elsewhere.
        bias: Tensor,
    },
    /// The rotary attention kernel: half-width tables `[B·T, d/2]` and the B×T mask.
    Fused {
        /// Cosines at each token's position.
        cos_half: Tensor,
        /// Sines at each token's position.
        sin_half: Tensor,
        /// 1 on real tokens, 0 on padding.
        mask: &'a [u8],
    },
}

/// Where one sequence's new tokens sit in a packed forward.
#[derive(Clone, Copy, Debug)]
pub struct PackedRows {
    /// First row of the packed input that belongs to the sequence.
    pub start: usize,
    /// Number of new tokens.
    pub count: usize,
    /// Tokens already in its cache before this forward.
    pub past: usize,
}

/// The self-attention block of one decoder layer.
#[derive(Clone, Debug)]
pub struct Attention {
    q_proj: Linear,
    k_proj: Linear,
    v_proj: Linear,
    o_proj: Linear,
    q_norm: Option<RmsNorm>,
    k_norm: Option<RmsNorm>,
    heads: usize,
    kv_heads: usize,
    head_dim: usize,
}

impl Attention {
    /// The block under `self_attn`, shaped by `config`.
    pub fn new(config: &ModelConfig, vb: VarBuilder<'_>) -> Result<Self> {
        let (hidden, d) = (config.hidden_size, config.head_dim);
        let (heads, kv_heads) = (config.num_attention_heads, config.num_key_value_heads);
        let norm = |name: &str| RmsNorm::new(d, config.rms_norm_eps, vb.pp(name));
        Ok(Self {
            q_proj: linear(hidden, heads * d, config.qkv_bias, vb.pp("q_proj"))?,
            k_proj: linear(hidden, kv_heads * d, config.qkv_bias, vb.pp("k_proj"))?,
            v_proj: linear(hidden, kv_heads * d, config.qkv_bias, vb.pp("v_proj"))?,
            o_proj: linear(heads * d, hidden, config.o_bias, vb.pp("o_proj"))?,
            q_norm: config.has_qk_norm().then(|| norm("q_norm")).transpose()?,
            k_norm: config.has_qk_norm().then(|| norm("k_norm")).transpose()?,
            heads,
            kv_heads,
            head_dim: d,
        })
    }

    fn group(&self) -> usize {
        self.heads / self.kv_heads
    }

    fn scale(&self) -> f64 {
        1.0 / (self.head_dim as f64).sqrt()
    }

    fn geometry(&self) -> AttentionGeometry {
        AttentionGeometry {
            heads: self.heads,
            kv_heads: self.kv_heads,
            head_dim: self.head_dim,
        }
    }

    /// Differentiable attention over a padded batch, `x` as `[B, T, hidden]` or as rows
    /// `[B·T, hidden]`; the output has the same layout.
    pub fn forward(
        &self,
        x: &Tensor,
        inputs: &BatchAttention<'_>,
        kernels: &Kernels,
    ) -> Result<Tensor> {
        let (b, t) = (inputs.batch, inputs.len);
        let (d, kv) = (self.head_dim, self.kv_heads);
        let mut q = project(&self.q_proj, x, kernels)?;
        let mut k = project(&self.k_proj, x, kernels)?;
        let mut v = project(&self.v_proj, x, kernels)?;
        if let Some(shared) = inputs.shared {
            (q, k, v) = (shared.expand(&q)?, shared.expand(&k)?, shared.expand(&v)?);
        }
        if let (Some(q_norm), Some(k_norm)) = (&self.q_norm, &self.k_norm) {
            q = q_norm.forward(&q.reshape((b, t, self.heads, d))?, kernels)?;
            k = k_norm.forward(&k.reshape((b, t, kv, d))?, kernels)?;
        }
        let out = match &inputs.masking {
            Masking::Fused {
                cos_half,
                sin_half,
                mask,
            } => {
                let q = reshaped(&q, &[b * t, self.heads * d])?;
                let k = reshaped(&k, &[b * t, kv * d])?;
                let v = reshaped(&v, &[b * t, kv * d])?;
                let tables = RotaryTables {
                    cos: cos_half,
                    sin: sin_half,
                    mask,
                    batch: b,
                    len: t,
                };
                kernels::rotary_attention(&q, &k, &v, &tables, self.geometry(), kernels.isa)?
            }
            Masking::Plain { cos, sin, bias } => {
                self.plain_core(&q, &k, &v, (b, t), cos, sin, bias)?
            }
        };
        let out = match inputs.shared {
            Some(shared) => shared.compress(&reshaped(&out, &[b * t, self.heads * d])?)?,
            None => out,
        };
        let mut dims = x.dims().to_vec();
        if let Some(last) = dims.last_mut() {
            *last = self.heads * d;
        }
        project(&self.o_proj, &reshaped(&out, &dims)?, kernels)
    }

    /// Rotary embedding, scores, softmax and the weighted sum from plain candle ops:
    /// projections of a `B × T` batch in, `[B, T, heads·d]` out.
    #[allow(clippy::too_many_arguments)]
    fn plain_core(
        &self,
        q: &Tensor,
        k: &Tensor,
        v: &Tensor,
        (b, t): (usize, usize),
        cos: &Tensor,
        sin: &Tensor,
        bias: &Tensor,
    ) -> Result<Tensor> {
        let (d, kv, g) = (self.head_dim, self.kv_heads, self.group());
        let q = q.reshape((b, t, self.heads, d))?;
        let k = k.reshape((b, t, kv, d))?;
        let v = v.reshape((b, t, kv, d))?;
        let q = apply_rotary(&q.transpose(1, 2)?, cos, sin)?;
        let k = apply_rotary(&k.transpose(1, 2)?, cos, sin)?;
        let v = v.transpose(1, 2)?.contiguous()?;
        let q = q.reshape((b, kv, g * t, d))?;
        let scores = (q.matmul(&k.t()?)? * self.scale())?;
        let dtype = scores.dtype();
        let scores = scores
            .to_dtype(accumulation_dtype(dtype))?
            .reshape((b, kv, g, t, t))?
            .broadcast_add(bias)?;
        let probs = softmax_last(&scores)?
            .to_dtype(dtype)?
            .reshape((b, kv, g * t, t))?;
        probs
            .matmul(&v)?
            .reshape((b, self.heads, t, d))?
            .transpose(1, 2)?
            .reshape((b, t, self.heads * d))
    }

    /// Attention for the new tokens of several sequences packed as rows of `x [N, hidden]`,
    /// with half-width rotary tables `[N, d/2]` for their positions. Each sequence's keys and
    /// values are appended to its cache for `layer`, and its queries attend to that cache.
    #[allow(clippy::too_many_arguments)]
    pub fn forward_packed(
        &self,
        x: &Tensor,
        cos_half: &Tensor,
        sin_half: &Tensor,
        layer: usize,
        rows: &[PackedRows],
        caches: &mut [&mut SequenceKv],
        kernels: &Kernels,
    ) -> Result<Tensor> {
        if kernels.decode && on_host_f32(x) {
            return self.forward_packed_host(x, cos_half, sin_half, layer, rows, caches, kernels);
        }
        let n = x.dim(0)?;
        let (d, kv, g) = (self.head_dim, self.kv_heads, self.group());
        let mut q = forward_rows(&self.q_proj, x, kernels)?.reshape((1, n, self.heads, d))?;
        let mut k = forward_rows(&self.k_proj, x, kernels)?.reshape((1, n, kv, d))?;
        let v = forward_rows(&self.v_proj, x, kernels)?.reshape((n, kv, d))?;
        if let (Some(q_norm), Some(k_norm)) = (&self.q_norm, &self.k_norm) {
            q = q_norm.forward_fast(&q)?;
            k = k_norm.forward_fast(&k)?;
        }
        let q = candle_nn::rotary_emb::rope_thd(&q.contiguous()?, cos_half, sin_half)?
            .reshape((n, self.heads, d))?;
        let k = candle_nn::rotary_emb::rope_thd(&k.contiguous()?, cos_half, sin_half)?
            .reshape((n, kv, d))?;
        let mut outputs = Vec::with_capacity(rows.len());
        for (row, cache) in rows.iter().zip(caches.iter_mut()) {
            let count = row.count;
            let q_rows = q
                .narrow(0, row.start, count)?
                .reshape((count, kv, g, d))?
                .permute((1, 2, 0, 3))?
                .contiguous()?
                .reshape((kv, g * count, d))?;
            let k_rows = k.narrow(0, row.start, count)?.transpose(0, 1)?;
            let v_rows = v.narrow(0, row.start, count)?.transpose(0, 1)?;
            let (keys, values) = cache.append(layer, &k_rows, &v_rows)?;
            let mut scores = (q_rows.matmul(&keys.t()?)? * self.scale())?;
            if count > 1 {
                scores = scores.broadcast_add(&causal_bias(g, count, row.past, &scores)?)?;
            }
            let probs = candle_nn::ops::softmax_last_dim(&scores)?;
            let out = probs
                .matmul(&values)?
                .reshape((kv, g, count, d))?
                .permute((2, 0, 1, 3))?
                .reshape((count, self.heads * d))?;
            outputs.push(out);
        }
        forward_rows(&self.o_proj, &Tensor::cat(&outputs, 0)?, kernels)
    }

    /// `forward_packed` through the host decoding kernel and the caches' host storage.
    #[allow(clippy::too_many_arguments)]
    fn forward_packed_host(
        &self,
        x: &Tensor,
        cos_half: &Tensor,
        sin_half: &Tensor,
        layer: usize,
        rows: &[PackedRows],
        caches: &mut [&mut SequenceKv],
        kernels: &Kernels,
    ) -> Result<Tensor> {
        let n = x.dim(0)?;
        let (d, kv) = (self.head_dim, self.kv_heads);
        let mut q = forward_rows(&self.q_proj, x, kernels)?;
        let mut k = forward_rows(&self.k_proj, x, kernels)?;
        let v = forward_rows(&self.v_proj, x, kernels)?;
        if let (Some(q_norm), Some(k_norm)) = (&self.q_norm, &self.k_norm) {
            q = q_norm.forward_fast(&q.reshape((n, self.heads, d))?)?;
            k = k_norm.forward_fast(&k.reshape((n, kv, d))?)?;
        }
        let (q, k, v): (Vec<f32>, Vec<f32>, Vec<f32>) =
            (host_slice(&q)?, host_slice(&k)?, host_slice(&v)?);
        let (cos, sin): (Vec<f32>, Vec<f32>) = (host_slice(cos_half)?, host_slice(sin_half)?);
        let sequences: Vec<PackedSequence> = rows
            .iter()
            .map(|row| PackedSequence {
                start: row.start,
                count: row.count,
            })
            .collect();
        let mut host_caches = caches
            .iter_mut()
            .map(|cache| cache.host_layer(layer, kv * d))
            .collect::<Result<Vec<_>>>()?;
        let packed = DecodeRows {
            q: &q,
            k: &k,
            v: &v,
            cos: &cos,
            sin: &sin,
        };
        let out = kernels::attend_packed(
            &packed,
            &sequences,
            &mut host_caches,
            self.geometry(),
            kernels.isa,
        );
        let out = Tensor::from_vec(out, (n, self.heads * d), x.device())?;
        forward_rows(&self.o_proj, &out, kernels)
    }

    /// A copy detached from the autograd graph.
    pub fn detached(&self) -> Self {
        Self {
            q_proj: detach_linear(&self.q_proj),
            k_proj: detach_linear(&self.k_proj),
            v_proj: detach_linear(&self.v_proj),
            o_proj: detach_linear(&self.o_proj),
            q_norm: self.q_norm.as_ref().map(RmsNorm::detached),
            k_norm: self.k_norm.as_ref().map(RmsNorm::detached),
            ..*self
        }
    }

    /// A copy whose projections are `map(name, layer)`, named `{prefix}.q_proj` etc.
    pub fn map_projections(
        &self,
        prefix: &str,
        map: &mut dyn FnMut(&str, &Linear) -> Result<Linear>,
    ) -> Result<Self> {
        Ok(Self {
            q_proj: map(&format!("{prefix}.q_proj"), &self.q_proj)?,
            k_proj: map(&format!("{prefix}.k_proj"), &self.k_proj)?,
            v_proj: map(&format!("{prefix}.v_proj"), &self.v_proj)?,
            o_proj: map(&format!("{prefix}.o_proj"), &self.o_proj)?,
            q_norm: self.q_norm.clone(),
            k_norm: self.k_norm.clone(),
            ..*self
        })
    }
}

/// Softmax over the last dimension from differentiable ops (the max shift is a constant).
pub fn softmax_last(x: &Tensor) -> Result<Tensor> {
    let max = x.max_keepdim(D::Minus1)?.detach();
    let exp = x.broadcast_sub(&max)?.exp()?;
    exp.broadcast_div(&exp.sum_keepdim(D::Minus1)?)
}

/// The additive causal bias `[group·count, past + count]` for `count` new queries after
/// `past` cached tokens: 0 where the key is at or before the query, −∞ after it.
fn causal_bias(group: usize, count: usize, past: usize, like: &Tensor) -> Result<Tensor> {
    let keys = past + count;
    let mut bias = vec![0f32; group * count * keys];
    for j in 0..group {
        for t in 0..count {
            let row = (j * count + t) * keys;
            bias[row + past + t + 1..row + keys].fill(f32::NEG_INFINITY);
        }
    }
    Tensor::from_vec(bias, (group * count, keys), like.device())?.to_dtype(like.dtype())
}
