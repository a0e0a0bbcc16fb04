//! A GRPO update cut by length into micro-batches equals the update as one batch (the loss,
//! every gradient and the figures, for every loss aggregation, in f64 on the fixture models,
//! Qwen2 and Qwen3), and so does an SFT step, whose figures are the full forward's.

use crate::common::fixture_dir;
use candle_core::{DType, Device};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rollscope::model::{LanguageModel, LoadOptions, Padding, TokenBatch, next_token_log_probs};
use rollscope::train::loss::{LossAggregation, ObjectiveConfig};
use rollscope::train::{
    Advantage, GrpoBatches, GrpoConfig, GrpoIteration, GrpoSample, SftExample, Trainer,
    TrainerConfig,
};
use std::path::Path;

/// The model of a fixture folder in f64.
fn model_in_f64(dir: &Path) -> LanguageModel {
    let options = LoadOptions {
        dtype: Some(DType::F64),
        ..LoadOptions::default()
    };
    LanguageModel::load(dir, &options).unwrap()
}

/// Ten samples of 9 to 40 tokens (ids below the fixture's vocabulary), a quarter prompt,
/// behaviour log-probs off the current policy's so that ratios clip, advantages of both
/// signs, three of them per token.
fn ragged_samples(trainer: &Trainer) -> Vec<GrpoSample> {
    let vocab = trainer.model().config.vocab_size as u32;
    let policy = trainer.policy().unwrap().detached();
    let mut rng = StdRng::seed_from_u64(3);
    (0..10)
        .map(|index| {
            let len = rng.random_range(9..=40);
            let token_ids: Vec<u32> = (0..len).map(|_| rng.random_range(1..vocab)).collect();
            let prompt = len / 4;
            let loss_mask: Vec<u8> = (0..len).map(|t| u8::from(t >= prompt)).collect();
            let batch = TokenBatch::pad(
                std::slice::from_ref(&token_ids),
                Padding::Right,
                0,
                &Device::Cpu,
            )
            .unwrap();
            let current: Vec<Vec<f64>> = next_token_log_probs(&policy, &batch, 1.0)
                .unwrap()
                .to_vec2()
                .unwrap();
            let behaviour_logprobs = std::iter::once(0.0)
                .chain(
                    current[0]
                        .iter()
                        .map(|&p| (p + rng.random_range(-0.4..0.4)) as f32),
                )
                .collect();
            let sign: f64 = if index % 2 == 0 { 1.0 } else { -1.0 };
            let advantage = if index % 3 == 0 {
                Advantage::Tokens(
                    (0..len)
                        .map(|t| (sign * (0.5 + t as f64 / 40.0)) as f32)
                        .collect(),
                )
            } else {
                Advantage::Sample(sign * (0.3 + index as f64 / 10.0))
            };
            GrpoSample {
                token_ids,
                loss_mask,
                behaviour_logprobs,
                advantage,
            }
        })
        .collect()
}

/// One iteration's figures and gradients (by parameter name, flattened).
fn gradients(
    trainer: &Trainer,
    samples: &[GrpoSample],
    config: &GrpoConfig,
) -> (GrpoIteration, Vec<(String, Vec<f64>)>, GrpoBatches) {
    let reference = trainer.model().frozen_copy().unwrap();
    let batches = GrpoBatches::new(samples, 0, &Device::Cpu, config.micro_batch_tokens).unwrap();
    let prepared = trainer
        .prepare_grpo(&batches, Some(&reference), config)
        .unwrap();
    let (figures, grads) = trainer.grpo_gradients(&prepared, config).unwrap();
    let named = trainer
        .trainable_parameters()
        .into_iter()
        .map(|(name, var)| {
            let grad = grads
                .get(var.as_tensor())
                .expect("every parameter has a gradient");
            (name, grad.flatten_all().unwrap().to_vec1::<f64>().unwrap())
        })
        .collect();
    drop(prepared);
    (figures, named, batches)
}

fn relative(got: f64, want: f64) -> f64 {
    (got - want).abs() / want.abs().max(1e-12)
}

#[test]
fn micro_batches_give_the_one_batch_loss_and_gradients_in_every_mode() {
    for fixture in ["tiny-qwen2", "tiny-qwen3"] {
        let dir = fixture_dir().with_file_name(fixture);
        let trainer = Trainer::new(model_in_f64(&dir), TrainerConfig::default()).unwrap();
        let samples = ragged_samples(&trainer);
        let longest = samples.iter().map(|s| s.token_ids.len()).max().unwrap();
        for aggregation in [
            LossAggregation::Grpo,
            LossAggregation::Bnpo,
            LossAggregation::DrGrpo,
            LossAggregation::Dapo,
        ] {
            let one = GrpoConfig {
                objective: ObjectiveConfig {
                    beta: 0.04,
                    epsilon_high: 0.28,
                    aggregation,
                    max_completion_length: 48,
                    ..ObjectiveConfig::default()
                },
                micro_batch_tokens: 0,
                ..GrpoConfig::default()
            };
            let micro = GrpoConfig {
                micro_batch_tokens: 2 * longest,
                ..one
            };
            let (want, want_grads, whole) = gradients(&trainer, &samples, &one);
            let (got, got_grads, parts) = gradients(&trainer, &samples, &micro);
            let case = format!("{fixture} {aggregation:?}");
            assert_eq!(whole.micro.len(), 1, "{case}");
            assert!(
                parts.micro.len() >= 4,
                "{case}: {} micro-batches",
                parts.micro.len()
            );
            assert!(
                parts.token_slots() < whole.token_slots(),
                "{case}: less padding"
            );
            assert_eq!(parts.totals, whole.totals, "{case}");
            assert!(want.objective.clip_region > 0.0, "{case}: some ratios clip");
            for (name, g, w) in [
                ("loss", got.loss, want.loss),
                ("kl", got.objective.mean_kl, want.objective.mean_kl),
                ("entropy", got.entropy, want.entropy),
                ("clip_low", got.objective.clip_low, want.objective.clip_low),
                (
                    "clip_high",
                    got.objective.clip_high,
                    want.objective.clip_high,
                ),
                (
                    "clip_region",
                    got.objective.clip_region,
                    want.objective.clip_region,
                ),
                ("tokens", got.objective.tokens, want.objective.tokens),
            ] {
                assert!(relative(g, w) <= 1e-6, "{case} {name}: {g} vs {w}");
            }
            assert_eq!(got_grads.len(), want_grads.len());
            for ((name, g), (_, w)) in got_grads.iter().zip(&want_grads) {
                let norm = w.iter().map(|x| x * x).sum::<f64>().sqrt();
                let diff = g
                    .iter()
                    .zip(w)
                    .map(|(a, b)| (a - b).powi(2))
                    .sum::<f64>()
                    .sqrt();
                assert!(norm > 0.0, "{case} {name}: a gradient flows");
                assert!(
                    diff <= 1e-6 * norm,
                    "{case} {name}: |Δ| {diff:e} of |g| {norm:e}"
                );
            }
        }
    }
}

#[test]
fn an_sft_step_in_micro_batches_is_the_step_at_once() {
    let dir = fixture_dir();
    let step = |micro_batch_tokens: usize| {
        let mut trainer = Trainer::new(model_in_f64(&dir), TrainerConfig::default()).unwrap();
        let examples: Vec<SftExample> = ragged_samples(&trainer)
            .into_iter()
            .map(|sample| SftExample::new(sample.token_ids, sample.loss_mask).unwrap())
            .collect();
        let refs: Vec<&SftExample> = examples.iter().collect();
        let figures = trainer.sft_step(&refs, micro_batch_tokens).unwrap();
        let parameters: Vec<f64> = trainer
            .trainable_parameters()
            .iter()
            .flat_map(|(_, var)| var.flatten_all().unwrap().to_vec1::<f64>().unwrap())
            .collect();
        (figures, parameters)
    };
    let (whole, whole_parameters) = step(0);
    let (parts, part_parameters) = step(48);
    assert!(
        parts.padded_tokens < whole.padded_tokens,
        "{parts:?} vs {whole:?}"
    );
    assert_eq!(parts.tokens, whole.tokens);
    for (name, got, want) in [
        ("loss", parts.loss, whole.loss),
        ("token accuracy", parts.token_accuracy, whole.token_accuracy),
        ("grad norm", parts.grad_norm, whole.grad_norm),
    ] {
        assert!(relative(got, want) <= 1e-6, "{name}: {got} vs {want}");
    }
    let worst = part_parameters
        .iter()
        .zip(&whole_parameters)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(worst <= 1e-9, "parameters differ by {worst:e}");
}

#[test]
fn the_sft_loss_is_the_full_forwards_masked_cross_entropy_and_accuracy() {
    let trainer = Trainer::new(model_in_f64(&fixture_dir()), TrainerConfig::default()).unwrap();
    let examples: Vec<SftExample> = ragged_samples(&trainer)
        .into_iter()
        .map(|sample| SftExample::new(sample.token_ids, sample.loss_mask).unwrap())
        .collect();
    let refs: Vec<&SftExample> = examples.iter().collect();
    let figures = trainer.sft_loss(&refs).unwrap();
    let rows: Vec<Vec<u32>> = examples.iter().map(|e| e.token_ids.clone()).collect();
    let batch = TokenBatch::pad(&rows, Padding::Right, trainer.pad_id(), &Device::Cpu).unwrap();
    let policy = trainer.policy().unwrap();
    let log_probs: Vec<Vec<f64>> = next_token_log_probs(policy, &batch, 1.0)
        .unwrap()
        .to_vec2()
        .unwrap();
    let predicted: Vec<Vec<u32>> = policy
        .forward(&batch)
        .unwrap()
        .argmax(candle_core::D::Minus1)
        .unwrap()
        .to_vec2()
        .unwrap();
    let (mut loss, mut correct, mut tokens) = (0.0, 0.0, 0usize);
    for (row, example) in examples.iter().enumerate() {
        for t in 1..example.len() {
            if example.loss_mask[t] != 0 {
                loss -= log_probs[row][t - 1];
                correct += f64::from(u8::from(predicted[row][t - 1] == example.token_ids[t]));
                tokens += 1;
            }
        }
    }
    assert_eq!(figures.tokens, tokens);
    let (loss, accuracy) = (loss / tokens as f64, correct / tokens as f64);
    assert!(
        relative(figures.loss, loss) <= 1e-12,
        "{figures:?}: loss {loss}"
    );
    assert!(
        relative(figures.token_accuracy, accuracy) <= 1e-12,
        "{figures:?}: accuracy {accuracy}"
    );
}
