//! LoRA: only adapters train, B = 0 is the base exactly, merging equals the adapter forward
//! (training and decoding paths), and the saved files follow PEFT's conventions.

use crate::common::{fixture_dir, fixture_model};
use candle_core::{DType, Device, Tensor, Var};
use rollscope::model::{
    LanguageModel, LoadOptions, Padding, SamplingParams, TokenBatch, next_token_log_probs,
};
use rollscope::train::{
    ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE, LORA_TARGETS, LoraAdapters, LoraConfig, SftExample,
    Trainer, TrainerConfig,
};
use serde_json::Value;
use std::collections::BTreeSet;

fn all_targets() -> LoraConfig {
    LoraConfig {
        rank: 4,
        alpha: 16.0,
        target_modules: LORA_TARGETS.iter().map(|t| t.to_string()).collect(),
        use_rslora: false,
    }
}

fn lora_trainer(config: LoraConfig) -> Trainer {
    let trainer_config = TrainerConfig {
        learning_rate: 1e-2,
        lora: Some(config),
        seed: 1,
        ..TrainerConfig::default()
    };
    Trainer::new(fixture_model(), trainer_config).unwrap()
}

fn batch() -> TokenBatch {
    let rows = vec![
        (3..40).collect::<Vec<u32>>(),
        (100..118).collect(),
        (900..930).rev().collect(),
    ];
    TokenBatch::pad(&rows, Padding::Right, 0, &Device::Cpu).unwrap()
}

fn logits(model: &LanguageModel) -> Vec<f32> {
    model
        .qwen()
        .unwrap()
        .forward(&batch())
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1()
        .unwrap()
}

/// Gives every B a fixed non-zero pattern, so the adapters change the model.
fn randomise_b(trainer: &Trainer) {
    for (index, (name, var)) in trainer.trainable_parameters().into_iter().enumerate() {
        if name.contains("lora_B") {
            let values: Vec<f32> = (0..var.elem_count())
                .map(|k| 0.05 * ((k * 7 + index * 13) as f32 * 0.37).sin())
                .collect();
            var.set(&Tensor::from_vec(values, var.shape(), &Device::Cpu).unwrap())
                .unwrap();
        }
    }
}

fn max_difference(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

#[test]
fn only_adapters_get_gradients_and_change() {
    let mut trainer = lora_trainer(all_targets());
    let base_before: Vec<(String, Vec<f32>)> = trainer
        .model()
        .named_parameters()
        .into_iter()
        .map(|(name, var)| (name, var.flatten_all().unwrap().to_vec1().unwrap()))
        .collect();
    let loss = next_token_log_probs(trainer.policy().unwrap(), &batch(), 1.0)
        .unwrap()
        .sum_all()
        .unwrap();
    let grads = loss.backward().unwrap();
    for (name, var) in trainer.model().named_parameters() {
        assert!(
            grads.get(var.as_tensor()).is_none(),
            "the frozen {name} got a gradient"
        );
    }
    let adapters = trainer.trainable_parameters();
    let layers = trainer.model().config.num_hidden_layers;
    assert_eq!(adapters.len(), layers * LORA_TARGETS.len() * 2);
    for (name, var) in &adapters {
        assert!(
            grads.get(var.as_tensor()).is_some(),
            "{name} got no gradient"
        );
    }

    let example = SftExample::new((3..40).collect(), vec![1; 37]).unwrap();
    let a_before: Vec<f32> = adapters[0].1.flatten_all().unwrap().to_vec1().unwrap();
    for _ in 0..2 {
        trainer.sft_step(&[&example], 0).unwrap();
    }
    for ((name, before), (_, var)) in base_before.iter().zip(trainer.model().named_parameters()) {
        let after: Vec<f32> = var.flatten_all().unwrap().to_vec1().unwrap();
        assert_eq!(before, &after, "{name} changed");
    }
    let a_after: Vec<f32> = adapters[0].1.flatten_all().unwrap().to_vec1().unwrap();
    assert_ne!(a_before, a_after, "{} did not change", adapters[0].0);
}

#[test]
fn zero_b_gives_exactly_the_base_logits() {
    let base = logits(&fixture_model());
    let trainer = lora_trainer(all_targets());
    assert_eq!(logits(trainer.model()), base);
    let reference = trainer.reference_policy().unwrap();
    randomise_b(&trainer);
    let adapted = logits(trainer.model());
    assert!(
        max_difference(&adapted, &base) > 1e-3,
        "the adapters change nothing"
    );
    let reference_logits: Vec<f32> = reference
        .forward(&batch())
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1()
        .unwrap();
    assert_eq!(
        reference_logits, base,
        "the reference is the base without adapters"
    );
}

fn greedy(model: &LanguageModel, prompt: &[u32], count: usize) -> Vec<(u32, f32)> {
    let mut decoder = model.decoder();
    let id = decoder
        .add_sequence(prompt, SamplingParams::greedy())
        .unwrap();
    (0..count)
        .map(|_| {
            let token = decoder.step(&[id]).unwrap()[0];
            (token.token, token.logprob)
        })
        .collect()
}

#[test]
fn merged_weights_equal_the_adapter_forward() {
    let trainer = lora_trainer(LoraConfig {
        use_rslora: true,
        ..all_targets()
    });
    randomise_b(&trainer);
    let dir = tempfile::tempdir().unwrap();
    trainer.save_policy(dir.path()).unwrap();
    let merged = LanguageModel::load(dir.path(), &LoadOptions::default()).unwrap();
    let difference = max_difference(&logits(trainer.model()), &logits(&merged));
    assert!(
        difference < 1e-5,
        "training forward differs by {difference}"
    );

    let prompt: Vec<u32> = (40..70).collect();
    let adapted = greedy(trainer.model(), &prompt, 8);
    let from_merged = greedy(&merged, &prompt, 8);
    for ((token, logprob), (merged_token, merged_logprob)) in adapted.iter().zip(&from_merged) {
        assert_eq!(token, merged_token);
        assert!((logprob - merged_logprob).abs() < 1e-4);
    }
    assert_ne!(
        adapted,
        greedy(&fixture_model(), &prompt, 8),
        "decoding uses the adapters"
    );
}

#[test]
fn adapters_are_saved_as_peft_names_them_and_load_back() {
    let config = LoraConfig {
        rank: 2,
        alpha: 4.0,
        target_modules: vec!["q_proj".into(), "up_proj".into()],
        use_rslora: false,
    };
    let trainer = lora_trainer(config.clone());
    randomise_b(&trainer);
    let adapters = trainer.lora().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let base = fixture_dir().display().to_string();
    adapters.save(dir.path(), &base).unwrap();

    let saved = candle_core::safetensors::load(dir.path().join(ADAPTER_WEIGHTS_FILE), &Device::Cpu)
        .unwrap();
    let model = trainer.model();
    let (hidden, inner) = (model.config.hidden_size, model.config.intermediate_size);
    let heads = model.config.num_attention_heads * model.config.head_dim;
    let mut expected = BTreeSet::new();
    for layer in 0..model.config.num_hidden_layers {
        let q = format!("base_model.model.model.layers.{layer}.self_attn.q_proj");
        let up = format!("base_model.model.model.layers.{layer}.mlp.up_proj");
        for (module, out_dim) in [(q, heads), (up, inner)] {
            let a = format!("{module}.lora_A.weight");
            let b = format!("{module}.lora_B.weight");
            assert_eq!(saved[&a].dims(), &[2, hidden], "{a}");
            assert_eq!(saved[&b].dims(), &[out_dim, 2], "{b}");
            expected.insert(a);
            expected.insert(b);
        }
    }
    assert_eq!(saved.keys().cloned().collect::<BTreeSet<_>>(), expected);
    assert_eq!(saved.values().next().unwrap().dtype(), DType::F32);

    let text = std::fs::read_to_string(dir.path().join(ADAPTER_CONFIG_FILE)).unwrap();
    let peft: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(peft["peft_type"], "LORA");
    assert_eq!(peft["task_type"], "CAUSAL_LM");
    assert_eq!(peft["r"], 2);
    assert_eq!(peft["lora_alpha"], 4);
    assert_eq!(peft["lora_dropout"], 0.0);
    assert_eq!(peft["bias"], "none");
    assert_eq!(peft["base_model_name_or_path"], base.as_str());
    assert_eq!(
        peft["target_modules"],
        serde_json::json!(["q_proj", "up_proj"])
    );

    let loaded = LoraAdapters::load(&fixture_model(), dir.path()).unwrap();
    assert_eq!(loaded.config(), &config);
    for ((name, var), (loaded_name, loaded_var)) in adapters
        .named_parameters()
        .iter()
        .zip(loaded.named_parameters())
    {
        assert_eq!(name, &loaded_name);
        let values = |v: &Var| v.flatten_all().unwrap().to_vec1::<f32>().unwrap();
        assert_eq!(values(var), values(&loaded_var), "{name}");
    }
}

#[test]
fn bad_settings_are_refused_with_the_field_named() {
    let bad = LoraConfig {
        target_modules: vec!["lm_head".into()],
        ..all_targets()
    };
    let error = Trainer::new(
        fixture_model(),
        TrainerConfig {
            lora: Some(bad),
            ..TrainerConfig::default()
        },
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        error.contains("lora.target_modules") && error.contains("lm_head"),
        "{error}"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(ADAPTER_CONFIG_FILE),
        r#"{"peft_type": "LORA", "r": 4, "lora_alpha": 8, "target_modules": ["q_proj"], "use_dora": true}"#,
    )
    .unwrap();
    let error = LoraAdapters::load(&fixture_model(), dir.path())
        .err()
        .unwrap()
        .to_string();
    assert!(
        error.contains("use_dora") && error.contains(ADAPTER_CONFIG_FILE),
        "{error}"
    );
}
