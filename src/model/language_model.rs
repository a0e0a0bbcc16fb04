//! A model folder in the Hugging Face layout, loaded whole: config, weights, tokenizer and
//! chat template; and saved back the same way.

use super::chat::Chat;
use super::config::{Architecture, ModelConfig, dtype_name};
use super::decoder::Decoder;
use super::device::{check_dtype, default_dtype};
use super::error::{ModelError, Result};
use super::json_fields::{Fields, read_json};
use super::llama::LlamaNet;
use super::network::Network;
use super::qwen::Qwen;
use super::template::ChatTemplate;
use super::tokenizer::{ChatTokenizer, TokenizerConfig};
use super::weights::{ParameterStore, parameter_tensors, save_tensors};
use candle_core::{DType, Device};
use candle_nn::VarMap;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Where and in which precision to load a model.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// The device for weights and compute.
    pub device: Device,
    /// The compute dtype (default: f32 on the CPU, the stored dtype on a GPU).
    pub dtype: Option<DType>,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self {
            device: Device::Cpu,
            dtype: None,
        }
    }
}

/// The parts of a model folder other than the weights.
pub struct FolderParts {
    /// `config.json`.
    pub config: ModelConfig,
    /// `tokenizer.json` with `chat_template.jinja` (or the template in the tokenizer config).
    pub chat: Chat,
    /// `tokenizer_config.json`.
    pub tokenizer_config: TokenizerConfig,
    /// `generation_config.json`, when there is one.
    pub generation_config: Option<Value>,
}

/// A causal language model with its tokenizer and chat template.
pub struct LanguageModel {
    /// The folder it was loaded from (none for a model built in memory).
    pub dir: Option<PathBuf>,
    /// The shape and settings.
    pub config: ModelConfig,
    /// How conversations become tokens.
    pub chat: Chat,
    /// `tokenizer_config.json` as read.
    pub tokenizer_config: TokenizerConfig,
    /// `generation_config.json` as read.
    pub generation_config: Option<Value>,
    network: Network,
    parameters: VarMap,
    dtype: DType,
    device: Device,
}

fn required(dir: &Path, file: &str, hint: &str) -> Result<PathBuf> {
    let path = dir.join(file);
    if path.is_file() {
        Ok(path)
    } else {
        Err(ModelError::MissingFile {
            dir: dir.to_path_buf(),
            file: file.to_string(),
            hint: hint.to_string(),
        })
    }
}

/// Reads everything but the weights from a model folder.
pub fn read_folder_parts(dir: &Path) -> Result<FolderParts> {
    if !dir.is_dir() {
        return Err(ModelError::io(
            dir,
            std::io::Error::new(std::io::ErrorKind::NotFound, "no such model folder"),
        ));
    }
    let config = ModelConfig::load(&required(
        dir,
        "config.json",
        "the architecture and its shape",
    )?)?;
    let tokenizer_path = required(
        dir,
        "tokenizer.json",
        "the tokenizer, as saved by Hugging Face tokenizers",
    )?;
    let tokenizer = ChatTokenizer::from_file(&tokenizer_path)?;
    let tokenizer_config = TokenizerConfig::load(&required(
        dir,
        "tokenizer_config.json",
        "names the special tokens (eos_token) the chat template uses",
    )?)?;
    let jinja = dir.join("chat_template.jinja");
    let (source, source_name) = if jinja.is_file() {
        let text =
            std::fs::read_to_string(&jinja).map_err(|source| ModelError::io(&jinja, source))?;
        (text, "chat_template.jinja")
    } else if let Some(text) = &tokenizer_config.chat_template {
        (text.clone(), "tokenizer_config.json: chat_template")
    } else {
        return Err(ModelError::MissingFile {
            dir: dir.to_path_buf(),
            file: "chat_template.jinja".into(),
            hint: "the chat template; it may also sit in tokenizer_config.json as `chat_template`"
                .into(),
        });
    };
    let eos = tokenizer_config.eos_token.clone().unwrap_or_default();
    let bos = tokenizer_config.bos_token.clone().unwrap_or_default();
    let template = ChatTemplate::new(source, source_name, &bos, &eos)?;
    if tokenizer.vocab_size() > config.vocab_size {
        return Err(ModelError::field(
            dir.join("config.json"),
            "vocab_size",
            format!(
                "{} is smaller than the {} tokens of tokenizer.json",
                config.vocab_size,
                tokenizer.vocab_size()
            ),
        ));
    }
    let generation_path = dir.join("generation_config.json");
    let generation_config = if generation_path.is_file() {
        Some(read_json(&generation_path)?)
    } else {
        None
    };
    Ok(FolderParts {
        config,
        chat: Chat::new(tokenizer, template)?,
        tokenizer_config,
        generation_config,
    })
}

impl LanguageModel {
    /// Loads a model folder.
    pub fn load(dir: &Path, options: &LoadOptions) -> Result<Self> {
        let parts = read_folder_parts(dir)?;
        let trainable = parts.config.architecture.is_trainable();
        let store = ParameterStore::from_folder(dir, trainable)?;
        let mut model = Self::assemble(parts, store, options)?;
        model.dir = Some(dir.to_path_buf());
        Ok(model)
    }

    /// Builds a model from its parts and a parameter store (files or seeded random values).
    pub fn assemble(
        parts: FolderParts,
        store: ParameterStore,
        options: &LoadOptions,
    ) -> Result<Self> {
        let device = options.device.clone();
        let dtype = options
            .dtype
            .unwrap_or_else(|| default_dtype(&device, parts.config.stored_dtype));
        check_dtype(&device, dtype)?;
        let config = parts.config;
        let (network, parameters) = match config.architecture {
            Architecture::Qwen2 | Architecture::Qwen3 => {
                let (model, parameters) =
                    store.build(dtype, &device, |vb| Qwen::new(&config, vb))?;
                (Network::Qwen(model), parameters)
            }
            Architecture::Llama => {
                let (model, parameters) =
                    store.build(dtype, &device, |vb| LlamaNet::new(&config, vb))?;
                (Network::Llama(model), parameters)
            }
        };
        Ok(Self {
            dir: None,
            config,
            chat: parts.chat,
            tokenizer_config: parts.tokenizer_config,
            generation_config: parts.generation_config,
            network,
            parameters,
            dtype,
            device,
        })
    }

    /// The network, for generation.
    pub fn network(&self) -> &Network {
        &self.network
    }

    /// The trainable Qwen network, or an error for inference-only architectures.
    pub fn qwen(&self) -> Result<&Qwen> {
        match &self.network {
            Network::Qwen(model) => Ok(model),
            Network::Llama(_) => Err(ModelError::Request(format!(
                "{} models are inference-only here; training needs Qwen2 or Qwen3",
                self.config.architecture
            ))),
        }
    }

    /// Replaces the Qwen network by `change(network)`, e.g. to attach LoRA adapters to its
    /// projections. The parameter map, and so what `save` writes, stays as it was.
    pub fn replace_qwen(
        &mut self,
        change: impl FnOnce(&Qwen) -> candle_core::Result<Qwen>,
    ) -> Result<()> {
        let changed = change(self.qwen()?)?;
        self.network = Network::Qwen(changed);
        Ok(())
    }

    /// The trainable parameters by safetensors name (empty for inference-only models): hand
    /// `all_vars()` to an optimizer; updates are seen by every decoder of this model.
    pub fn parameters(&self) -> &VarMap {
        &self.parameters
    }

    /// The trainable parameters with their safetensors names, sorted by name.
    pub fn named_parameters(&self) -> Vec<(String, candle_core::Var)> {
        let mut named: Vec<(String, candle_core::Var)> = match self.parameters.data().lock() {
            Ok(map) => map
                .iter()
                .map(|(name, var)| (name.clone(), var.clone()))
                .collect(),
            Err(_) => Vec::new(),
        };
        named.sort_by(|a, b| a.0.cmp(&b.0));
        named
    }

    /// The compute dtype.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The device.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// A decoder for step-level generation with this model's weights (it sees every update).
    pub fn decoder(&self) -> Decoder {
        Decoder::new(&self.network, self.config.max_position_embeddings)
    }

    /// A decoder that also keeps prefilled prompts (`DEFAULT_PREFIX_CACHE_TOKENS`), so the
    /// sequences that repeat one (a GRPO group, a fork's continuations) prefill it once: for
    /// a phase during which the weights do not change, since a kept prompt is not computed
    /// again after an update.
    pub fn sharing_decoder(&self) -> Decoder {
        self.decoder()
            .with_prefix_cache(super::prefix_cache::DEFAULT_PREFIX_CACHE_TOKENS)
    }

    /// Tokens that end generation: `eos_token_id` of generation_config.json and config.json,
    /// and the tokenizer config's `eos_token`.
    pub fn stop_token_ids(&self) -> Vec<u32> {
        let mut ids = Vec::new();
        if let Some(value) = &self.generation_config
            && let Ok(fields) = Fields::new(Path::new("generation_config.json"), value)
        {
            ids.extend(fields.token_ids("eos_token_id").unwrap_or_default());
        }
        ids.extend(self.config.eos_token_ids.iter().copied());
        ids.extend(self.chat.end_of_turn_id());
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// A frozen copy of the Qwen network with its own copy of every weight (for a GRPO
    /// reference policy): later updates of this model do not reach it.
    pub fn frozen_copy(&self) -> Result<Qwen> {
        let qwen = self.qwen()?;
        let tensors = parameter_tensors(&self.parameters, self.dtype)?
            .into_iter()
            .map(|(name, tensor)| Ok((name, tensor.copy()?)))
            .collect::<Result<_>>()?;
        let store = ParameterStore::from_tensors(tensors, Path::new("(in memory)"), false);
        let (model, _) =
            store.build(self.dtype, &self.device, |vb| Qwen::new(qwen.config(), vb))?;
        Ok(model)
    }

    /// Writes the model as a Hugging Face folder: config.json, model.safetensors (in the
    /// compute dtype), tokenizer.json, tokenizer_config.json, chat_template.jinja and
    /// generation_config.json when there is one.
    pub fn save(&self, dir: &Path) -> Result<()> {
        self.qwen()?;
        std::fs::create_dir_all(dir).map_err(|source| ModelError::io(dir, source))?;
        let mut config = self.config.raw.clone();
        if let Value::Object(object) = &mut config {
            object.insert("dtype".into(), Value::String(dtype_name(self.dtype).into()));
            object.insert(
                "torch_dtype".into(),
                Value::String(dtype_name(self.dtype).into()),
            );
        }
        write_json(&dir.join("config.json"), &config)?;
        save_tensors(
            &parameter_tensors(&self.parameters, self.dtype)?,
            &dir.join("model.safetensors"),
        )?;
        self.chat.tokenizer.save(&dir.join("tokenizer.json"))?;
        let mut tokenizer_config = self.tokenizer_config.raw.clone();
        if let Value::Object(object) = &mut tokenizer_config {
            object.remove("chat_template");
        }
        write_json(&dir.join("tokenizer_config.json"), &tokenizer_config)?;
        let template_path = dir.join("chat_template.jinja");
        std::fs::write(&template_path, self.chat.template.source())
            .map_err(|source| ModelError::io(&template_path, source))?;
        if let Some(generation) = &self.generation_config {
            write_json(&dir.join("generation_config.json"), generation)?;
        }
        Ok(())
    }
}

/// Writes pretty JSON with a trailing newline.
pub fn write_json(path: &Path, value: &Value) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|error| ModelError::field(path, "(file)", format!("cannot serialise: {error}")))?;
    text.push('\n');
    std::fs::write(path, text).map_err(|source| ModelError::io(path, source))
}
