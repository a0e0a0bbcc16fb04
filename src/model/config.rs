//! `config.json`: the architecture and its shape, read from both the transformers 4 layout
//! (top-level `rope_theta`) and the transformers 5 layout (`rope_parameters`).

use super::error::Result;
use super::json_fields::{Fields, read_json};
use candle_core::DType;
use serde_json::Value;
use std::fmt;
use std::path::Path;

/// The architectures this crate can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Architecture {
    /// `Qwen2ForCausalLM` (Qwen2, Qwen2.5): biases on q/k/v; trainable here.
    Qwen2,
    /// `Qwen3ForCausalLM`: RMSNorm on queries and keys, explicit `head_dim`; trainable here.
    Qwen3,
    /// `LlamaForCausalLM`: candle-transformers' implementation, inference only.
    Llama,
}

impl Architecture {
    /// The class name transformers writes in `architectures`.
    pub fn class_name(self) -> &'static str {
        match self {
            Self::Qwen2 => "Qwen2ForCausalLM",
            Self::Qwen3 => "Qwen3ForCausalLM",
            Self::Llama => "LlamaForCausalLM",
        }
    }

    /// The `model_type` transformers writes.
    pub fn model_type(self) -> &'static str {
        match self {
            Self::Qwen2 => "qwen2",
            Self::Qwen3 => "qwen3",
            Self::Llama => "llama",
        }
    }

    /// Whether our own trainable implementation serves it.
    pub fn is_trainable(self) -> bool {
        matches!(self, Self::Qwen2 | Self::Qwen3)
    }

    const ALL: [Architecture; 3] = [Self::Qwen2, Self::Qwen3, Self::Llama];

    fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|arch| arch.class_name() == name || arch.model_type() == name)
    }
}

impl fmt::Display for Architecture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.class_name())
    }
}

/// The model's shape and settings, as read from `config.json`.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelConfig {
    /// Which implementation runs it.
    pub architecture: Architecture,
    /// Rows of the embedding matrix.
    pub vocab_size: usize,
    /// Width of the residual stream.
    pub hidden_size: usize,
    /// Width of the MLP's hidden layer.
    pub intermediate_size: usize,
    /// Number of decoder layers.
    pub num_hidden_layers: usize,
    /// Query heads.
    pub num_attention_heads: usize,
    /// Key/value heads (grouped-query attention when fewer than query heads).
    pub num_key_value_heads: usize,
    /// Width of one head.
    pub head_dim: usize,
    /// The context window.
    pub max_position_embeddings: usize,
    /// RMSNorm epsilon.
    pub rms_norm_eps: f64,
    /// RoPE base frequency.
    pub rope_theta: f64,
    /// Whether the output projection reuses the embedding matrix.
    pub tie_word_embeddings: bool,
    /// Biases on the q/k/v projections.
    pub qkv_bias: bool,
    /// A bias on the output projection.
    pub o_bias: bool,
    /// The dtype the weights were saved in, when the config says.
    pub stored_dtype: Option<DType>,
    /// End-of-sequence token ids from the config.
    pub eos_token_ids: Vec<u32>,
    /// The padding token id from the config.
    pub pad_token_id: Option<u32>,
    /// The file as read, written back unchanged when the model is saved.
    pub raw: Value,
}

impl ModelConfig {
    /// Reads `config.json`.
    pub fn load(path: &Path) -> Result<Self> {
        let raw = read_json(path)?;
        Self::from_json(path, raw)
    }

    /// Parses a config that was read from `path` (named in errors).
    pub fn from_json(path: &Path, raw: Value) -> Result<Self> {
        let fields = Fields::new(path, &raw)?;
        let architecture = read_architecture(&fields)?;
        let hidden_size = fields.positive("hidden_size")?;
        let num_attention_heads = fields.positive("num_attention_heads")?;
        let num_key_value_heads = fields
            .opt_usize("num_key_value_heads")?
            .unwrap_or(num_attention_heads);
        if num_key_value_heads == 0 || num_attention_heads % num_key_value_heads != 0 {
            return Err(fields.error(
                "num_key_value_heads",
                format!(
                    "{num_key_value_heads} must divide num_attention_heads ({num_attention_heads})"
                ),
            ));
        }
        let head_dim = match fields.opt_usize("head_dim")? {
            Some(dim) if dim > 0 => dim,
            _ if hidden_size % num_attention_heads == 0 => hidden_size / num_attention_heads,
            _ => {
                return Err(fields.error(
                    "num_attention_heads",
                    "does not divide hidden_size and no head_dim is given",
                ));
            }
        };
        if head_dim % 2 != 0 {
            return Err(fields.error(
                "head_dim",
                format!("{head_dim} must be even for rotary embeddings"),
            ));
        }
        check_activation(&fields)?;
        check_attention_window(&fields)?;
        let rope_theta = read_rope_theta(&fields, architecture)?;
        let attention_bias = fields.bool_or("attention_bias", false)?;
        let (qkv_bias, o_bias) = match architecture {
            Architecture::Qwen2 => (true, false),
            Architecture::Qwen3 | Architecture::Llama => (attention_bias, attention_bias),
        };
        if architecture == Architecture::Llama && attention_bias {
            return Err(fields.error(
                "attention_bias",
                "Llama with attention biases is not supported",
            ));
        }
        let config = Self {
            architecture,
            vocab_size: fields.positive("vocab_size")?,
            hidden_size,
            intermediate_size: fields.positive("intermediate_size")?,
            num_hidden_layers: fields.positive("num_hidden_layers")?,
            num_attention_heads,
            num_key_value_heads,
            head_dim,
            max_position_embeddings: fields.positive("max_position_embeddings")?,
            rms_norm_eps: fields.opt_f64("rms_norm_eps")?.unwrap_or(1e-6),
            rope_theta,
            tie_word_embeddings: fields.bool_or("tie_word_embeddings", false)?,
            qkv_bias,
            o_bias,
            stored_dtype: read_dtype(&fields)?,
            eos_token_ids: fields.token_ids("eos_token_id")?,
            pad_token_id: fields.token_ids("pad_token_id")?.first().copied(),
            raw: Value::Null,
        };
        Ok(Self { raw, ..config })
    }

    /// Query heads sharing one key/value head.
    pub fn group_size(&self) -> usize {
        self.num_attention_heads / self.num_key_value_heads
    }

    /// The number of parameters this shape implies (tied embeddings counted once).
    pub fn parameter_count(&self) -> usize {
        let (h, d) = (self.hidden_size, self.head_dim);
        let (q, kv) = (self.num_attention_heads * d, self.num_key_value_heads * d);
        let attention = h * q
            + 2 * h * kv
            + q * h
            + if self.qkv_bias { q + 2 * kv } else { 0 }
            + if self.o_bias { h } else { 0 }
            + if self.has_qk_norm() { 2 * d } else { 0 };
        let layer = attention + 3 * h * self.intermediate_size + 2 * h;
        let head = if self.tie_word_embeddings {
            0
        } else {
            self.vocab_size * h
        };
        self.vocab_size * h + self.num_hidden_layers * layer + h + head
    }

    /// Whether queries and keys get their own RMSNorm (Qwen3).
    pub fn has_qk_norm(&self) -> bool {
        self.architecture == Architecture::Qwen3
    }
}

fn read_architecture(fields: &Fields<'_>) -> Result<Architecture> {
    let supported = Architecture::ALL.map(Architecture::class_name).join(", ");
    let name = match fields.get("architectures") {
        Some(Value::Array(names)) => match names.first().and_then(Value::as_str) {
            Some(name) => name.to_string(),
            None => {
                return Err(fields.error("architectures", "expected a list with one class name"));
            }
        },
        Some(_) => return Err(fields.error("architectures", "expected a list of class names")),
        None => match fields.opt_str("model_type")? {
            Some(name) => name.to_string(),
            None => return Err(fields.error("architectures", "missing (and no model_type either)")),
        },
    };
    Architecture::from_name(&name).ok_or_else(|| {
        fields.error(
            "architectures",
            format!("{name} is not supported; supported: {supported}"),
        )
    })
}

fn check_activation(fields: &Fields<'_>) -> Result<()> {
    match fields.opt_str("hidden_act")? {
        None | Some("silu") => Ok(()),
        Some(other) => Err(fields.error(
            "hidden_act",
            format!("`{other}` is not supported; only silu"),
        )),
    }
}

fn check_attention_window(fields: &Fields<'_>) -> Result<()> {
    if fields.bool_or("use_sliding_window", false)? {
        return Err(fields.error(
            "use_sliding_window",
            "sliding-window attention is not supported",
        ));
    }
    if let Some(Value::Array(kinds)) = fields.get("layer_types")
        && let Some(kind) = kinds
            .iter()
            .find(|kind| kind.as_str() != Some("full_attention"))
    {
        return Err(fields.error(
            "layer_types",
            format!("{kind} layers are not supported; only full_attention"),
        ));
    }
    Ok(())
}

/// The RoPE base from `rope_parameters.rope_theta` (transformers 5) or `rope_theta`
/// (transformers 4). Scaled RoPE is accepted only where the implementation supports it.
fn read_rope_theta(fields: &Fields<'_>, architecture: Architecture) -> Result<f64> {
    let nested = fields.object("rope_parameters")?;
    let theta = match &nested {
        Some(parameters) => parameters.opt_f64("rope_theta")?,
        None => None,
    };
    let theta = theta.or(fields.opt_f64("rope_theta")?).unwrap_or(10_000.0);
    if theta <= 0.0 {
        return Err(fields.error("rope_theta", "must be positive"));
    }
    let scaling_type = match (&nested, fields.object("rope_scaling")?) {
        (_, Some(scaling)) => scaling
            .opt_str("rope_type")?
            .or(scaling.opt_str("type")?)
            .map(|kind| ("rope_scaling", kind)),
        (Some(parameters), None) => parameters
            .opt_str("rope_type")?
            .map(|kind| ("rope_parameters", kind)),
        (None, None) => None,
    };
    match scaling_type {
        None | Some((_, "default")) => Ok(theta),
        Some((_, "llama3")) if architecture == Architecture::Llama => Ok(theta),
        Some((field, kind)) => Err(fields.error(
            field,
            format!("RoPE scaling `{kind}` is not supported for {architecture}; only default RoPE"),
        )),
    }
}

fn read_dtype(fields: &Fields<'_>) -> Result<Option<DType>> {
    let name = match fields.opt_str("dtype")? {
        Some(name) => Some(name),
        None => fields.opt_str("torch_dtype")?,
    };
    match name {
        None => Ok(None),
        Some("float32") => Ok(Some(DType::F32)),
        Some("float16") => Ok(Some(DType::F16)),
        Some("bfloat16") => Ok(Some(DType::BF16)),
        Some("float64") => Ok(Some(DType::F64)),
        Some(other) => Err(fields.error("dtype", format!("unknown dtype `{other}`"))),
    }
}

/// The name transformers uses for a dtype in `config.json`.
pub fn dtype_name(dtype: DType) -> &'static str {
    match dtype {
        DType::F16 => "float16",
        DType::BF16 => "bfloat16",
        DType::F64 => "float64",
        _ => "float32",
    }
}
