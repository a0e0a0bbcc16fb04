//! The GRPO fixture: two iterations on one group of tiny-qwen2 samples reproduce TRL's loss,
//! gradient norm, clip ratio, mean KL and parameters after AdamW.

use crate::common::{close, fixture_model, floats, ids, reference, relative_error};
use candle_core::{DType, Device};
use rollscope::train::advantage::{AdvantageScale, group_advantages};
use rollscope::train::loss::{LossAggregation, ObjectiveConfig};
use rollscope::train::optim::AdamWConfig;
use rollscope::train::{
    Advantage, GrpoBatches, GrpoConfig, GrpoIteration, GrpoSample, Trainer, TrainerConfig,
};
use serde_json::Value;

fn number(hyper: &Value, key: &str) -> f64 {
    hyper[key]
        .as_f64()
        .unwrap_or_else(|| panic!("hyper.{key} missing"))
}

fn scale(name: &str) -> AdvantageScale {
    match name {
        "unbiased" => AdvantageScale::Unbiased,
        "biased" => AdvantageScale::Biased,
        "none" => AdvantageScale::None,
        other => panic!("unknown std convention {other}"),
    }
}

fn aggregation(name: &str) -> LossAggregation {
    serde_json::from_value(Value::String(name.to_string())).unwrap()
}

/// Compares one figure, recording it under `name`.
fn check(errors: &mut Vec<(String, f64, f64)>, name: String, got: f64, want: f64) {
    assert!(close(got, want), "{name}: got {got}, want {want}");
    errors.push((name, got, want));
}

fn check_iteration(
    errors: &mut Vec<(String, f64, f64)>,
    trainer: &Trainer,
    figures: &GrpoIteration,
    want: &Value,
    index: usize,
) {
    let label = |figure: &str| format!("iteration {} {figure}", index + 1);
    check(errors, label("loss"), figures.loss, number(want, "loss"));
    check(
        errors,
        label("grad_norm"),
        figures.grad_norm,
        number(want, "grad_norm_before_clip"),
    );
    check(
        errors,
        label("clip_ratio"),
        figures.objective.clip_region,
        number(want, "clip_ratio"),
    );
    check(
        errors,
        label("mean_kl"),
        figures.objective.mean_kl,
        number(want, "mean_kl"),
    );
    let parameters = trainer.trainable_parameters();
    for (name, l2) in want["param_l2_after_step"].as_object().unwrap() {
        let var = &parameters
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no parameter {name}"))
            .1;
        let values: Vec<f64> = var
            .as_tensor()
            .to_dtype(DType::F64)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1()
            .unwrap();
        let norm = values.iter().map(|v| v * v).sum::<f64>().sqrt();
        check(
            errors,
            label(&format!("{name} L2")),
            norm,
            l2.as_f64().unwrap(),
        );
        let first = floats(&want["param_first5_after_step"][name]);
        for (k, (&got, &expected)) in values.iter().zip(&first).enumerate() {
            check(errors, label(&format!("{name}[{k}]")), got, expected);
        }
    }
}

#[test]
fn two_iterations_reproduce_the_reference() {
    let grpo = &reference()["grpo"];
    let hyper = &grpo["hyper"];
    let rewards = floats(&grpo["rewards"]);
    let advantages = group_advantages(
        &rewards,
        scale(hyper["std"].as_str().unwrap()),
        number(hyper, "advantage_eps"),
    );
    for (got, want) in advantages
        .advantages
        .iter()
        .zip(floats(&grpo["advantages"]))
    {
        assert!((got - want).abs() < 1e-6, "advantage {got} vs {want}");
    }

    let prompt = ids(&grpo["prompt_ids"]);
    let samples: Vec<GrpoSample> = grpo["samples"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(index, sample)| {
            let completion = ids(&sample["completion_ids"]);
            let mask = ids(&sample["loss_mask"]);
            let old = floats(&grpo["old_logprobs"][index]);
            assert_eq!(old.len(), completion.len());
            let mut token_ids = prompt.clone();
            token_ids.extend(&completion);
            let mut loss_mask = vec![0u8; prompt.len()];
            loss_mask.extend(mask.iter().map(|&bit| bit as u8));
            let mut behaviour = vec![0f32; prompt.len()];
            behaviour.extend(old.iter().map(|&v| v as f32));
            GrpoSample {
                token_ids,
                loss_mask,
                behaviour_logprobs: behaviour,
                advantage: Advantage::Sample(advantages.advantages[index]),
            }
        })
        .collect();
    let pad_id = grpo["pad_id"].as_u64().unwrap() as u32;
    let batch = GrpoBatches::new(&samples, pad_id, &Device::Cpu, 0).unwrap();

    let model = fixture_model();
    let reference_policy = model.frozen_copy().unwrap();
    let mut trainer = Trainer::new(
        model,
        TrainerConfig {
            learning_rate: number(hyper, "lr"),
            max_grad_norm: number(hyper, "max_grad_norm"),
            adamw: AdamWConfig {
                beta1: number(hyper, "adam_beta1"),
                beta2: number(hyper, "adam_beta2"),
                eps: number(hyper, "adam_eps"),
                weight_decay: number(hyper, "weight_decay"),
            },
            ..TrainerConfig::default()
        },
    )
    .unwrap();
    let config = GrpoConfig {
        objective: ObjectiveConfig {
            beta: number(hyper, "beta"),
            epsilon_low: number(hyper, "epsilon_low"),
            epsilon_high: number(hyper, "epsilon_high"),
            aggregation: aggregation(hyper["loss_aggregation"].as_str().unwrap()),
            ..ObjectiveConfig::default()
        },
        iterations: hyper["iterations"].as_u64().unwrap() as usize,
        temperature: 1.0,
        micro_batch_tokens: 0,
    };
    let reference_ref = Some(&reference_policy);
    let prepared = trainer
        .prepare_grpo(&batch, reference_ref, &config)
        .unwrap();
    let want = grpo["iterations"].as_array().unwrap();
    assert_eq!(want.len(), config.iterations);
    let mut errors = Vec::new();
    for (index, expected) in want.iter().enumerate() {
        let figures = trainer.grpo_iteration(&prepared, &config).unwrap();
        assert_eq!(figures.objective.tokens as usize, batch.totals.tokens);
        check_iteration(&mut errors, &trainer, &figures, expected, index);
    }
    report(&errors);
}

/// Prints the worst error of each figure: relative where the tolerance is relative
/// (|want| ≥ 1e-3), absolute where it is absolute.
fn report(errors: &[(String, f64, f64)]) {
    let mut worst: Vec<(String, f64, bool)> = Vec::new();
    for (name, got, want) in errors {
        let figure = name.split_once(' ').map_or(name.as_str(), |(_, rest)| rest);
        let figure = figure.split_once(' ').map_or(figure, |(_, rest)| rest);
        let figure = figure.split('[').next().unwrap_or(figure).to_string();
        let relative = want.abs() >= 1e-3;
        let error = if relative {
            relative_error(*got, *want)
        } else {
            (got - want).abs()
        };
        match worst
            .iter_mut()
            .find(|(f, _, r)| *f == figure && *r == relative)
        {
            Some(entry) => entry.1 = entry.1.max(error),
            None => worst.push((figure, error, relative)),
        }
    }
    for (figure, error, relative) in worst {
        let kind = if relative { "relative" } else { "absolute" };
        eprintln!("GRPO fixture {figure}: max {kind} error {error:.1e}");
    }
}
