//! Qwen2 and Qwen3 decoder-only transformers, with parameter names as in the Hugging Face
//! safetensors (`model.layers.{i}.self_attn.q_proj.weight`, ...).

use super::attention::{Attention, BatchAttention, Masking, PackedRows};
use super::batch::TokenBatch;
use super::config::ModelConfig;
use super::error::{ModelError, Result};
use super::kernels::{Kernels, on_host, reshaped};
use super::kv_cache::SequenceKv;
use super::layers::{
    Mlp, RmsNorm, Rotary, accumulation_dtype, detach_linear, forward_rows, linear, project,
};
use super::linear::Linear;
use super::shared_prefix::SharedRows;
use candle_core::{DType, Device, Module, Tensor};
use candle_nn::{Embedding, VarBuilder};

/// One decoder layer: pre-norm attention and pre-norm MLP, each with a residual.
#[derive(Clone, Debug)]
struct DecoderLayer {
    input_layernorm: RmsNorm,
    self_attn: Attention,
    post_attention_layernorm: RmsNorm,
    mlp: Mlp,
}

impl DecoderLayer {
    fn new(config: &ModelConfig, vb: VarBuilder<'_>) -> candle_core::Result<Self> {
        let eps = config.rms_norm_eps;
        Ok(Self {
            input_layernorm: RmsNorm::new(config.hidden_size, eps, vb.pp("input_layernorm"))?,
            self_attn: Attention::new(config, vb.pp("self_attn"))?,
            post_attention_layernorm: RmsNorm::new(
                config.hidden_size,
                eps,
                vb.pp("post_attention_layernorm"),
            )?,
            mlp: Mlp::new(config, vb.pp("mlp"))?,
        })
    }

    fn forward(
        &self,
        x: &Tensor,
        attention: &BatchAttention<'_>,
        kernels: &Kernels,
    ) -> candle_core::Result<Tensor> {
        let normed = self.input_layernorm.forward(x, kernels)?;
        let attended = self.self_attn.forward(&normed, attention, kernels)?;
        let x = (x + attended)?;
        let normed = self.post_attention_layernorm.forward(&x, kernels)?;
        let transformed = self.mlp.forward(&normed, kernels)?;
        x + transformed
    }

    fn detached(&self) -> Self {
        Self {
            input_layernorm: self.input_layernorm.detached(),
            self_attn: self.self_attn.detached(),
            post_attention_layernorm: self.post_attention_layernorm.detached(),
            mlp: self.mlp.detached(),
        }
    }

    fn map_projections(
        &self,
        prefix: &str,
        map: &mut dyn FnMut(&str, &Linear) -> candle_core::Result<Linear>,
    ) -> candle_core::Result<Self> {
        Ok(Self {
            input_layernorm: self.input_layernorm.clone(),
            self_attn: self
                .self_attn
                .map_projections(&format!("{prefix}.self_attn"), map)?,
            post_attention_layernorm: self.post_attention_layernorm.clone(),
            mlp: self.mlp.map_projections(&format!("{prefix}.mlp"), map)?,
        })
    }
}

/// The new tokens of one sequence in a packed inference forward, with its cache.
pub struct Segment<'a> {
    /// Tokens not yet in the cache, in order.
    pub tokens: &'a [u32],
    /// The sequence's cache; the tokens are appended to it.
    pub cache: &'a mut SequenceKv,
}

/// A Qwen2 or Qwen3 causal language model.
#[derive(Clone, Debug)]
pub struct Qwen {
    config: ModelConfig,
    embed_tokens: Embedding,
    layers: Vec<DecoderLayer>,
    norm: RmsNorm,
    lm_head: Linear,
    rotary: Rotary,
    dtype: DType,
    device: Device,
    kernels: Kernels,
}

impl Qwen {
    /// Builds the model from `vb` (names under `model.` and `lm_head`).
    pub fn new(config: &ModelConfig, vb: VarBuilder<'_>) -> candle_core::Result<Self> {
        let inner = vb.pp("model");
        let embeddings = inner.pp("embed_tokens").get_with_hints(
            (config.vocab_size, config.hidden_size),
            "weight",
            candle_nn::Init::Randn {
                mean: 0.0,
                stdev: super::layers::INIT_STD,
            },
        )?;
        let layers = (0..config.num_hidden_layers)
            .map(|index| DecoderLayer::new(config, inner.pp(format!("layers.{index}"))))
            .collect::<candle_core::Result<Vec<_>>>()?;
        let norm = RmsNorm::new(config.hidden_size, config.rms_norm_eps, inner.pp("norm"))?;
        let lm_head = if config.tie_word_embeddings {
            Linear::new(embeddings.clone(), None)
        } else {
            linear(
                config.hidden_size,
                config.vocab_size,
                false,
                vb.pp("lm_head"),
            )?
        };
        Ok(Self {
            config: config.clone(),
            embed_tokens: Embedding::new(embeddings, config.hidden_size),
            layers,
            norm,
            lm_head,
            rotary: Rotary::new(config, vb.dtype(), vb.device())?,
            dtype: vb.dtype(),
            device: vb.device().clone(),
            kernels: Kernels::default(),
        })
    }

    /// The same model (sharing its parameters) computing with the given kernels.
    pub fn with_kernels(&self, kernels: Kernels) -> Self {
        Self {
            kernels,
            ..self.clone()
        }
    }

    /// The kernels it computes with.
    pub fn kernels(&self) -> &Kernels {
        &self.kernels
    }

    /// The configuration it was built from.
    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// The compute dtype.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The device its weights live on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Logits `[B, T, vocab]` for every position of a padded batch; differentiable (every
    /// parameter receives a gradient through it). Logits are in the compute dtype.
    pub fn forward(&self, batch: &TokenBatch) -> Result<Tensor> {
        self.forward_first(batch, batch.seq_len())
    }

    /// Logits `[B, count, vocab]` of the first `count` positions of a padded batch (all of
    /// them attend as in `forward`).
    pub fn forward_first(&self, batch: &TokenBatch, count: usize) -> Result<Tensor> {
        let logits = self.logit_rows(batch, count)?;
        let dims = [batch.batch_size(), count, self.config.vocab_size];
        Ok(reshaped(&logits, &dims)?)
    }

    /// Logits of the first `count` positions of each sequence (the next-token log-probs
    /// need all but the last): rows `[B·count, vocab]` when the residual stream runs on rows
    /// (`Kernels::flat_linears`), `[B, count, vocab]` otherwise.
    pub(crate) fn logit_rows(&self, batch: &TokenBatch, count: usize) -> Result<Tensor> {
        let (b, t, hidden) = (batch.batch_size(), batch.seq_len(), self.config.hidden_size);
        let (mut x, shared) = self.hidden_states(batch)?;
        if let Some(shared) = &shared {
            let normed = self.norm.forward(&x, &self.kernels)?;
            let logits = shared.expand(&project(&self.lm_head, &normed, &self.kernels)?)?;
            let vocab = self.config.vocab_size;
            return Ok(logits
                .reshape((b, t, vocab))?
                .narrow(1, 0, count)?
                .reshape((b * count, vocab))?);
        }
        if count < t {
            x = if self.kernels.flat_linears {
                x.reshape((b, t, hidden))?
                    .narrow(1, 0, count)?
                    .reshape((b * count, hidden))?
            } else {
                x.narrow(1, 0, count)?
            };
        }
        let normed = self.norm.forward(&x, &self.kernels)?;
        Ok(project(&self.lm_head, &normed, &self.kernels)?)
    }

    /// Logits `[n, vocab]` of chosen positions only: `rows` (u32, `[n]`) index the batch's
    /// tokens flattened to `B·T`. Every position attends as in `forward`; the final norm and
    /// the output projection run on the chosen rows alone.
    pub(crate) fn logits_at(&self, batch: &TokenBatch, rows: &Tensor) -> Result<Tensor> {
        let (x, shared) = self.hidden_states(batch)?;
        let rows = match &shared {
            Some(shared) => shared.unique_slots(rows)?,
            None => rows.clone(),
        };
        let x = reshaped(
            &x,
            &[
                x.elem_count() / self.config.hidden_size,
                self.config.hidden_size,
            ],
        )?;
        let normed = self
            .norm
            .forward(&x.index_select(&rows, 0)?, &self.kernels)?;
        Ok(project(&self.lm_head, &normed, &self.kernels)?)
    }

    /// The residual stream after the last decoder layer, before the final norm: rows
    /// `[B·T, hidden]` when it runs on rows (`Kernels::flat_linears`), `[B, T, hidden]`
    /// otherwise; with a shared prefix (`Kernels::shared_prefix`), its unique rows and
    /// their layout.
    fn hidden_states(&self, batch: &TokenBatch) -> Result<(Tensor, Option<SharedRows>)> {
        let limit = self.config.max_position_embeddings;
        if batch.context_needed() > limit {
            return Err(ModelError::ContextFull {
                tokens: batch.context_needed(),
                limit,
            });
        }
        let kernels = &self.kernels;
        let (b, t) = (batch.batch_size(), batch.seq_len());
        let shared = if kernels.flat_linears && kernels.shared_prefix {
            batch.shared_rows().cloned()
        } else {
            None
        };
        let ids = match &shared {
            Some(shared) => shared.unique_ids(&batch.ids)?,
            None if kernels.flat_linears => batch.ids.flatten_all()?,
            None => batch.ids.clone(),
        };
        let mut x = self.embed_tokens.forward(&ids)?;
        let masking = if kernels.attention && on_host(&x) {
            let (cos_half, sin_half) = self.rotary.half_width(&batch.positions.flatten_all()?)?;
            Masking::Fused {
                cos_half,
                sin_half,
                mask: &batch.mask,
            }
        } else {
            let (cos, sin) = self.rotary.full_width(&batch.positions)?;
            Masking::Plain {
                cos: cos.unsqueeze(1)?,
                sin: sin.unsqueeze(1)?,
                bias: batch.attention_bias(accumulation_dtype(self.dtype), &self.device)?,
            }
        };
        let attention = BatchAttention {
            batch: b,
            len: t,
            masking,
            shared: shared.as_ref(),
        };
        for layer in &self.layers {
            x = layer.forward(&x, &attention, kernels)?;
        }
        Ok((x, shared))
    }

    /// Inference over the new tokens of several sequences at once: the linear layers run on
    /// all rows together, attention per sequence against its own cache (no padding, exact).
    /// Returns the logits `[segments, vocab]` after each sequence's last new token, as f32.
    pub fn forward_packed(&self, segments: &mut [Segment<'_>]) -> Result<Tensor> {
        let mut rows = Vec::with_capacity(segments.len());
        let mut ids = Vec::new();
        let mut positions = Vec::new();
        for segment in segments.iter() {
            let past = segment.cache.len();
            let count = segment.tokens.len();
            if count == 0 {
                return Err(ModelError::Request(
                    "a sequence has no new tokens to compute".into(),
                ));
            }
            let end = past + count;
            if end > self.config.max_position_embeddings {
                return Err(ModelError::ContextFull {
                    tokens: end,
                    limit: self.config.max_position_embeddings,
                });
            }
            rows.push(PackedRows {
                start: ids.len(),
                count,
                past,
            });
            ids.extend_from_slice(segment.tokens);
            positions.extend((past..end).map(|position| position as u32));
        }
        let total = ids.len();
        let ids = Tensor::from_vec(ids, total, &self.device)?;
        let positions = Tensor::from_vec(positions, total, &self.device)?;
        let (cos, sin) = self.rotary.half_width(&positions)?;
        let mut caches: Vec<&mut SequenceKv> = segments
            .iter_mut()
            .map(|segment| &mut *segment.cache)
            .collect();
        let decoding = rows.iter().all(|row| row.count == 1);
        let kernels = &Kernels {
            few_rows: self.kernels.few_rows && decoding,
            ..self.kernels
        };
        let mut x = self.embed_tokens.forward(&ids)?;
        for (index, layer) in self.layers.iter().enumerate() {
            let normed = layer.input_layernorm.forward_fast(&x)?;
            let attended = layer.self_attn.forward_packed(
                &normed,
                &cos,
                &sin,
                index,
                &rows,
                &mut caches,
                kernels,
            )?;
            x = (x + attended)?;
            let normed = layer.post_attention_layernorm.forward_fast(&x)?;
            x = (x + layer.mlp.forward_fast(&normed, kernels)?)?;
        }
        let last_rows: Vec<u32> = rows
            .iter()
            .map(|row| (row.start + row.count - 1) as u32)
            .collect();
        let count = last_rows.len();
        let last = x.index_select(&Tensor::from_vec(last_rows, count, &self.device)?, 0)?;
        let logits = forward_rows(&self.lm_head, &self.norm.forward_fast(&last)?, kernels)?;
        Ok(logits.to_dtype(DType::F32)?)
    }

    /// An empty key/value cache for one sequence.
    pub fn new_cache(&self) -> SequenceKv {
        SequenceKv::new(
            self.config.num_hidden_layers,
            self.config.max_position_embeddings,
        )
    }

    /// A copy whose tensors are detached from the autograd graph but share storage with
    /// these parameters: inference on it records no graph, and it sees optimizer updates.
    pub fn detached(&self) -> Self {
        Self {
            config: self.config.clone(),
            embed_tokens: Embedding::new(
                self.embed_tokens.embeddings().detach(),
                self.config.hidden_size,
            ),
            layers: self.layers.iter().map(DecoderLayer::detached).collect(),
            norm: self.norm.detached(),
            lm_head: detach_linear(&self.lm_head),
            rotary: self.rotary.clone(),
            dtype: self.dtype,
            device: self.device.clone(),
            kernels: self.kernels,
        }
    }

    /// A copy in which each decoder layer's projection is `map(name, layer)` (how LoRA
    /// adapters are attached), named like its weight without `.weight`:
    /// `model.layers.{i}.self_attn.{q,k,v,o}_proj`, `model.layers.{i}.mlp.{gate,up,down}_proj`.
    pub fn map_projections(
        &self,
        map: &mut dyn FnMut(&str, &Linear) -> candle_core::Result<Linear>,
    ) -> candle_core::Result<Self> {
        let layers = self
            .layers
            .iter()
            .enumerate()
            .map(|(index, layer)| layer.map_projections(&format!("model.layers.{index}"), map))
            .collect::<candle_core::Result<Vec<_>>>()?;
        Ok(Self {
            layers,
            ..self.clone()
        })
    }
}
