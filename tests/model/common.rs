//! Shared helpers: fixture folders, their reference numbers, tiny random models.

use candle_core::{DType, Device};
use rollscope::model::{LanguageModel, LoadOptions, ModelConfig, ParameterStore, Qwen};
use rollscope::trajectory::{Message, Role, ToolCall};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The fixture folder `name` under tests/data.
pub fn fixture_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// The fixture's reference.json.
pub fn reference(name: &str) -> Value {
    let text = std::fs::read_to_string(fixture_dir(name).join("reference.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Loads a fixture model in f32 on the CPU.
pub fn load_fixture(name: &str) -> LanguageModel {
    LanguageModel::load(&fixture_dir(name), &LoadOptions::default()).unwrap()
}

/// A JSON array of integers.
pub fn ids(value: &Value) -> Vec<u32> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|id| id.as_u64().unwrap() as u32)
        .collect()
}

/// A JSON array of numbers.
pub fn floats(value: &Value) -> Vec<f64> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// OpenAI JSON messages as trajectory messages.
pub fn messages(conversation: &Value) -> Vec<Message> {
    conversation
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            let role = Role::from(entry["role"].as_str().unwrap().to_string());
            let mut message = Message::new(role, entry["content"].as_str().unwrap_or(""));
            for call in entry
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let function = &call["function"];
                message.tool_calls.push(ToolCall::from_json_arguments(
                    function["name"].as_str().unwrap(),
                    &function["arguments"],
                ));
            }
            message
        })
        .collect()
}

/// A tiny config: Qwen2 (biases, tied) or Qwen3 (q/k norms, untied).
pub fn tiny_config(architecture: &str, context: usize) -> ModelConfig {
    let qwen3 = architecture == "Qwen3ForCausalLM";
    let raw = json!({
        "architectures": [architecture],
        "hidden_size": 16,
        "intermediate_size": 24,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": if qwen3 { 8 } else { 4 },
        "vocab_size": 40,
        "max_position_embeddings": context,
        "rms_norm_eps": 1e-6,
        "rope_theta": 10000.0,
        "tie_word_embeddings": !qwen3
    });
    ModelConfig::from_json(Path::new("config.json"), raw).unwrap()
}

/// A tiny random Qwen with trainable parameters.
pub fn tiny_qwen(config: &ModelConfig, dtype: DType, seed: u64) -> (Qwen, candle_nn::VarMap) {
    ParameterStore::random(seed, 0.3, true)
        .build(dtype, &Device::Cpu, |vb| Qwen::new(config, vb))
        .unwrap()
}

/// Copies a fixture folder into a temporary directory to be damaged by a test.
pub fn fixture_copy(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(fixture_dir(name)).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.path().join(path.file_name().unwrap())).unwrap();
    }
    dir
}
