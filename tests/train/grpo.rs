//! GRPO beyond the fixture: values on masked tokens never count, unrecorded behaviour
//! log-probs mean on-policy, β > 0 needs a reference.

use crate::common::{fixture_model, floats, ids, reference};
use candle_core::Device;
use rollscope::train::loss::ObjectiveConfig;
use rollscope::train::{
    Advantage, GrpoBatch, GrpoConfig, GrpoIteration, GrpoSample, Trainer, TrainerConfig,
};

/// The fixture's samples with their recorded old log-probs and advantages.
fn fixture_samples() -> Vec<GrpoSample> {
    let grpo = &reference()["grpo"];
    let prompt = ids(&grpo["prompt_ids"]);
    let advantages = floats(&grpo["advantages"]);
    grpo["samples"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(index, sample)| {
            let mut token_ids = prompt.clone();
            token_ids.extend(ids(&sample["completion_ids"]));
            let mut loss_mask = vec![0u8; prompt.len()];
            loss_mask.extend(ids(&sample["loss_mask"]).iter().map(|&bit| bit as u8));
            let mut behaviour = vec![0f32; prompt.len()];
            behaviour.extend(
                floats(&grpo["old_logprobs"][index])
                    .iter()
                    .map(|&v| v as f32),
            );
            GrpoSample {
                token_ids,
                loss_mask,
                behaviour_logprobs: behaviour,
                advantage: Advantage::Sample(advantages[index]),
            }
        })
        .collect()
}

fn config() -> GrpoConfig {
    GrpoConfig {
        objective: ObjectiveConfig {
            beta: 0.04,
            epsilon_high: 0.28,
            ..ObjectiveConfig::default()
        },
        iterations: 2,
        temperature: 1.0,
        ..GrpoConfig::default()
    }
}

/// Both iterations' figures and the parameters after them.
fn run(samples: &[GrpoSample]) -> (Vec<GrpoIteration>, Vec<f32>) {
    let model = fixture_model();
    let reference_policy = model.frozen_copy().unwrap();
    let trainer_config = TrainerConfig {
        learning_rate: 1e-3,
        ..TrainerConfig::default()
    };
    let mut trainer = Trainer::new(model, trainer_config).unwrap();
    let update = trainer
        .grpo_update(samples, Some(&reference_policy), &config())
        .unwrap();
    let (_, var) = &trainer.trainable_parameters()[0];
    let values = var.flatten_all().unwrap().to_vec1().unwrap();
    (update.iterations, values)
}

fn assert_close(a: &(Vec<GrpoIteration>, Vec<f32>), b: &(Vec<GrpoIteration>, Vec<f32>), tol: f64) {
    for (x, y) in a.0.iter().zip(&b.0) {
        for (p, q) in [
            (x.loss, y.loss),
            (x.grad_norm, y.grad_norm),
            (x.objective.mean_kl, y.objective.mean_kl),
            (x.objective.clip_region, y.objective.clip_region),
            (x.entropy, y.entropy),
        ] {
            assert!((p - q).abs() <= tol * q.abs().max(1.0), "{x:?} vs {y:?}");
        }
    }
    let worst =
        a.1.iter()
            .zip(&b.1)
            .map(|(p, q)| (p - q).abs())
            .fold(0.0, f32::max);
    assert!(f64::from(worst) <= tol, "parameters differ by {worst}");
}

#[test]
fn values_on_masked_tokens_never_count() {
    let samples = fixture_samples();
    let plain = run(&samples);
    let scrambled: Vec<GrpoSample> = samples
        .iter()
        .map(|sample| {
            let Advantage::Sample(advantage) = sample.advantage else {
                unreachable!()
            };
            let masked = |t: usize| sample.loss_mask[t] == 0;
            GrpoSample {
                behaviour_logprobs: (0..sample.token_ids.len())
                    .map(|t| {
                        if masked(t) {
                            -1e4
                        } else {
                            sample.behaviour_logprobs[t]
                        }
                    })
                    .collect(),
                advantage: Advantage::Tokens(
                    (0..sample.token_ids.len())
                        .map(|t| if masked(t) { 1e30 } else { advantage as f32 })
                        .collect(),
                ),
                ..sample.clone()
            }
        })
        .collect();
    assert_close(&run(&scrambled), &plain, 1e-6);
    assert!(
        plain.0[1].objective.clip_region > 0.0,
        "the second iteration clips"
    );
}

#[test]
fn unrecorded_behaviour_log_probs_are_the_current_policy() {
    let samples = fixture_samples();
    let recorded = run(&samples);
    let unrecorded: Vec<GrpoSample> = samples
        .iter()
        .map(|sample| GrpoSample {
            behaviour_logprobs: Vec::new(),
            ..sample.clone()
        })
        .collect();
    let on_policy = run(&unrecorded);
    assert_eq!(on_policy.0[0].objective.clip_region, 0.0);
    assert!(on_policy.0[0].objective.mean_kl.abs() < 1e-9);
    assert_close(&on_policy, &recorded, 1e-4);
}

#[test]
fn a_kl_term_needs_a_reference() {
    let mut trainer = Trainer::new(fixture_model(), TrainerConfig::default()).unwrap();
    let samples = fixture_samples();
    let error = trainer
        .grpo_update(&samples, None, &config())
        .err()
        .unwrap()
        .to_string();
    assert!(error.contains("beta"), "{error}");
    let without_kl = GrpoConfig {
        objective: ObjectiveConfig {
            beta: 0.0,
            ..config().objective
        },
        ..config()
    };
    let update = trainer.grpo_update(&samples, None, &without_kl).unwrap();
    assert_eq!(update.iterations.len(), 2);
    assert_eq!(update.iterations[1].objective.mean_kl, 0.0);
    let bad = GrpoSample {
        loss_mask: vec![1; 3],
        ..fixture_samples()[0].clone()
    };
    let error = GrpoBatch::new(&[bad], 0, &Device::Cpu)
        .err()
        .unwrap()
        .to_string();
    assert!(
        error.contains("sample 0") && error.contains("loss_mask"),
        "{error}"
    );
}
