//! Llama through candle-transformers: an inference-only policy behind the same generation
//! interface. Each sequence keeps its own candle cache; new tokens run one sequence at a time.

use super::config::ModelConfig;
use super::error::{ModelError, Result};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::llama as candle_llama;

/// A loaded Llama model.
#[derive(Clone, Debug)]
pub struct LlamaNet {
    model: candle_llama::Llama,
    empty_cache: candle_llama::Cache,
    context: usize,
    device: Device,
}

/// The cache of one sequence and how many tokens it holds.
#[derive(Clone, Debug)]
pub struct LlamaCache {
    cache: candle_llama::Cache,
    len: usize,
}

impl LlamaCache {
    /// Tokens cached.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// candle-transformers' Llama configuration for `config`.
pub fn candle_config(config: &ModelConfig) -> Result<candle_llama::Config> {
    let file = std::path::PathBuf::from("config.json");
    if config.head_dim * config.num_attention_heads != config.hidden_size {
        return Err(ModelError::field(
            file,
            "head_dim",
            "Llama here needs head_dim × num_attention_heads = hidden_size",
        ));
    }
    let rope_scaling = match config.raw.get("rope_scaling") {
        None | Some(serde_json::Value::Null) => None,
        Some(value) => Some(serde_json::from_value(value.clone()).map_err(|error| {
            ModelError::field(
                &file,
                "rope_scaling",
                format!("not a Llama 3 rope scaling: {error}"),
            )
        })?),
    };
    Ok(candle_llama::Config {
        hidden_size: config.hidden_size,
        intermediate_size: config.intermediate_size,
        vocab_size: config.vocab_size,
        num_hidden_layers: config.num_hidden_layers,
        num_attention_heads: config.num_attention_heads,
        num_key_value_heads: config.num_key_value_heads,
        use_flash_attn: false,
        rms_norm_eps: config.rms_norm_eps,
        rope_theta: config.rope_theta as f32,
        bos_token_id: None,
        eos_token_id: None,
        rope_scaling,
        max_position_embeddings: config.max_position_embeddings,
        tie_word_embeddings: config.tie_word_embeddings,
    })
}

/// Every tensor candle's Llama reads, with its shape, so a bad checkpoint is reported as an
/// error before candle's loader (which panics on a missing layer tensor) sees it.
fn expected_tensors(config: &ModelConfig) -> Vec<(String, Vec<usize>)> {
    let (h, i, v) = (
        config.hidden_size,
        config.intermediate_size,
        config.vocab_size,
    );
    let kv = config.head_dim * config.num_key_value_heads;
    let mut tensors = vec![
        ("model.embed_tokens.weight".to_string(), vec![v, h]),
        ("model.norm.weight".into(), vec![h]),
    ];
    if !config.tie_word_embeddings {
        tensors.push(("lm_head.weight".into(), vec![v, h]));
    }
    for layer in 0..config.num_hidden_layers {
        let name = |suffix: &str| format!("model.layers.{layer}.{suffix}");
        tensors.extend([
            (name("self_attn.q_proj.weight"), vec![h, h]),
            (name("self_attn.k_proj.weight"), vec![kv, h]),
            (name("self_attn.v_proj.weight"), vec![kv, h]),
            (name("self_attn.o_proj.weight"), vec![h, h]),
            (name("mlp.gate_proj.weight"), vec![i, h]),
            (name("mlp.up_proj.weight"), vec![i, h]),
            (name("mlp.down_proj.weight"), vec![h, i]),
            (name("input_layernorm.weight"), vec![h]),
            (name("post_attention_layernorm.weight"), vec![h]),
        ]);
    }
    tensors
}

impl LlamaNet {
    /// Loads the model from `vb` after checking every tensor it needs.
    pub fn new(config: &ModelConfig, vb: VarBuilder<'_>) -> candle_core::Result<Self> {
        let candle_config =
            candle_config(config).map_err(|error| candle_core::Error::Msg(error.to_string()))?;
        for (name, shape) in expected_tensors(config) {
            vb.get(shape.as_slice(), &name)?;
        }
        let model = candle_llama::Llama::load(vb.clone(), &candle_config)?;
        let empty_cache = candle_llama::Cache::new(true, vb.dtype(), &candle_config, vb.device())?;
        Ok(Self {
            model,
            empty_cache,
            context: config.max_position_embeddings,
            device: vb.device().clone(),
        })
    }

    /// An empty cache for one sequence.
    pub fn new_cache(&self) -> LlamaCache {
        LlamaCache {
            cache: self.empty_cache.clone(),
            len: 0,
        }
    }

    /// Runs `tokens` after what `cache` holds; returns the logits after the last one.
    pub fn forward(&self, tokens: &[u32], cache: &mut LlamaCache) -> Result<Vec<f32>> {
        let end = cache.len + tokens.len();
        if end > self.context {
            return Err(ModelError::ContextFull {
                tokens: end,
                limit: self.context,
            });
        }
        let input = Tensor::new(tokens, &self.device)?.unsqueeze(0)?;
        let logits = self.model.forward(&input, cache.len, &mut cache.cache)?;
        cache.len = end;
        Ok(logits.squeeze(0)?.to_dtype(DType::F32)?.to_vec1()?)
    }

    /// Logits of the last position of `tokens` computed from scratch, without a cache (the
    /// reference that cached decoding must equal).
    pub fn forward_uncached(&self, tokens: &[u32]) -> Result<Vec<f32>> {
        let mut cache = self.new_cache();
        cache.cache.use_kv_cache = false;
        self.forward(tokens, &mut cache)
    }
}
