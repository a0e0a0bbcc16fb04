//! The GRPO benchmark: one end-to-end GRPO step as TRL's `GRPOTrainer` makes it: G
//! sampled completions of one prompt (the prompt prefilled once and forked), a rule reward,
//! group advantages, the reference forward, the clipped objective with k3 KL, backward and
//! AdamW. With a TRL Python, TRL runs the same configuration right after
//! (`examples/bench_trl_grpo.py`) and both figures are reported side by side.

use super::quantiles;
use super::steps::{Timing, median, timed};
use super::{BenchProgress, Runtime, bench_language_model, random_tokens, run_reference_script};
use crate::model::SamplingParams;
use crate::train::advantage::{AdvantageScale, group_advantages};
use crate::train::{Advantage, GrpoConfig, GrpoSample, Trainer, TrainerConfig};
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What the GRPO benchmark steps, on which model.
#[derive(Clone, Debug)]
pub struct GrpoBenchOptions {
    /// A model folder [default: the ~10M Qwen2 benchmark shape with random weights].
    pub model: Option<PathBuf>,
    /// G: completions of the prompt.
    pub group: usize,
    /// Prompt tokens.
    pub prompt: usize,
    /// Tokens of every completion (sampled at temperature 1, no early stop).
    pub completion: usize,
    /// KL weight β.
    pub beta: f64,
    /// Timed steps (the median is reported) after one warm-up.
    pub steps: usize,
    /// A Python with torch, transformers and trl, to run TRL's GRPOTrainer on the same
    /// configuration right after.
    pub trl: Option<PathBuf>,
    /// Device and dtype.
    pub runtime: Runtime,
}

/// TRL's GRPO defaults on the benchmark shape, as `rollscope bench grpo` has them.
impl Default for GrpoBenchOptions {
    fn default() -> Self {
        Self {
            model: None,
            group: 8,
            prompt: 32,
            completion: 128,
            beta: 0.04,
            steps: 5,
            trl: None,
            runtime: Runtime::default(),
        }
    }
}

/// The figures of the GRPO benchmark, medians in milliseconds.
#[derive(Debug, Clone, Serialize)]
pub struct GrpoBenchReport {
    /// G: completions of the prompt.
    pub group: usize,
    /// Prompt tokens.
    pub prompt: usize,
    /// Tokens of every completion.
    pub completion: usize,
    /// KL weight β.
    pub beta: f64,
    /// A whole step.
    pub grpo_step_ms: f64,
    /// CPU milliseconds of a whole step.
    pub grpo_step_cpu_ms: f64,
    /// The generation of a step.
    pub generate_ms: f64,
    /// Reward, reference and update of a step.
    pub update_ms: f64,
    /// What TRL's run printed (`trl_grpo_step_ms`, `trl_grpo_step_cpu_ms`, …), if it ran.
    pub trl: Option<Value>,
    /// Our step time over TRL's, if TRL ran.
    pub ratio_to_trl: Option<f64>,
}

/// The timings of one step.
struct StepTimes {
    total: Timing,
    generate: f64,
    update: f64,
}

/// Times GRPO steps end to end (and TRL's, given its Python).
pub fn bench_grpo(
    options: &GrpoBenchOptions,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<GrpoBenchReport> {
    anyhow::ensure!(
        options.group >= 2 && options.prompt > 0 && options.completion > 0 && options.steps > 0,
        "--group must be at least 2, and --prompt, --completion and --steps positive"
    );
    let model = bench_language_model(options.model.as_deref(), &options.runtime, progress)?;
    let vocab = model.config.vocab_size;
    let config = TrainerConfig {
        learning_rate: 1e-5,
        ..TrainerConfig::default()
    };
    let mut trainer = Trainer::new(model, config)?;
    let reference = trainer.reference_policy()?;
    let prompt = random_tokens(&mut StdRng::seed_from_u64(3), options.prompt, vocab);
    let grpo = super::one_update(options.beta);
    progress(BenchProgress::counted(
        "grpo steps",
        options.steps as u64 + 1,
    ));
    let mut steps = Vec::with_capacity(options.steps);
    for step in 0..=options.steps {
        let times = one_step(
            &mut trainer,
            &reference,
            &prompt,
            options,
            &grpo,
            step as u64,
        )?;
        progress(BenchProgress::Advance(1));
        if step > 0 {
            steps.push(times);
        }
    }
    progress(BenchProgress::End);
    let totals: Vec<Timing> = steps.iter().map(|s| s.total).collect();
    let wall = median(&totals, |t| t.wall) * 1e3;
    let cpu = median(&totals, |t| t.cpu) * 1e3;
    let middle = |pick: fn(&StepTimes) -> f64| {
        let mut values: Vec<f64> = steps.iter().map(pick).collect();
        quantiles::median(&mut values) * 1e3
    };
    let trl = match &options.trl {
        Some(python) => Some(run_trl(python, options.steps + 1, progress)?),
        None => None,
    };
    let trl_ms = trl.as_ref().and_then(|v| v["trl_grpo_step_ms"].as_f64());
    Ok(GrpoBenchReport {
        group: options.group,
        prompt: options.prompt,
        completion: options.completion,
        beta: options.beta,
        grpo_step_ms: wall,
        grpo_step_cpu_ms: cpu,
        generate_ms: middle(|s| s.generate),
        update_ms: middle(|s| s.update),
        trl,
        ratio_to_trl: trl_ms.map(|t| wall / t),
    })
}

fn one_step(
    trainer: &mut Trainer,
    reference: &crate::model::Qwen,
    prompt: &[u32],
    options: &GrpoBenchOptions,
    grpo: &GrpoConfig,
    step: u64,
) -> anyhow::Result<StepTimes> {
    let mut generate = 0.0;
    let mut update = 0.0;
    let total = timed(|| {
        let started = std::time::Instant::now();
        let mut decoder = trainer.model().decoder();
        let sampling = |seed: u64| SamplingParams {
            temperature: 1.0,
            top_p: 1.0,
            top_k: 0,
            seed,
        };
        let parent = decoder.add_sequence(prompt, sampling(step))?;
        decoder.prefill(&[parent])?;
        let ids = (0..options.group)
            .map(|g| decoder.fork(parent, sampling(step * 1000 + g as u64)))
            .collect::<Result<Vec<_>, _>>()?;
        decoder.remove(parent)?;
        let mut logprobs = vec![vec![0f32; options.prompt]; options.group];
        for _ in 0..options.completion {
            for (row, sampled) in logprobs.iter_mut().zip(decoder.step(&ids)?) {
                row.push(sampled.logprob);
            }
        }
        let sequences = ids
            .iter()
            .map(|&id| decoder.remove(id))
            .collect::<Result<Vec<_>, _>>()?;
        generate = started.elapsed().as_secs_f64();
        let started = std::time::Instant::now();
        let rewards: Vec<f64> = sequences
            .iter()
            .map(|tokens| {
                let completion = &tokens[options.prompt..];
                completion.iter().filter(|&&t| t % 2 == 0).count() as f64 / completion.len() as f64
            })
            .collect();
        let advantages = group_advantages(&rewards, AdvantageScale::Unbiased, 1e-4).advantages;
        let mask: Vec<u8> = (0..options.prompt + options.completion)
            .map(|t| u8::from(t >= options.prompt))
            .collect();
        let samples: Vec<GrpoSample> = sequences
            .into_iter()
            .zip(logprobs)
            .zip(advantages)
            .map(|((token_ids, behaviour_logprobs), advantage)| GrpoSample {
                token_ids,
                loss_mask: mask.clone(),
                behaviour_logprobs,
                advantage: Advantage::Sample(advantage),
            })
            .collect();
        trainer.grpo_update(&samples, Some(reference), grpo)?;
        update = started.elapsed().as_secs_f64();
        Ok(())
    })?;
    Ok(StepTimes {
        total,
        generate,
        update,
    })
}

/// Runs `examples/bench_trl_grpo.py` with `python` and reads its JSON line.
fn run_trl(
    python: &Path,
    steps: usize,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<Value> {
    run_reference_script(
        python,
        "bench_trl_grpo.py",
        &["--steps".into(), steps.to_string()],
        format!("TRL GRPOTrainer, {steps} steps"),
        progress,
    )
}
