//! Gradients: a float64 finite-difference check, a gradient for every parameter, padded
//! batches that compute exactly what each sequence computes alone, and figures computed at
//! chosen columns only that equal the full forward's, gradients included.

use crate::common::{fixture_dir, ids, load_fixture, reference, tiny_config, tiny_qwen};
use candle_core::{DType, Device, IndexOp, Tensor, Var};
use candle_nn::VarMap;
use rollscope::model::{
    LanguageModel, LoadOptions, NextTokenStats, Padding, Qwen, TokenBatch, next_token_log_probs,
    next_token_log_probs_at, next_token_stats, next_token_stats_at,
};

const ARCHITECTURES: [&str; 2] = ["Qwen2ForCausalLM", "Qwen3ForCausalLM"];

fn ragged_sequences() -> Vec<Vec<u32>> {
    vec![
        vec![3, 17, 5, 29, 11, 2, 38],
        vec![21, 4, 9],
        vec![1, 33, 12, 7, 25],
    ]
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

/// A weighted sum of masked log-probs plus a little masked entropy, at temperature 1.3.
fn loss(model: &Qwen, batch: &TokenBatch, weights: &Tensor) -> Tensor {
    let stats = next_token_stats(model, batch, 1.3).unwrap();
    let logp = (stats.log_probs * weights).unwrap().sum_all().unwrap();
    let entropy = (stats.entropy * weights).unwrap().sum_all().unwrap();
    (logp + (entropy * 0.1).unwrap()).unwrap()
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

fn with_entry(var: &Var, index: usize, delta: f64) {
    let mut values: Vec<f64> = var.flatten_all().unwrap().to_vec1().unwrap();
    values[index] += delta;
    var.set(&Tensor::from_vec(values, var.shape(), &Device::Cpu).unwrap())
        .unwrap();
}

#[test]
fn float64_gradients_match_finite_differences() {
    for architecture in ARCHITECTURES {
        let config = tiny_config(architecture, 32);
        let (model, parameters) = tiny_qwen(&config, DType::F64, 11);
        let batch = TokenBatch::pad(&ragged_sequences(), Padding::Left, 0, &Device::Cpu).unwrap();
        let mask = target_mask(&batch, DType::F64);
        let weights = (mask
            * Tensor::arange(1.0f64, 19.0, &Device::Cpu)
                .unwrap()
                .reshape((3, 6))
                .unwrap())
        .unwrap();
        let grads = loss(&model, &batch, &weights).backward().unwrap();
        let step = 1e-5;
        let mut checked = 0;
        for (name, var) in vars(&parameters) {
            let gradient: Vec<f64> = grads
                .get(&var)
                .unwrap()
                .flatten_all()
                .unwrap()
                .to_vec1()
                .unwrap();
            let count = var.elem_count();
            for index in [0, count / 2, count - 1] {
                with_entry(&var, index, step);
                let up = loss(&model, &batch, &weights).to_scalar::<f64>().unwrap();
                with_entry(&var, index, -2.0 * step);
                let down = loss(&model, &batch, &weights).to_scalar::<f64>().unwrap();
                with_entry(&var, index, step);
                let numeric = (up - down) / (2.0 * step);
                let analytic = gradient[index];
                let tolerance = 1e-7 + 1e-5 * analytic.abs().max(numeric.abs());
                assert!(
                    (numeric - analytic).abs() < tolerance,
                    "{architecture} {name}[{index}]: finite difference {numeric}, autograd {analytic}"
                );
                checked += 1;
            }
        }
        assert!(
            checked >= 3 * 20,
            "{architecture}: only {checked} entries checked"
        );
    }
}

/// The largest absolute entry of a tensor, as f64.
fn largest(values: &Tensor) -> f64 {
    let largest = values.abs().unwrap().max_all().unwrap();
    largest.to_dtype(DType::F64).unwrap().to_scalar().unwrap()
}

fn assert_every_parameter_gets_a_gradient(
    model: &Qwen,
    parameters: &VarMap,
    batch: &TokenBatch,
    label: &str,
) {
    let loss = next_token_log_probs(model, batch, 1.0)
        .unwrap()
        .mean_all()
        .unwrap();
    let grads = loss.backward().unwrap();
    let all = vars(parameters);
    assert!(!all.is_empty());
    for (name, var) in all {
        let gradient = grads
            .get(&var)
            .unwrap_or_else(|| panic!("{label}: {name} received no gradient"));
        assert!(
            largest(gradient) > 0.0,
            "{label}: {name} has an all-zero gradient"
        );
    }
}

#[test]
fn every_parameter_receives_a_nonzero_gradient() {
    for architecture in ARCHITECTURES {
        let config = tiny_config(architecture, 32);
        let (model, parameters) = tiny_qwen(&config, DType::F32, 5);
        let batch = TokenBatch::pad(&ragged_sequences(), Padding::Right, 0, &Device::Cpu).unwrap();
        assert_every_parameter_gets_a_gradient(&model, &parameters, &batch, architecture);
    }
    for name in ["tiny-qwen2", "tiny-qwen3"] {
        let model = load_fixture(name);
        let input = ids(&reference(name)["input_ids"]);
        let batch =
            TokenBatch::pad(&[input[..64].to_vec()], Padding::Right, 0, model.device()).unwrap();
        let expected = model.config.parameter_count();
        let named = model.named_parameters();
        assert!(named.windows(2).all(|pair| pair[0].0 < pair[1].0));
        assert!(
            named
                .iter()
                .any(|(name, _)| name == "model.layers.0.self_attn.q_proj.weight")
        );
        let counted: usize = named.iter().map(|(_, var)| var.elem_count()).sum();
        assert_eq!(counted, expected, "{name}: parameter count");
        assert_every_parameter_gets_a_gradient(
            model.qwen().unwrap(),
            model.parameters(),
            &batch,
            name,
        );
    }
}

#[test]
fn padded_batches_compute_what_each_sequence_computes_alone() {
    let model = load_fixture("tiny-qwen2");
    let qwen = model.qwen().unwrap();
    let input = ids(&reference("tiny-qwen2")["input_ids"]);
    let sequences = vec![
        input[10..60].to_vec(),
        input[200..320].to_vec(),
        input[5..90].to_vec(),
    ];
    let alone: Vec<Vec<f32>> = sequences
        .iter()
        .map(|sequence| {
            let batch = TokenBatch::pad(
                std::slice::from_ref(sequence),
                Padding::Right,
                0,
                model.device(),
            )
            .unwrap();
            next_token_log_probs(qwen, &batch, 1.0)
                .unwrap()
                .i(0)
                .unwrap()
                .to_vec1()
                .unwrap()
        })
        .collect();
    let longest = sequences.iter().map(Vec::len).max().unwrap();
    for padding in [Padding::Left, Padding::Right] {
        let batch = TokenBatch::pad(&sequences, padding, 0, model.device()).unwrap();
        let together = next_token_log_probs(qwen, &batch, 1.0).unwrap();
        for (row, (sequence, expected)) in sequences.iter().zip(&alone).enumerate() {
            let offset = if padding == Padding::Left {
                longest - sequence.len()
            } else {
                0
            };
            let ours: Vec<f32> = together
                .i((row, offset..offset + sequence.len() - 1))
                .unwrap()
                .to_vec1()
                .unwrap();
            let worst = ours
                .iter()
                .zip(expected)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f32, f32::max);
            assert!(
                worst < 1e-5,
                "{padding:?} row {row}: log-probs differ by {worst}"
            );
        }
    }
}

/// Right-padded slices of a fixture's reference ids (when `shared`, behind one shared prefix
/// of 24 tokens, with a copy of the first and a sequence that is the second's prefix, which
/// `Kernels::shared_prefix` computes once), and the next-token columns of the flattened
/// `[B, T-1]` grid past each row's first third (the "completion").
fn ragged_with_columns(name: &str, shared: bool, device: &Device) -> (TokenBatch, Vec<u32>) {
    let input = ids(&reference(name)["input_ids"]);
    let mut owns = vec![&input[3..40], &input[100..190], &input[7..20]];
    let prefix = if shared {
        owns.extend([&input[3..40], &input[100..130]]);
        &input[40..64]
    } else {
        &input[..0]
    };
    let sequences: Vec<Vec<u32>> = owns
        .iter()
        .map(|own| prefix.iter().chain(own.iter()).copied().collect())
        .collect();
    let batch = TokenBatch::pad(&sequences, Padding::Right, 0, device).unwrap();
    let width = batch.seq_len() - 1;
    let columns = sequences
        .iter()
        .enumerate()
        .flat_map(|(row, sequence)| {
            (sequence.len() / 3..sequence.len() - 1).map(move |t| (row * width + t) as u32)
        })
        .collect();
    (batch, columns)
}

#[test]
fn figures_at_chosen_columns_equal_the_full_forwards_with_the_same_gradients() {
    let options = LoadOptions {
        dtype: Some(DType::F64),
        ..LoadOptions::default()
    };
    for (name, shared) in [
        ("tiny-qwen2", false),
        ("tiny-qwen3", false),
        ("tiny-qwen2", true),
        ("tiny-qwen3", true),
    ] {
        let model = LanguageModel::load(&fixture_dir(name), &options).unwrap();
        let qwen = model.qwen().unwrap();
        let (batch, columns) = ragged_with_columns(name, shared, model.device());
        let real = batch.mask.iter().filter(|&&bit| bit == 1).count();
        let layout = batch.shared_rows().unwrap();
        let padding_only = layout.unique_rows() == real + 1;
        assert_eq!(
            padding_only,
            !shared,
            "{name}: {} unique rows",
            layout.unique_rows()
        );
        let (rows, width) = (batch.batch_size(), batch.seq_len() - 1);
        let mut weights = vec![0f64; rows * width];
        for &column in &columns {
            weights[column as usize] = 1.0 + f64::from(column) / 10.0;
        }
        let weights = Tensor::from_vec(weights, (rows, width), model.device()).unwrap();
        let weighted = |stats: NextTokenStats| {
            let logp = (&stats.log_probs * &weights).unwrap().sum_all().unwrap();
            let entropy = (&stats.entropy * &weights).unwrap().sum_all().unwrap();
            let loss = (logp + (entropy * 0.1).unwrap()).unwrap();
            let grads = loss.backward().unwrap();
            let picked = |values: &Tensor| -> Vec<f64> {
                let flat: Vec<f64> = values.flatten_all().unwrap().to_vec1().unwrap();
                columns.iter().map(|&c| flat[c as usize]).collect()
            };
            let figures = [picked(&stats.log_probs), picked(&stats.entropy)];
            (loss.to_scalar::<f64>().unwrap(), figures, grads)
        };
        let (full_loss, full, full_grads) = weighted(next_token_stats(qwen, &batch, 1.3).unwrap());
        let (loss, at, grads) = weighted(next_token_stats_at(qwen, &batch, &columns, 1.3).unwrap());
        assert!(
            (loss - full_loss).abs() <= 1e-12 * full_loss.abs(),
            "{name}: loss {loss} against {full_loss}"
        );
        for (ours, theirs) in at.iter().zip(&full) {
            let worst = ours
                .iter()
                .zip(theirs)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(worst <= 1e-12, "{name}: figures differ by {worst}");
        }
        let log_probs = next_token_log_probs_at(qwen, &batch, &columns, 1.3).unwrap();
        let flat: Vec<f64> = log_probs.flatten_all().unwrap().to_vec1().unwrap();
        for (&column, expected) in columns.iter().zip(&full[0]) {
            assert!((flat[column as usize] - expected).abs() <= 1e-12, "{name}");
        }
        for (parameter, var) in model.named_parameters() {
            let expected = full_grads.get(&var).unwrap();
            let ours = grads
                .get(&var)
                .unwrap_or_else(|| panic!("{name}: {parameter} received no gradient"));
            let (scale, worst) = (largest(expected), largest(&(ours - expected).unwrap()));
            assert!(
                scale > 0.0 && worst <= 1e-10 * scale,
                "{name}: {parameter}'s gradient differs by {worst} (largest entry {scale})"
            );
        }
        let beyond = (rows * width) as u32;
        let error = next_token_stats_at(qwen, &batch, &[0, beyond], 1.0).unwrap_err();
        assert!(
            error
                .to_string()
                .contains(&format!("{} columns", rows * width)),
            "{error}"
        );
    }
}
