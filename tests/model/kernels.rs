//! The fused kernels change nothing but speed: losses and the gradient of every parameter
//! equal the plain candle path (f32 to 1e-5 relative, f64 to 1e-10), on both instruction sets,
//! with each kernel switched off in turn; fused decoding generates the reference tokens.

use crate::common::{ids, load_fixture, reference, tiny_qwen};
use candle_core::{DType, Device, Tensor, Var};
use candle_nn::VarMap;
use rollscope::model::{
    Decoder, Isa, Kernels, ModelConfig, Network, Padding, Qwen, SamplingParams, SharedRows,
    TokenBatch, next_token_stats,
};
use serde_json::json;
use std::path::Path;

/// A small config wide enough for the kernels' vector loops and tiles: Qwen2 (biases, tied)
/// or Qwen3 (q/k norms, untied).
fn small_config(architecture: &str) -> ModelConfig {
    let qwen3 = architecture == "Qwen3ForCausalLM";
    let raw = json!({
        "architectures": [architecture],
        "hidden_size": 64,
        "intermediate_size": 176,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": if qwen3 { 32 } else { 16 },
        "vocab_size": 300,
        "max_position_embeddings": 64,
        "rms_norm_eps": 1e-6,
        "rope_theta": 10000.0,
        "tie_word_embeddings": !qwen3
    });
    ModelConfig::from_json(Path::new("config.json"), raw).unwrap()
}

fn sequences() -> Vec<Vec<u32>> {
    let lengths = [23, 9, 17];
    lengths
        .iter()
        .enumerate()
        .map(|(row, &len)| {
            (0..len)
                .map(|i| ((i * 37 + row * 101 + 5) % 299) as u32 + 1)
                .collect()
        })
        .collect()
}

/// Tokens every sequence of `shared_sequences` starts with.
const SHARED: usize = 20;

/// `sequences()` behind one prefix of `SHARED` tokens (a system prompt's shape).
fn shared_sequences() -> Vec<Vec<u32>> {
    let prefix: Vec<u32> = (0..SHARED)
        .map(|i| ((i * 53 + 11) % 299) as u32 + 1)
        .collect();
    sequences()
        .into_iter()
        .map(|own| prefix.iter().copied().chain(own).collect())
        .collect()
}

/// 1 where both the predicting token and its target are real tokens.
fn target_mask(batch: &TokenBatch, dtype: DType) -> Tensor {
    let len = batch.seq_len();
    let mask: Vec<f64> = batch
        .mask
        .chunks(len)
        .flat_map(|row| row.windows(2).map(|pair| f64::from(pair[0] * pair[1])))
        .collect();
    Tensor::from_vec(mask, (batch.batch_size(), len - 1), &Device::Cpu)
        .unwrap()
        .to_dtype(dtype)
        .unwrap()
}

/// Masked log-probs weighted by position plus a little entropy, at temperature 1.3.
fn loss(model: &Qwen, batch: &TokenBatch) -> Tensor {
    let dtype = model.dtype();
    let mask = target_mask(batch, dtype);
    let (rows, columns) = mask.dims2().unwrap();
    let ramp = Tensor::arange(1.0f64, (rows * columns + 1) as f64, &Device::Cpu)
        .unwrap()
        .reshape((rows, columns))
        .unwrap()
        .to_dtype(dtype)
        .unwrap();
    let weights = (mask * (ramp * 0.01).unwrap()).unwrap();
    let stats = next_token_stats(model, batch, 1.3).unwrap();
    let log_probs = (stats.log_probs * &weights).unwrap().sum_all().unwrap();
    let entropy = (stats.entropy * &weights).unwrap().sum_all().unwrap();
    (log_probs + (entropy * 0.1).unwrap()).unwrap()
}

fn vars(parameters: &VarMap) -> Vec<(String, Var)> {
    let mut vars: Vec<(String, Var)> = parameters
        .data()
        .lock()
        .unwrap()
        .iter()
        .map(|(name, var)| (name.clone(), var.clone()))
        .collect();
    vars.sort_by(|a, b| a.0.cmp(&b.0));
    vars
}

/// `‖a − b‖ / ‖b‖` in f64.
fn relative_difference(a: &Tensor, b: &Tensor) -> f64 {
    let norm = |t: &Tensor| {
        t.to_dtype(DType::F64)
            .unwrap()
            .sqr()
            .unwrap()
            .sum_all()
            .unwrap()
            .to_scalar::<f64>()
            .unwrap()
            .sqrt()
    };
    norm(&(a - b).unwrap()) / norm(b).max(1e-30)
}

/// Loss and every gradient of `kernels` against the plain path on one batch.
fn assert_same_gradients(
    model: &Qwen,
    parameters: &VarMap,
    batch: &TokenBatch,
    kernels: Kernels,
    label: &str,
) {
    let tolerance = if model.dtype() == DType::F64 {
        1e-10
    } else {
        1e-5
    };
    let plain = model.with_kernels(Kernels::reference());
    let fused = model.with_kernels(kernels);
    let (plain_loss, fused_loss) = (loss(&plain, batch), loss(&fused, batch));
    let value = |t: &Tensor| t.to_dtype(DType::F64).unwrap().to_scalar::<f64>().unwrap();
    let (want, got) = (value(&plain_loss), value(&fused_loss));
    assert!(
        (got - want).abs() <= tolerance * want.abs(),
        "{label}: loss {got} against {want}"
    );
    let plain_grads = plain_loss.backward().unwrap();
    let fused_grads = fused_loss.backward().unwrap();
    let all = vars(parameters);
    assert!(all.len() >= 10, "{label}: only {} parameters", all.len());
    let mut worst = 0f64;
    for (name, var) in all {
        let want = plain_grads
            .get(&var)
            .unwrap_or_else(|| panic!("{label}: {name} has no plain gradient"));
        let got = fused_grads
            .get(&var)
            .unwrap_or_else(|| panic!("{label}: {name} has no fused gradient"));
        let difference = relative_difference(got, want);
        assert!(
            difference <= tolerance,
            "{label}: {name} gradient off by {difference:e} relative"
        );
        worst = worst.max(difference);
    }
    println!(
        "{label}: loss off by {:.1e}, worst gradient off by {worst:.1e} (relative)",
        (got - want).abs() / want.abs()
    );
}

#[test]
fn fused_kernels_give_the_plain_losses_and_gradients() {
    for architecture in ["Qwen2ForCausalLM", "Qwen3ForCausalLM"] {
        let config = small_config(architecture);
        for dtype in [DType::F32, DType::F64] {
            let (model, parameters) = tiny_qwen(&config, dtype, 3);
            for padding in [Padding::Left, Padding::Right] {
                let batch = TokenBatch::pad(&sequences(), padding, 0, &Device::Cpu).unwrap();
                for isa in Isa::available() {
                    let kernels = Kernels {
                        isa,
                        ..Kernels::fused()
                    };
                    let label = format!("{architecture} {dtype:?} {padding:?} {isa:?}");
                    assert_same_gradients(&model, &parameters, &batch, kernels, &label);
                }
            }
        }
    }
}

/// The shared layouts (a system prefix, a trie with a copy and a sequence that is another's
/// prefix, padding alone) against the whole grid; the trie in f64 only, where the order in
/// which a copy's gradients are summed stays below the tolerance (in f32 it moves a bias
/// gradient by 1.4e-5 relative).
#[test]
fn shared_prefixes_computed_once_give_the_plain_losses_and_gradients() {
    let unique_rows = |rows: &[Vec<u32>], padding: Padding| {
        let batch = TokenBatch::pad(rows, padding, 0, &Device::Cpu).unwrap();
        let unique = batch.shared_rows().map(SharedRows::unique_rows);
        (batch, unique)
    };
    let rows = shared_sequences();
    let real: usize = rows.iter().map(Vec::len).sum();
    let (left, unique) = unique_rows(&rows, Padding::Left);
    assert_eq!(
        unique,
        Some(real + 1),
        "left padding: one row for all padding, no token shared"
    );
    assert_eq!(
        unique_rows(&rows[..1], Padding::Right).1,
        None,
        "one sequence shares nothing"
    );
    let (prefix, unique) = unique_rows(&rows, Padding::Right);
    assert_eq!(unique, Some(real - (rows.len() - 1) * SHARED + 1));
    let trie = vec![
        rows[0].clone(),
        rows[0].clone(),
        rows[0][..SHARED + 5].to_vec(),
        rows[1].clone(),
    ];
    let (trie, unique) = unique_rows(&trie, Padding::Right);
    assert_eq!(
        unique,
        Some(rows[0].len() + rows[1].len() - SHARED + 1),
        "a copy, a sequence that is another's prefix and one sharing the system prefix"
    );
    for architecture in ["Qwen2ForCausalLM", "Qwen3ForCausalLM"] {
        let config = small_config(architecture);
        for dtype in [DType::F32, DType::F64] {
            let (model, parameters) = tiny_qwen(&config, dtype, 5);
            for isa in Isa::available() {
                let kernels = Kernels {
                    isa,
                    ..Kernels::fused()
                };
                let mut layouts = vec![(&prefix, "shared prefix"), (&left, "left")];
                if dtype == DType::F64 {
                    layouts.push((&trie, "shared trie"));
                }
                for (batch, layout) in layouts {
                    let label = format!("{architecture} {dtype:?} {isa:?} {layout}");
                    assert_same_gradients(&model, &parameters, batch, kernels, &label);
                }
            }
        }
    }
}

#[test]
fn each_kernel_switched_off_alone_still_gives_the_plain_gradients() {
    let config = small_config("Qwen3ForCausalLM");
    let (model, parameters) = tiny_qwen(&config, DType::F32, 8);
    let batch = TokenBatch::pad(&sequences(), Padding::Left, 0, &Device::Cpu).unwrap();
    for name in Kernels::NAMES {
        let kernels = Kernels::fused().without(name).unwrap();
        assert_same_gradients(
            &model,
            &parameters,
            &batch,
            kernels,
            &format!("without {name}"),
        );
    }
    assert!(Kernels::fused().without("flash").is_none());
}

#[test]
fn fused_kernels_match_the_plain_path_on_the_fixture_models() {
    for name in ["tiny-qwen2", "tiny-qwen3"] {
        let model = load_fixture(name);
        let input = ids(&reference(name)["input_ids"]);
        let rows = vec![input[..90].to_vec(), input[30..70].to_vec()];
        let batch = TokenBatch::pad(&rows, Padding::Right, 0, model.device()).unwrap();
        assert_same_gradients(
            model.qwen().unwrap(),
            model.parameters(),
            &batch,
            Kernels::fused(),
            name,
        );
    }
}

/// Greedy tokens and their log-probs of three prompts, with an observation appended to one
/// sequence halfway and a fork of another.
fn decode(qwen: &Qwen, kernels: Kernels, prompts: &[Vec<u32>]) -> Vec<(Vec<u32>, Vec<f32>)> {
    let network = Network::Qwen(qwen.with_kernels(kernels));
    let mut decoder = Decoder::new(&network, qwen.config().max_position_embeddings);
    let mut ids: Vec<_> = prompts
        .iter()
        .map(|prompt| {
            decoder
                .add_sequence(prompt, SamplingParams::greedy())
                .unwrap()
        })
        .collect();
    let mut log_probs = vec![Vec::new(); prompts.len() + 1];
    for step in 0..24 {
        if step == 10 {
            decoder.append(ids[0], &prompts[2][..6]).unwrap();
            ids.push(decoder.fork(ids[1], SamplingParams::greedy()).unwrap());
        }
        for (index, token) in decoder.step(&ids).unwrap().into_iter().enumerate() {
            log_probs[index].push(token.logprob);
        }
    }
    ids.iter()
        .zip(log_probs)
        .map(|(&id, log_probs)| (decoder.tokens(id).unwrap().to_vec(), log_probs))
        .collect()
}

#[test]
fn fused_decoding_generates_the_plain_tokens_and_log_probs() {
    for name in ["tiny-qwen2", "tiny-qwen3"] {
        let model = load_fixture(name);
        let qwen = model.qwen().unwrap();
        let input = ids(&reference(name)["input_ids"]);
        let prompts = vec![
            input[..7].to_vec(),
            input[40..73].to_vec(),
            input[100..117].to_vec(),
        ];
        let plain = decode(qwen, Kernels::reference(), &prompts);
        for isa in Isa::available() {
            let fused = decode(
                qwen,
                Kernels {
                    isa,
                    ..Kernels::fused()
                },
                &prompts,
            );
            for (index, ((want_tokens, want), (got_tokens, got))) in
                plain.iter().zip(&fused).enumerate()
            {
                assert_eq!(
                    got_tokens, want_tokens,
                    "{name} {isa:?} sequence {index}: tokens"
                );
                let worst = got
                    .iter()
                    .zip(want)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0f32, f32::max);
                assert!(
                    worst < 1e-4,
                    "{name} {isa:?} sequence {index}: log-probs off by {worst}"
                );
            }
        }
    }
}
