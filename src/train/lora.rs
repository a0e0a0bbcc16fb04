//! LoRA adapters on a frozen base, saved and loaded as PEFT does it
//! (`adapter_model.safetensors` with names like
//! `base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight`, and `adapter_config.json`
//! with `peft_type: "LORA"`), and merged into the base weights (`W + scale·B·A`) as an ordinary
//! Hugging Face folder.

use super::error::{Result, TrainError};
use crate::model::{
    LanguageModel, Linear, LowRankAdapter, Qwen, parameter_tensors, save_tensors, write_json,
};
pub use crate::trajectory::LoraConfig;
use candle_core::{DType, Device, Tensor, Var};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// The projections an adapter can target.
pub const LORA_TARGETS: [&str; 7] = [
    "q_proj",
    "k_proj",
    "v_proj",
    "o_proj",
    "gate_proj",
    "up_proj",
    "down_proj",
];

/// PEFT's adapter weights file.
pub const ADAPTER_WEIGHTS_FILE: &str = "adapter_model.safetensors";
/// PEFT's adapter config file.
pub const ADAPTER_CONFIG_FILE: &str = "adapter_config.json";

const PEFT_PREFIX: &str = "base_model.model.";

impl LoraConfig {
    /// The factor applied to `B·A`.
    pub fn scale(&self) -> f64 {
        if self.use_rslora {
            self.alpha / (self.rank as f64).sqrt()
        } else {
            self.alpha / self.rank as f64
        }
    }

    /// Checks the rank and the targets.
    pub fn validate(&self) -> Result<()> {
        if self.rank == 0 {
            return Err(TrainError::config("lora.rank", "must be at least 1"));
        }
        if self.target_modules.is_empty() {
            return Err(TrainError::config(
                "lora.target_modules",
                format!("name at least one of {}", LORA_TARGETS.join(", ")),
            ));
        }
        for target in &self.target_modules {
            if !LORA_TARGETS.contains(&target.as_str()) {
                return Err(TrainError::config(
                    "lora.target_modules",
                    format!("`{target}` is not one of {}", LORA_TARGETS.join(", ")),
                ));
            }
        }
        Ok(())
    }
}

/// The two factors of one adapted projection: `A [rank, in]` and `B [out, rank]`.
struct Adapted {
    a: Var,
    b: Var,
}

/// LoRA adapters for every targeted projection of a model.
pub struct LoraAdapters {
    config: LoraConfig,
    modules: BTreeMap<String, Adapted>,
}

/// FNV-1a of a module path, so each adapter's initial values depend only on seed and name.
fn name_seed(seed: u64, name: &str) -> u64 {
    name.bytes()
        .fold(0xcbf2_9ce4_8422_2325 ^ seed, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        })
}

/// The module path of a targeted projection weight, e.g. `model.layers.3.mlp.up_proj`.
fn target_module<'a>(name: &'a str, targets: &[String]) -> Option<&'a str> {
    let module = name.strip_suffix(".weight")?;
    let leaf = module.rsplit('.').next()?;
    (module.starts_with("model.layers.") && targets.iter().any(|target| target == leaf))
        .then_some(module)
}

impl LoraAdapters {
    /// Fresh adapters for `model` as PEFT initialises them: `A` uniform in ±1/√in (Kaiming
    /// uniform with a = √5), seeded by `seed` and the module name; `B` zero, so the adapted
    /// model starts equal to the base.
    pub fn new(model: &LanguageModel, config: &LoraConfig, seed: u64) -> Result<Self> {
        config.validate()?;
        let (dtype, device) = (model.dtype(), model.device());
        let mut modules = BTreeMap::new();
        for (name, var) in model.named_parameters() {
            let Some(module) = target_module(&name, &config.target_modules) else {
                continue;
            };
            let (out_dim, in_dim) = var.dims2()?;
            let bound = 1.0 / (in_dim as f64).sqrt();
            let mut rng = StdRng::seed_from_u64(name_seed(seed, module));
            let values: Vec<f32> = (0..config.rank * in_dim)
                .map(|_| rng.random_range(-bound..bound) as f32)
                .collect();
            let a = Tensor::from_vec(values, (config.rank, in_dim), &Device::Cpu)?
                .to_dtype(dtype)?
                .to_device(device)?;
            let b = Tensor::zeros((out_dim, config.rank), dtype, device)?;
            modules.insert(
                module.to_string(),
                Adapted {
                    a: Var::from_tensor(&a)?,
                    b: Var::from_tensor(&b)?,
                },
            );
        }
        if modules.is_empty() {
            return Err(TrainError::config(
                "lora.target_modules",
                "no projection of this model matches; is it a Qwen2/Qwen3 model?",
            ));
        }
        Ok(Self {
            config: config.clone(),
            modules,
        })
    }

    /// The adapters' shape.
    pub fn config(&self) -> &LoraConfig {
        &self.config
    }

    /// The parameters under PEFT's names (`base_model.model.<module>.lora_A.weight`, ...).
    pub fn named_parameters(&self) -> Vec<(String, Var)> {
        let mut named = Vec::with_capacity(self.modules.len() * 2);
        for (module, adapted) in &self.modules {
            named.push((peft_name(module, "lora_A"), adapted.a.clone()));
            named.push((peft_name(module, "lora_B"), adapted.b.clone()));
        }
        named
    }

    /// Attaches the adapters to `model`'s network with the base frozen: only the adapters
    /// receive gradients, and decoders of the model generate with them.
    pub fn attach(&self, model: &mut LanguageModel) -> Result<()> {
        let scale = self.config.scale();
        model.replace_qwen(|qwen| {
            qwen.detached()
                .map_projections(
                    &mut |name: &str, layer: &Linear| match self.modules.get(name) {
                        Some(adapted) => Ok(layer.with_adapter(Some(LowRankAdapter::new(
                            adapted.a.as_tensor().clone(),
                            adapted.b.as_tensor().clone(),
                            scale,
                        )?))),
                        None => Ok(layer.with_adapter(None)),
                    },
                )
        })?;
        Ok(())
    }

    /// `model`'s network without adapters and detached: the frozen base (LoRA's reference
    /// policy). It shares the base weights, so it costs no copy.
    pub fn base_network(model: &LanguageModel) -> Result<Qwen> {
        let base = model
            .qwen()?
            .detached()
            .map_projections(&mut |_: &str, layer: &Linear| Ok(layer.with_adapter(None)))?;
        Ok(base)
    }

    /// Writes `adapter_model.safetensors` and `adapter_config.json` into `dir` as PEFT does,
    /// naming `base_model` as the model to load them onto.
    pub fn save(&self, dir: &Path, base_model: &str) -> Result<()> {
        std::fs::create_dir_all(dir).map_err(|source| TrainError::io(dir, source))?;
        let tensors: BTreeMap<String, Tensor> = self
            .named_parameters()
            .into_iter()
            .map(|(name, var)| (name, var.as_tensor().detach()))
            .collect();
        save_tensors(&tensors, &dir.join(ADAPTER_WEIGHTS_FILE))?;
        write_json(
            &dir.join(ADAPTER_CONFIG_FILE),
            &peft_config(&self.config, base_model),
        )?;
        Ok(())
    }

    /// Reads an adapter folder written by [`LoraAdapters::save`] or by PEFT for `model`.
    pub fn load(model: &LanguageModel, dir: &Path) -> Result<Self> {
        let config = read_peft_config(&dir.join(ADAPTER_CONFIG_FILE))?;
        let adapters = Self::new(model, &config, 0)?;
        adapters.load_values(dir)?;
        Ok(adapters)
    }

    /// Replaces the adapters' values with those saved in `dir` (same shape and targets).
    pub fn load_values(&self, dir: &Path) -> Result<()> {
        let path = dir.join(ADAPTER_WEIGHTS_FILE);
        let device = self.named_parameters()[0].1.device().clone();
        let saved = candle_core::safetensors::load(&path, &device).map_err(|error| {
            TrainError::file(&path, format!("not a readable safetensors file: {error}"))
        })?;
        for (name, var) in self.named_parameters() {
            let tensor = find_tensor(&saved, &name, &path)?;
            if tensor.dims() != var.dims() {
                return Err(TrainError::file(
                    &path,
                    format!(
                        "`{name}` has shape {:?}, the model's adapter needs {:?}",
                        tensor.dims(),
                        var.dims()
                    ),
                ));
            }
            var.set(&tensor.to_dtype(var.dtype())?)?;
        }
        Ok(())
    }

    /// Every weight of `model` with the adapters merged in (`W + scale·B·A`, computed in at
    /// least f32), under the safetensors names.
    pub fn merged_tensors(&self, model: &LanguageModel) -> Result<BTreeMap<String, Tensor>> {
        let dtype = model.dtype();
        let wide = if dtype == DType::F64 {
            DType::F64
        } else {
            DType::F32
        };
        let scale = self.config.scale();
        let mut tensors = parameter_tensors(model.parameters(), dtype)?;
        for (module, adapted) in &self.modules {
            let name = format!("{module}.weight");
            let Some(weight) = tensors.get(&name) else {
                return Err(TrainError::Input(format!(
                    "the model has no `{name}` to merge the adapter into"
                )));
            };
            let a = adapted.a.as_tensor().to_dtype(wide)?;
            let b = adapted.b.as_tensor().to_dtype(wide)?;
            let merged = (weight.to_dtype(wide)? + (b.matmul(&a)? * scale)?)?.to_dtype(dtype)?;
            tensors.insert(name, merged);
        }
        Ok(tensors)
    }

    /// Writes `model` with the adapters merged into its weights as an ordinary Hugging Face
    /// folder (config, weights, tokenizer, template), loadable without PEFT.
    pub fn save_merged(&self, model: &LanguageModel, dir: &Path) -> Result<()> {
        let merged = self.merged_tensors(model)?;
        model.save(dir)?;
        save_tensors(&merged, &dir.join("model.safetensors"))?;
        Ok(())
    }
}

fn peft_name(module: &str, matrix: &str) -> String {
    format!("{PEFT_PREFIX}{module}.{matrix}.weight")
}

fn find_tensor(saved: &HashMap<String, Tensor>, name: &str, path: &Path) -> Result<Tensor> {
    saved.get(name).cloned().ok_or_else(|| {
        TrainError::file(
            path,
            format!("no tensor `{name}`; was the adapter trained for another model or targets?"),
        )
    })
}

/// `adapter_config.json` as PEFT writes it for a LoRA adapter of a causal LM (`lora_alpha`
/// an integer when it is whole, as PEFT types it).
fn peft_config(config: &LoraConfig, base_model: &str) -> Value {
    let alpha = if config.alpha.fract() == 0.0 && config.alpha.abs() < 1e15 {
        json!(config.alpha as i64)
    } else {
        json!(config.alpha)
    };
    json!({
        "alpha_pattern": {},
        "auto_mapping": null,
        "base_model_name_or_path": base_model,
        "bias": "none",
        "fan_in_fan_out": false,
        "inference_mode": true,
        "init_lora_weights": true,
        "layers_pattern": null,
        "layers_to_transform": null,
        "lora_alpha": alpha,
        "lora_dropout": 0.0,
        "modules_to_save": null,
        "peft_type": "LORA",
        "r": config.rank,
        "rank_pattern": {},
        "revision": null,
        "target_modules": config.target_modules,
        "task_type": "CAUSAL_LM",
        "use_dora": false,
        "use_rslora": config.use_rslora
    })
}

/// Reads a PEFT LoRA config, refusing settings this implementation does not compute.
fn read_peft_config(path: &Path) -> Result<LoraConfig> {
    let text = std::fs::read_to_string(path).map_err(|source| TrainError::io(path, source))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|error| TrainError::file(path, format!("not valid JSON: {error}")))?;
    let field = |name: &str| value.get(name).filter(|v| !v.is_null());
    let bad = |name: &str, problem: &str| TrainError::file(path, format!("`{name}`: {problem}"));
    if field("peft_type").and_then(Value::as_str) != Some("LORA") {
        return Err(bad("peft_type", "only \"LORA\" adapters can be loaded"));
    }
    let rank = field("r")
        .and_then(Value::as_u64)
        .ok_or_else(|| bad("r", "missing or not a whole number"))? as usize;
    let alpha = field("lora_alpha")
        .and_then(Value::as_f64)
        .ok_or_else(|| bad("lora_alpha", "missing or not a number"))?;
    let target_modules = field("target_modules")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("target_modules", "expected a list of projection names"))?
        .iter()
        .map(|target| {
            target
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| bad("target_modules", "expected names"))
        })
        .collect::<Result<Vec<_>>>()?;
    for (name, plain) in [
        ("use_dora", json!(false)),
        ("bias", json!("none")),
        ("fan_in_fan_out", json!(false)),
    ] {
        if field(name).is_some_and(|v| *v != plain) {
            return Err(bad(name, &format!("only {plain} is supported")));
        }
    }
    for name in ["rank_pattern", "alpha_pattern", "layers_to_transform"] {
        let used = field(name).is_some_and(|v| v.as_object().is_none_or(|map| !map.is_empty()));
        if used {
            return Err(bad(name, "per-layer settings are not supported"));
        }
    }
    let config = LoraConfig {
        rank,
        alpha,
        target_modules,
        use_rslora: field("use_rslora").and_then(Value::as_bool) == Some(true),
    };
    config
        .validate()
        .map_err(|error| TrainError::file(path, error.to_string()))?;
    Ok(config)
}
