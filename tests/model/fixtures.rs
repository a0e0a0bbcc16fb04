//! Reference numbers computed by PyTorch/transformers on tiny-qwen2 and tiny-qwen3.

use crate::common::{fixture_dir, floats, ids, load_fixture, messages, reference};
use candle_core::IndexOp;
use rollscope::model::{Padding, SamplingParams, TokenBatch, next_token_log_probs};
use serde_json::Value;

const FIXTURES: [&str; 2] = ["tiny-qwen2", "tiny-qwen3"];

#[test]
fn rendered_text_ids_and_mask_match_exactly() {
    for name in FIXTURES {
        let model = load_fixture(name);
        let reference = reference(name);
        let tools = reference["tools"].as_array().unwrap().clone();
        let from_json = model
            .chat
            .encode_json(reference["conversation"].as_array().unwrap(), &tools)
            .unwrap();
        let from_messages = model
            .chat
            .encode(&messages(&reference["conversation"]), &tools)
            .unwrap();
        for encoded in [from_json, from_messages] {
            assert_eq!(
                encoded.text,
                reference["rendered_text"].as_str().unwrap(),
                "{name}: rendered text"
            );
            assert_eq!(
                encoded.token_ids,
                ids(&reference["input_ids"]),
                "{name}: input_ids"
            );
            let mask: Vec<u8> = ids(&reference["assistant_mask"])
                .iter()
                .map(|&bit| bit as u8)
                .collect();
            assert_eq!(encoded.loss_mask, mask, "{name}: assistant_mask");
        }
    }
}

#[test]
fn token_log_probs_and_logits_rows_match_within_1e4() {
    for name in FIXTURES {
        let model = load_fixture(name);
        let reference = reference(name);
        let input = ids(&reference["input_ids"]);
        let batch = TokenBatch::pad(&[input], Padding::Right, 0, model.device()).unwrap();
        let qwen = model.qwen().unwrap();
        let ours: Vec<f32> = next_token_log_probs(qwen, &batch, 1.0)
            .unwrap()
            .i(0)
            .unwrap()
            .to_vec1()
            .unwrap();
        let expected = floats(&reference["token_logprobs"]);
        assert_eq!(ours.len(), expected.len());
        let worst = ours
            .iter()
            .zip(&expected)
            .map(|(a, b)| (f64::from(*a) - b).abs())
            .fold(0.0, f64::max);
        eprintln!("{name}: token log-probs within {worst:.2e}");
        assert!(worst < 1e-4, "{name}: token log-probs differ by {worst}");
        let logits = qwen.forward(&batch).unwrap();
        for (position, row) in reference["logits_rows"].as_object().unwrap() {
            let position: usize = position.parse().unwrap();
            let ours: Vec<f32> = logits.i((0, position)).unwrap().to_vec1().unwrap();
            let expected = floats(row);
            assert_eq!(ours.len(), expected.len());
            let worst = ours
                .iter()
                .zip(&expected)
                .map(|(a, b)| (f64::from(*a) - b).abs())
                .fold(0.0, f64::max);
            eprintln!("{name}: logits row {position} within {worst:.2e}");
            assert!(
                worst < 1e-4,
                "{name}: logits row {position} differs by {worst}"
            );
        }
    }
}

fn greedy_steps(model: &rollscope::model::LanguageModel, prompt: &[u32], count: usize) -> Vec<u32> {
    let mut decoder = model.decoder();
    let id = decoder
        .add_sequence(prompt, SamplingParams::greedy())
        .unwrap();
    (0..count)
        .map(|_| decoder.step(&[id]).unwrap()[0].token)
        .collect()
}

#[test]
fn greedy_continuation_matches_token_for_token() {
    for name in FIXTURES {
        let model = load_fixture(name);
        let reference = reference(name);
        let expected = ids(&reference["greedy_continuation"]);
        let ours = greedy_steps(
            &model,
            &ids(&reference["greedy_prompt_ids"]),
            expected.len(),
        );
        assert_eq!(ours, expected, "{name}");
    }
}

/// The prompt up to the end of the policy's first turn, then the observation appended to a
/// cache that already holds that prefix, then greedy decoding.
#[test]
fn continuation_after_an_observation_appended_to_the_cache_matches() {
    for name in FIXTURES {
        let model = load_fixture(name);
        let reference = reference(name);
        let full = ids(&reference["after_observation_prompt_ids"]);
        let greedy_prompt = ids(&reference["greedy_prompt_ids"]);
        let end_of_turn = model.chat.end_of_turn_id().unwrap();
        let turn_end = greedy_prompt.len()
            + full[greedy_prompt.len()..]
                .iter()
                .position(|&id| id == end_of_turn)
                .unwrap()
            + 1;
        let mut decoder = model.decoder();
        let id = decoder
            .add_sequence(&full[..turn_end], SamplingParams::greedy())
            .unwrap();
        decoder.prefill(&[id]).unwrap();
        decoder.append(id, &full[turn_end..]).unwrap();
        let expected = ids(&reference["after_observation_continuation"]);
        let ours: Vec<u32> = (0..expected.len())
            .map(|_| decoder.step(&[id]).unwrap()[0].token)
            .collect();
        assert_eq!(ours, expected, "{name}");

        let conversation = messages(&reference["conversation"]);
        let tools = reference["tools"].as_array().unwrap();
        let observation = model
            .chat
            .observation_ids(&conversation[..3], &conversation[3..4], tools)
            .unwrap();
        assert_eq!(
            observation,
            full[turn_end..].to_vec(),
            "{name}: observation tokens"
        );
    }
}

#[test]
fn the_loader_reads_the_transformers_4_layout_too() {
    let dir = crate::common::fixture_copy("tiny-qwen3");
    let config_path = dir.path().join("config.json");
    let mut config: Value =
        serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    // Into the transformers-4 layout, whichever layout the fixture is in: `rope_theta` at the
    // top level, the chat template inside `tokenizer_config.json`.
    let object = config.as_object_mut().unwrap();
    if let Some(parameters) = object.remove("rope_parameters") {
        object.insert("rope_theta".into(), parameters["rope_theta"].clone());
        object.insert("rope_scaling".into(), Value::Null);
    }
    std::fs::write(&config_path, config.to_string()).unwrap();
    let template_path = dir.path().join("chat_template.jinja");
    let separate_template = template_path.is_file();
    if separate_template {
        let template = std::fs::read_to_string(&template_path).unwrap();
        std::fs::remove_file(&template_path).unwrap();
        let tokenizer_config_path = dir.path().join("tokenizer_config.json");
        let mut tokenizer_config: Value =
            serde_json::from_str(&std::fs::read_to_string(&tokenizer_config_path).unwrap())
                .unwrap();
        tokenizer_config["chat_template"] = Value::String(template);
        std::fs::write(&tokenizer_config_path, tokenizer_config.to_string()).unwrap();
    }

    let model = rollscope::model::LanguageModel::load(dir.path(), &Default::default()).unwrap();
    let original = load_fixture("tiny-qwen3");
    assert_eq!(model.config.rope_theta, original.config.rope_theta);
    assert_eq!(
        model.chat.template.source_name(),
        "tokenizer_config.json: chat_template"
    );
    let reference = reference("tiny-qwen3");
    let expected = ids(&reference["greedy_continuation"]);
    assert_eq!(
        greedy_steps(
            &model,
            &ids(&reference["greedy_prompt_ids"]),
            expected.len()
        ),
        expected
    );
    assert_eq!(
        fixture_dir("tiny-qwen3")
            .join("chat_template.jinja")
            .is_file(),
        separate_template,
        "the fixture itself is untouched"
    );
}

/// The GRPO case's behaviour log-probs: prompt + completion, right-padded with `pad_id`
/// and masked, as the trainer will feed them.
#[test]
fn grpo_old_log_probs_match_through_a_right_padded_batch() {
    let model = load_fixture("tiny-qwen2");
    let grpo = &reference("tiny-qwen2")["grpo"];
    let prompt = ids(&grpo["prompt_ids"]);
    let samples = grpo["samples"].as_array().unwrap();
    let rows: Vec<Vec<u32>> = samples
        .iter()
        .map(|sample| [prompt.clone(), ids(&sample["completion_ids"])].concat())
        .collect();
    let pad = grpo["pad_id"].as_u64().unwrap() as u32;
    let batch = TokenBatch::pad(&rows, Padding::Right, pad, model.device()).unwrap();
    let logprobs = next_token_log_probs(model.qwen().unwrap(), &batch, 1.0).unwrap();
    for (index, expected) in grpo["old_logprobs"].as_array().unwrap().iter().enumerate() {
        let expected = floats(expected);
        let start = prompt.len() - 1;
        let ours: Vec<f32> = logprobs
            .i((index, start..start + expected.len()))
            .unwrap()
            .to_vec1()
            .unwrap();
        let worst = ours
            .iter()
            .zip(&expected)
            .map(|(a, b)| (f64::from(*a) - b).abs())
            .fold(0.0, f64::max);
        assert!(
            worst < 1e-4,
            "sample {index}: old log-probs differ by {worst}"
        );
    }
}
