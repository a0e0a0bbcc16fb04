//! The causal language model: Hugging Face folders (config, sharded safetensors, tokenizer,
//! chat template), our own trainable Qwen2/Qwen3 in candle, Llama from candle-transformers
//! for inference, KV-cached batched generation with a step-level API for agent loops,
//! full-sequence log-probs and entropies for training, and the embedded default model.
//!
//! Log-prob convention (shared by sampling and training): `log softmax(logits / T)[token]`
//! over the full vocabulary, `T` the sampling temperature (1 for greedy); see `logprobs`.
//!
//! An agent loop, in outline:
//!
//! ```text
//! let model = LanguageModel::load(dir, &LoadOptions::default())?;
//! let mut decoder = model.decoder();
//! let prompt = model.chat.prompt_ids(&task.prompt, &task.tools)?;
//! let id = decoder.add_sequence(&prompt, SamplingParams::sample(1.0, seed))?;
//! let stop = StopCondition { token_ids: model.stop_token_ids(), strings: vec![] };
//! loop over active ids: decoder.step(&active)? gives a SampledToken per id (token, logprob,
//!   entropy); stop.check(&model.chat.tokenizer, &turn_tokens)? ends a turn; a turn that called
//!   a tool pauses (leave its id out of the next steps) until its result comes back, then
//!   decoder.append(id, &model.chat.observation_ids(&history, &[tool_message], &tools)?)?.
//! ```
//!
//! A trainer builds a `TokenBatch` (right padding, the token trace's ids), calls
//! `next_token_stats(model.qwen()?, &batch, T)` for log-probs and entropies `[B, T-1]`,
//! masks with the trace's loss mask, and steps an optimizer over `model.parameters()`;
//! `next_token_stats_at` (or `next_token_logits_at`) computes the output projection and the
//! softmax only at the loss mask's columns, the same figures for less work.

mod attention;
mod batch;
mod chat;
mod config;
mod decoder;
mod device;
pub mod embedded;
mod error;
mod generate;
mod json_fields;
mod kernels;
mod kv_cache;
mod language_model;
mod layers;
mod linear;
mod llama;
mod logprobs;
mod network;
mod pool;
mod prefix_cache;
mod pyjson;
mod qwen;
mod sampling;
mod score;
mod shared_prefix;
mod template;
mod tokenizer;
mod weights;

pub use batch::{Padding, TokenBatch};
pub use chat::{Chat, EncodedChat, LossOn, message_json, messages_json};
pub use config::{Architecture, ModelConfig, dtype_name};
pub use decoder::{Decoder, SequenceId};
pub use device::{DeviceChoice, check_dtype, default_dtype, parse_dtype};
pub use error::{ModelError, Result};
pub use generate::{FinishReason, GenerateParams, Generation, StopCondition, generate};
pub use kernels::{ISA_ENV, Isa, IsaError, Kernels};
pub use kv_cache::SequenceKv;
pub use language_model::{FolderParts, LanguageModel, LoadOptions, read_folder_parts, write_json};
pub use linear::{Linear, LowRankAdapter};
pub use llama::{LlamaCache, LlamaNet};
pub use logprobs::{
    NextTokenStats, PickedLogits, entropy, next_token_log_probs, next_token_log_probs_at,
    next_token_logits_at, next_token_stats, next_token_stats_at, token_log_probs,
};
pub use network::{Network, SequenceCache};
pub use pool::on_pool;
pub use prefix_cache::DEFAULT_PREFIX_CACHE_TOKENS;
pub use pyjson::{DumpOptions, dumps as python_json_dumps};
pub use qwen::{Qwen, Segment};
pub use sampling::{SampledToken, Sampler, SamplingParams, argmax};
pub use score::{PolicyTokens, TokenSource, TrajectoryScore, score_trajectory, trajectory_tokens};
pub use shared_prefix::SharedRows;
pub use template::{ChatTemplate, RenderOptions};
pub use tokenizer::{ByteOffsets, ChatTokenizer, TokenizerConfig};
pub use weights::{ParameterStore, parameter_tensors, save_tensors, weight_files};
