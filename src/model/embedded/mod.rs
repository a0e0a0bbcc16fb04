//! The embedded default model: a small Qwen2-shaped network with seeded weights and a
//! byte-level BPE tokenizer trained in-process, built without any download and saved as an
//! ordinary Hugging Face folder.

mod bpe;
mod corpus;

pub use bpe::{SPECIAL_TOKENS, train_tokenizer};
pub use corpus::{
    SYSTEM_PROMPT, WHOLE_NUMBER_TOKENS, calculator_conversation, calculator_tool, default_corpus,
};

use super::chat::Chat;
use super::config::{ModelConfig, dtype_name};
use super::error::Result;
use super::language_model::{FolderParts, LanguageModel, LoadOptions};
use super::layers::INIT_STD;
use super::template::ChatTemplate;
use super::tokenizer::{ChatTokenizer, TokenizerConfig};
use super::weights::ParameterStore;
use candle_core::DType;
use serde_json::{Value, json};
use std::path::Path;

/// The embedded model's chat template: Qwen-style ChatML with tools.
pub const CHAT_TEMPLATE: &str = include_str!("chat_template.jinja");

/// The shape and seed of the embedded model.
#[derive(Clone, Debug, PartialEq)]
pub struct EmbeddedSpec {
    /// Width of the residual stream.
    pub hidden_size: usize,
    /// Decoder layers.
    pub num_hidden_layers: usize,
    /// Query heads.
    pub num_attention_heads: usize,
    /// Key/value heads.
    pub num_key_value_heads: usize,
    /// Width of the MLP's hidden layer.
    pub intermediate_size: usize,
    /// Tokenizer and embedding size.
    pub vocab_size: usize,
    /// Context window.
    pub max_position_embeddings: usize,
    /// RoPE base.
    pub rope_theta: f64,
    /// Whether the output projection reuses the embeddings.
    pub tie_word_embeddings: bool,
    /// Seed of the weight initialisation.
    pub seed: u64,
}

impl Default for EmbeddedSpec {
    /// About 4.5M parameters: hidden 256, 4 layers, 4 heads, 2 KV heads, MLP 1024, vocab 2048.
    fn default() -> Self {
        Self {
            hidden_size: 256,
            num_hidden_layers: 4,
            num_attention_heads: 4,
            num_key_value_heads: 2,
            intermediate_size: 1024,
            vocab_size: 2048,
            max_position_embeddings: 2048,
            rope_theta: 10_000.0,
            tie_word_embeddings: true,
            seed: 0,
        }
    }
}

impl EmbeddedSpec {
    /// The ~10M-parameter benchmark shape: the default with an MLP of 2816.
    pub fn bench() -> Self {
        Self {
            intermediate_size: 2816,
            ..Self::default()
        }
    }

    /// Qwen2.5-0.5B-Instruct's shape (hidden 896, 24 layers, 14 heads, 2 KV heads, MLP 4864,
    /// RoPE base 10⁶, tied embeddings, 32k context) over the embedded tokenizer's vocabulary:
    /// about 0.36B parameters of random weights, for GPU checks without a download.
    pub fn qwen2_5_0_5b() -> Self {
        Self {
            hidden_size: 896,
            num_hidden_layers: 24,
            num_attention_heads: 14,
            num_key_value_heads: 2,
            intermediate_size: 4864,
            max_position_embeddings: 32_768,
            rope_theta: 1_000_000.0,
            ..Self::default()
        }
    }

    /// `config.json` for this shape, readable by transformers 4 and 5.
    pub fn config_json(&self, eos_id: u32, pad_id: u32) -> Value {
        json!({
            "architectures": ["Qwen2ForCausalLM"],
            "model_type": "qwen2",
            "attention_dropout": 0.0,
            "bos_token_id": null,
            "eos_token_id": eos_id,
            "pad_token_id": pad_id,
            "hidden_act": "silu",
            "hidden_size": self.hidden_size,
            "initializer_range": INIT_STD,
            "intermediate_size": self.intermediate_size,
            "max_position_embeddings": self.max_position_embeddings,
            "max_window_layers": self.num_hidden_layers,
            "num_attention_heads": self.num_attention_heads,
            "num_hidden_layers": self.num_hidden_layers,
            "num_key_value_heads": self.num_key_value_heads,
            "rms_norm_eps": 1e-6,
            "rope_parameters": {"rope_theta": self.rope_theta, "rope_type": "default"},
            "rope_theta": self.rope_theta,
            "sliding_window": null,
            "tie_word_embeddings": self.tie_word_embeddings,
            "use_cache": true,
            "use_sliding_window": false,
            "vocab_size": self.vocab_size,
            "dtype": dtype_name(DType::F32),
            "torch_dtype": dtype_name(DType::F32)
        })
    }
}

/// Builds the embedded model in memory from `corpus` (see `default_corpus`).
pub fn build(
    spec: &EmbeddedSpec,
    corpus: &[String],
    options: &LoadOptions,
) -> Result<LanguageModel> {
    let tokenizer = ChatTokenizer::new(
        train_tokenizer(corpus, spec.vocab_size)?,
        Path::new("tokenizer.json"),
    );
    let eos = "<|im_end|>";
    let eos_id = tokenizer.require(eos, "the end of a chat turn")?;
    let pad_id = tokenizer.require("<|endoftext|>", "padding")?;
    let config =
        ModelConfig::from_json(Path::new("config.json"), spec.config_json(eos_id, pad_id))?;
    let tokenizer_config = TokenizerConfig::from_json(
        Path::new("tokenizer_config.json"),
        json!({
            "add_prefix_space": false,
            "bos_token": null,
            "clean_up_tokenization_spaces": false,
            "eos_token": eos,
            "model_max_length": spec.max_position_embeddings,
            "pad_token": "<|endoftext|>",
            "tokenizer_class": "PreTrainedTokenizerFast"
        }),
    )?;
    let template = ChatTemplate::new(CHAT_TEMPLATE.to_string(), "chat_template.jinja", "", eos)?;
    let parts = FolderParts {
        config,
        chat: Chat::new(tokenizer, template)?,
        tokenizer_config,
        generation_config: Some(json!({
            "bos_token_id": null,
            "eos_token_id": [eos_id, pad_id],
            "pad_token_id": pad_id
        })),
    };
    let store = ParameterStore::random(spec.seed, INIT_STD, true);
    LanguageModel::assemble(parts, store, options)
}

/// The tokenizer corpus of the embedded model: the default corpus rendered through its chat
/// template.
pub fn default_template_corpus() -> Result<Vec<String>> {
    let template = ChatTemplate::new(
        CHAT_TEMPLATE.to_string(),
        "chat_template.jinja",
        "",
        "<|im_end|>",
    )?;
    default_corpus(&template)
}

/// Builds the embedded model from the default corpus, saves it to `dir` and loads it back
/// through the ordinary loader.
pub fn init_folder(
    dir: &Path,
    spec: &EmbeddedSpec,
    options: &LoadOptions,
) -> Result<LanguageModel> {
    build(spec, &default_template_corpus()?, options)?.save(dir)?;
    LanguageModel::load(dir, options)
}
