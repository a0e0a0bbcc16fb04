//! Llama through candle-transformers as an inference-only policy: cached generation equals
//! recomputing from scratch, before and after appended tokens.

use crate::common::fixture_dir;
use candle_core::{Device, Tensor};
use rollscope::model::{LanguageModel, LoadOptions, Network, SamplingParams, argmax, save_tensors};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;

const HIDDEN: usize = 32;
const INTERMEDIATE: usize = 48;
const KV: usize = 16;
const VOCAB: usize = 2048;

/// Deterministic weights that are not symmetric: a scrambled sine per entry.
fn weight(shape: &[usize], salt: usize, scale: f32, offset: f32) -> Tensor {
    let count: usize = shape.iter().product();
    let values: Vec<f32> = (0..count)
        .map(|i| offset + scale * ((i * 7919 + salt * 104_729) as f32 * 0.618).sin())
        .collect();
    Tensor::from_vec(values, shape, &Device::Cpu).unwrap()
}

fn tiny_llama_folder(dir: &Path) {
    let config = json!({
        "architectures": ["LlamaForCausalLM"], "hidden_size": HIDDEN, "intermediate_size": INTERMEDIATE,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": VOCAB,
        "max_position_embeddings": 128, "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": false,
        "hidden_act": "silu", "eos_token_id": 2
    });
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    for file in [
        "tokenizer.json",
        "tokenizer_config.json",
        "chat_template.jinja",
    ] {
        std::fs::copy(fixture_dir("tiny-qwen2").join(file), dir.join(file)).unwrap();
    }
    let mut tensors = BTreeMap::new();
    let mut add = |name: String, shape: &[usize], scale: f32, offset: f32| {
        let salt = tensors.len();
        tensors.insert(name, weight(shape, salt, scale, offset));
    };
    add(
        "model.embed_tokens.weight".into(),
        &[VOCAB, HIDDEN],
        1.0,
        0.0,
    );
    add("lm_head.weight".into(), &[VOCAB, HIDDEN], 0.3, 0.0);
    add("model.norm.weight".into(), &[HIDDEN], 0.1, 1.0);
    for layer in 0..2 {
        let name = |suffix: &str| format!("model.layers.{layer}.{suffix}");
        add(name("self_attn.q_proj.weight"), &[HIDDEN, HIDDEN], 0.4, 0.0);
        add(name("self_attn.k_proj.weight"), &[KV, HIDDEN], 0.4, 0.0);
        add(name("self_attn.v_proj.weight"), &[KV, HIDDEN], 0.4, 0.0);
        add(name("self_attn.o_proj.weight"), &[HIDDEN, HIDDEN], 0.2, 0.0);
        add(
            name("mlp.gate_proj.weight"),
            &[INTERMEDIATE, HIDDEN],
            0.3,
            0.0,
        );
        add(
            name("mlp.up_proj.weight"),
            &[INTERMEDIATE, HIDDEN],
            0.3,
            0.0,
        );
        add(
            name("mlp.down_proj.weight"),
            &[HIDDEN, INTERMEDIATE],
            0.2,
            0.0,
        );
        add(name("input_layernorm.weight"), &[HIDDEN], 0.1, 1.0);
        add(name("post_attention_layernorm.weight"), &[HIDDEN], 0.1, 1.0);
    }
    save_tensors(&tensors, &dir.join("model.safetensors")).unwrap();
}

#[test]
fn cached_greedy_decoding_equals_full_recompute_argmax() {
    let dir = tempfile::tempdir().unwrap();
    tiny_llama_folder(dir.path());
    let model = LanguageModel::load(dir.path(), &LoadOptions::default()).unwrap();
    let Network::Llama(llama) = model.network() else {
        panic!("a Llama folder should load as Llama");
    };
    assert!(model.qwen().is_err());
    assert!(model.save(&dir.path().join("copy")).is_err());

    let prompt: Vec<u32> = vec![1, 91, 97, 336, 1956, 207, 65, 297];
    let observation: Vec<u32> = vec![2, 207, 1, 367, 276, 207, 50, 285];
    let mut decoder = model.decoder();
    let id = decoder
        .add_sequence(&prompt, SamplingParams::greedy())
        .unwrap();
    let mut distinct = std::collections::BTreeSet::new();
    for round in 0..2 {
        for _ in 0..8 {
            let so_far = decoder.tokens(id).unwrap().to_vec();
            let expected = argmax(&llama.forward_uncached(&so_far).unwrap()) as u32;
            let token = decoder.step(&[id]).unwrap()[0].token;
            assert_eq!(
                token,
                expected,
                "round {round}, after {} tokens",
                so_far.len()
            );
            distinct.insert(token);
        }
        decoder.append(id, &observation).unwrap();
    }
    assert!(
        distinct.len() > 1,
        "the weights should not make every step the same token"
    );
}
