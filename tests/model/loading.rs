//! Loading and saving: sharded checkpoints, stored and compute dtypes, saving under the same
//! names, parameters shared with decoders but not with frozen copies.

use crate::common::{fixture_copy, floats, ids, load_fixture, reference};
use candle_core::{DType, Device, IndexOp, Tensor};
use rollscope::model::{
    Decoder, LanguageModel, LoadOptions, ModelError, Padding, SamplingParams, TokenBatch,
    next_token_log_probs, save_tensors,
};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;

fn tensors_of(path: &Path) -> BTreeMap<String, Tensor> {
    candle_core::safetensors::load(path, &Device::Cpu)
        .unwrap()
        .into_iter()
        .collect()
}

fn reference_gap(model: &LanguageModel) -> f64 {
    let reference = reference("tiny-qwen2");
    let batch = TokenBatch::pad(
        &[ids(&reference["input_ids"])],
        Padding::Right,
        0,
        model.device(),
    )
    .unwrap();
    let ours: Vec<f32> = next_token_log_probs(model.qwen().unwrap(), &batch, 1.0)
        .unwrap()
        .i(0)
        .unwrap()
        .to_dtype(DType::F32)
        .unwrap()
        .to_vec1()
        .unwrap();
    ours.iter()
        .zip(floats(&reference["token_logprobs"]))
        .map(|(a, b)| (f64::from(*a) - b).abs())
        .fold(0.0, f64::max)
}

#[test]
fn a_sharded_checkpoint_loads_like_the_single_file() {
    let dir = fixture_copy("tiny-qwen2");
    let tensors = tensors_of(&dir.path().join("model.safetensors"));
    std::fs::remove_file(dir.path().join("model.safetensors")).unwrap();
    let mut shards = [BTreeMap::new(), BTreeMap::new()];
    let mut weight_map = serde_json::Map::new();
    for (index, (name, tensor)) in tensors.into_iter().enumerate() {
        let file = format!("model-0000{}-of-00002.safetensors", index % 2 + 1);
        weight_map.insert(name.clone(), json!(file));
        shards[index % 2].insert(name, tensor);
    }
    for (index, shard) in shards.iter().enumerate() {
        save_tensors(
            shard,
            &dir.path()
                .join(format!("model-0000{}-of-00002.safetensors", index + 1)),
        )
        .unwrap();
    }
    let index = json!({"metadata": {}, "weight_map": weight_map});
    std::fs::write(
        dir.path().join("model.safetensors.index.json"),
        index.to_string(),
    )
    .unwrap();
    let model = LanguageModel::load(dir.path(), &LoadOptions::default()).unwrap();
    assert!(reference_gap(&model) < 1e-4);

    std::fs::remove_file(dir.path().join("model-00002-of-00002.safetensors")).unwrap();
    let message = LanguageModel::load(dir.path(), &LoadOptions::default())
        .err()
        .unwrap()
        .to_string();
    assert!(
        message.contains("model-00002-of-00002.safetensors"),
        "{message}"
    );
}

#[test]
fn half_precision_weights_load_into_the_chosen_compute_dtype() {
    let dir = fixture_copy("tiny-qwen2");
    let path = dir.path().join("model.safetensors");
    let halved: BTreeMap<String, Tensor> = tensors_of(&path)
        .into_iter()
        .map(|(name, tensor)| (name, tensor.to_dtype(DType::BF16).unwrap()))
        .collect();
    save_tensors(&halved, &path).unwrap();
    let model = LanguageModel::load(dir.path(), &LoadOptions::default()).unwrap();
    assert_eq!(model.dtype(), DType::F32);
    let gap = reference_gap(&model);
    assert!(
        gap > 0.0 && gap < 0.05,
        "bf16-rounded weights computed in f32: gap {gap}"
    );
    let f16 = LoadOptions {
        device: Device::Cpu,
        dtype: Some(DType::F16),
    };
    let model = LanguageModel::load(dir.path(), &f16).unwrap();
    assert_eq!(model.dtype(), DType::F16);
    assert!(reference_gap(&model) < 0.1);
    let bf16 = LoadOptions {
        device: Device::Cpu,
        dtype: Some(DType::BF16),
    };
    let error = LanguageModel::load(dir.path(), &bf16).err().unwrap();
    assert!(
        matches!(error, ModelError::Request(_)) && error.to_string().contains("--dtype f32"),
        "{error}"
    );
}

#[test]
fn saving_keeps_the_names_and_the_numbers() {
    for name in ["tiny-qwen2", "tiny-qwen3"] {
        let model = load_fixture(name);
        let out = tempfile::tempdir().unwrap();
        model.save(out.path()).unwrap();
        let original = tensors_of(&crate::common::fixture_dir(name).join("model.safetensors"));
        let saved = tensors_of(&out.path().join("model.safetensors"));
        assert_eq!(
            original.keys().collect::<Vec<_>>(),
            saved.keys().collect::<Vec<_>>(),
            "{name}"
        );
        // The CPU saves what it computes in (f32); a bf16 or f16 original compares after a
        // cast, which is exact.
        let wide = |tensor: &Tensor| tensor.to_dtype(candle_core::DType::F32).unwrap();
        for (key, tensor) in &original {
            let difference = (wide(tensor) - wide(&saved[key]))
                .unwrap()
                .abs()
                .unwrap()
                .max_all()
                .unwrap()
                .to_scalar::<f32>()
                .unwrap();
            assert_eq!(difference, 0.0, "{name}: {key}");
        }
        let reloaded = LanguageModel::load(out.path(), &LoadOptions::default()).unwrap();
        assert_eq!(reloaded.config.architecture, model.config.architecture);
        assert_eq!(
            reloaded.chat.template.source(),
            model.chat.template.source()
        );
    }
}

#[test]
fn decoders_see_parameter_updates_and_frozen_copies_do_not() {
    let model = load_fixture("tiny-qwen2");
    let frozen = model.frozen_copy().unwrap();
    let prompt = ids(&reference("tiny-qwen2")["greedy_prompt_ids"]);
    let first_token = |decoder: &mut Decoder| {
        let id = decoder
            .add_sequence(&prompt, SamplingParams::greedy())
            .unwrap();
        decoder.step(&[id]).unwrap()[0]
    };
    let mut decoder = model.decoder();
    let before = first_token(&mut decoder);
    let norm = model.parameters().data().lock().unwrap()["model.norm.weight"].clone();
    norm.set(&(norm.as_tensor() * 3.0).unwrap()).unwrap();
    let after = first_token(&mut decoder);
    assert_ne!(
        before.logprob, after.logprob,
        "the decoder must see the updated weights"
    );
    let mut frozen_decoder = Decoder::new(
        &rollscope::model::Network::Qwen(frozen),
        model.config.max_position_embeddings,
    );
    let from_frozen = first_token(&mut frozen_decoder);
    assert_eq!(from_frozen, before);
}

#[test]
fn models_and_decoders_can_move_to_other_threads() {
    fn shareable<T: Send + Sync>() {}
    fn movable<T: Send>() {}
    shareable::<LanguageModel>();
    movable::<Decoder>();
}
