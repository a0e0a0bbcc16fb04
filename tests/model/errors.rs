//! Bad input gives an error that names the file and the field or tensor, never a panic.

use crate::common::fixture_copy;
use candle_core::{DType, Device, Tensor};
use rollscope::model::{LanguageModel, LoadOptions, ModelError, SamplingParams, save_tensors};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

fn load_error(dir: &Path) -> ModelError {
    match LanguageModel::load(dir, &LoadOptions::default()) {
        Ok(_) => panic!("{} loaded although it is broken", dir.display()),
        Err(error) => error,
    }
}

fn edit_json(path: &Path, edit: impl FnOnce(&mut Value)) {
    let mut value: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    edit(&mut value);
    std::fs::write(path, value.to_string()).unwrap();
}

fn rewrite_weights(dir: &Path, edit: impl FnOnce(&mut BTreeMap<String, Tensor>)) {
    let path = dir.join("model.safetensors");
    let mut tensors: BTreeMap<String, Tensor> = candle_core::safetensors::load(&path, &Device::Cpu)
        .unwrap()
        .into_iter()
        .collect();
    edit(&mut tensors);
    save_tensors(&tensors, &path).unwrap();
}

#[test]
fn a_missing_file_is_named() {
    for file in [
        "config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "model.safetensors",
        "chat_template.jinja",
    ] {
        let dir = fixture_copy("tiny-qwen2");
        std::fs::remove_file(dir.path().join(file)).unwrap();
        let error = load_error(dir.path());
        assert!(
            matches!(error, ModelError::MissingFile { .. }),
            "{file}: {error}"
        );
        assert!(error.to_string().contains(file), "{file}: {error}");
    }
}

#[test]
fn an_unsupported_architecture_names_the_field_and_the_choices() {
    let dir = fixture_copy("tiny-qwen2");
    edit_json(&dir.path().join("config.json"), |config| {
        config["architectures"] = serde_json::json!(["MistralForCausalLM"]);
    });
    let message = load_error(dir.path()).to_string();
    for part in [
        "config.json",
        "`architectures`",
        "MistralForCausalLM",
        "Qwen2ForCausalLM",
    ] {
        assert!(message.contains(part), "{message}");
    }
}

#[test]
fn a_bad_config_value_names_the_field() {
    let dir = fixture_copy("tiny-qwen3");
    edit_json(&dir.path().join("config.json"), |config| {
        config["hidden_size"] = Value::String("wide".into())
    });
    let message = load_error(dir.path()).to_string();
    assert!(
        message.contains("config.json") && message.contains("`hidden_size`"),
        "{message}"
    );
    edit_json(&dir.path().join("config.json"), |config| {
        config["hidden_size"] = 64.into();
        config["rope_parameters"]["rope_type"] = "yarn".into();
    });
    let message = load_error(dir.path()).to_string();
    assert!(
        message.contains("rope_parameters") && message.contains("yarn"),
        "{message}"
    );
}

#[test]
fn a_tensor_of_the_wrong_shape_or_a_missing_tensor_is_named() {
    let dir = fixture_copy("tiny-qwen2");
    let name = "model.layers.1.mlp.up_proj.weight";
    let mut right = Vec::new();
    rewrite_weights(dir.path(), |tensors| {
        right = tensors[name].dims().to_vec();
        let wrong = (right[0] + 1, right[1]);
        tensors.insert(
            name.into(),
            Tensor::zeros(wrong, DType::F32, &Device::Cpu).unwrap(),
        );
    });
    let wrong = vec![right[0] + 1, right[1]];
    let error = load_error(dir.path());
    assert!(
        matches!(&error, ModelError::TensorShape { found, expected, .. } if found == &wrong && expected == &right),
        "{error}"
    );
    let message = error.to_string();
    assert!(
        message.contains("model.safetensors") && message.contains(name),
        "{message}"
    );

    let dir = fixture_copy("tiny-qwen3");
    let name = "model.layers.0.self_attn.k_norm.weight";
    rewrite_weights(dir.path(), |tensors| {
        tensors.remove(name);
    });
    let message = load_error(dir.path()).to_string();
    assert!(
        message.contains("model.safetensors") && message.contains(name),
        "{message}"
    );
}

#[test]
fn a_tokenizer_without_the_chat_tokens_is_refused() {
    let dir = fixture_copy("tiny-qwen2");
    let path = dir.path().join("tokenizer.json");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("<|im_start|>", "<|start|>");
    std::fs::write(&path, text).unwrap();
    let error = load_error(dir.path());
    assert!(
        matches!(&error, ModelError::MissingToken { token, .. } if token == "<|im_start|>"),
        "{error}"
    );
    let message = error.to_string();
    assert!(
        message.contains("tokenizer.json") && message.contains("chat_template.jinja"),
        "{message}"
    );
}

#[test]
fn an_unreadable_file_names_the_file_and_line() {
    let dir = fixture_copy("tiny-qwen2");
    std::fs::write(
        dir.path().join("tokenizer_config.json"),
        "{\n  \"eos_token\": \n",
    )
    .unwrap();
    let message = load_error(dir.path()).to_string();
    assert!(
        message.contains("tokenizer_config.json") && message.contains("line"),
        "{message}"
    );
    let dir = fixture_copy("tiny-qwen2");
    std::fs::write(dir.path().join("model.safetensors"), b"not safetensors").unwrap();
    let message = load_error(dir.path()).to_string();
    assert!(message.contains("model.safetensors"), "{message}");
    let dir = fixture_copy("tiny-qwen2");
    std::fs::write(
        dir.path().join("chat_template.jinja"),
        "{% for m in messages %}{{ m.content }",
    )
    .unwrap();
    let message = load_error(dir.path()).to_string();
    assert!(message.contains("chat_template.jinja"), "{message}");
}

#[test]
fn a_prompt_longer_than_the_context_is_refused() {
    let dir = fixture_copy("tiny-qwen2");
    edit_json(&dir.path().join("config.json"), |config| {
        config["max_position_embeddings"] = 32.into()
    });
    let model = LanguageModel::load(dir.path(), &LoadOptions::default()).unwrap();
    let mut decoder = model.decoder();
    let long: Vec<u32> = (10..50).collect();
    let error = decoder
        .add_sequence(&long, SamplingParams::greedy())
        .unwrap_err();
    assert!(
        matches!(
            error,
            ModelError::ContextFull {
                tokens: 40,
                limit: 32
            }
        ),
        "{error}"
    );
    let id = decoder
        .add_sequence(&long[..30], SamplingParams::greedy())
        .unwrap();
    assert!(matches!(
        decoder.append(id, &long[..5]),
        Err(ModelError::ContextFull { .. })
    ));
    let batch = rollscope::model::TokenBatch::pad(
        &[long],
        rollscope::model::Padding::Right,
        0,
        model.device(),
    )
    .unwrap();
    assert!(matches!(
        model.qwen().unwrap().forward(&batch),
        Err(ModelError::ContextFull { .. })
    ));
}
