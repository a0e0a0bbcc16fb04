//! The trainer benchmark: one GRPO update (reference forward, policy forward, loss,
//! backward, AdamW) and one SFT step through the trainer, on a model folder or the
//! ~10M-parameter Qwen2 benchmark shape.

use super::steps::{Timing, median, timed};
use super::{BenchProgress, Runtime, bench_language_model, random_tokens};
use crate::model::{Padding, TokenBatch, next_token_log_probs};
use crate::train::{
    Advantage, GrpoBatches, GrpoSample, LoraConfig, SftExample, Trainer, TrainerConfig,
};
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde::Serialize;
use std::path::PathBuf;

/// What the trainer benchmark trains, on which model.
#[derive(Clone, Debug)]
pub struct TrainBenchOptions {
    /// A model folder [default: the ~10M Qwen2 benchmark shape with random weights].
    pub model: Option<PathBuf>,
    /// Sequences per batch.
    pub batch: usize,
    /// Tokens per sequence (the first eighth is prompt, not trained).
    pub tokens: usize,
    /// KL weight β (0 skips the reference forward).
    pub beta: f64,
    /// Train LoRA adapters of this rank on every projection instead of every weight.
    pub lora_rank: Option<usize>,
    /// Timed repetitions (the median is reported) after one warm-up.
    pub repeats: usize,
    /// Device and dtype.
    pub runtime: Runtime,
}

/// The figures of the trainer benchmark, medians in milliseconds.
#[derive(Debug, Clone, Serialize)]
pub struct TrainBenchReport {
    /// Parameters of the model.
    pub parameters: usize,
    /// Compute threads.
    pub threads: usize,
    /// Tokens of a batch.
    pub tokens: usize,
    /// The KL weight β.
    pub beta: f64,
    /// The LoRA rank, if adapters were trained.
    pub lora_rank: Option<usize>,
    /// A GRPO update: reference forward and one iteration.
    pub grpo_update_ms: f64,
    /// CPU milliseconds of a GRPO update.
    pub grpo_update_cpu_ms: f64,
    /// The reference forward of an update.
    pub reference_forward_ms: f64,
    /// Policy forward, loss, backward and AdamW of an update.
    pub grpo_iteration_ms: f64,
    /// An SFT step.
    pub sft_step_ms: f64,
    /// CPU milliseconds of an SFT step.
    pub sft_step_cpu_ms: f64,
}

/// Medians of the runs, in milliseconds of wall clock and of process CPU.
fn milliseconds(runs: &[Timing]) -> (f64, f64) {
    (
        median(runs, |t| t.wall) * 1e3,
        median(runs, |t| t.cpu) * 1e3,
    )
}

/// Times a GRPO update and an SFT step through the trainer on a random batch.
pub fn bench_train(
    options: &TrainBenchOptions,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<TrainBenchReport> {
    anyhow::ensure!(
        options.repeats > 0 && options.batch > 0 && options.tokens >= 16,
        "counts must be positive and sequences at least 16 tokens"
    );
    let model = bench_language_model(options.model.as_deref(), &options.runtime, progress)?;
    let parameters = model.config.parameter_count();
    let vocab = model.config.vocab_size;
    let lora = options.lora_rank.map(|rank| LoraConfig {
        rank,
        alpha: 2.0 * rank as f64,
        target_modules: crate::train::LORA_TARGETS
            .iter()
            .map(|t| t.to_string())
            .collect(),
        use_rslora: false,
    });
    let config = TrainerConfig {
        learning_rate: 1e-5,
        lora,
        ..TrainerConfig::default()
    };
    let mut trainer = Trainer::new(model, config)?;
    let reference = trainer.reference_policy()?;
    let mut rng = StdRng::seed_from_u64(7);
    let rows: Vec<Vec<u32>> = (0..options.batch)
        .map(|_| random_tokens(&mut rng, options.tokens, vocab))
        .collect();
    let prompt = options.tokens / 8;
    let mask: Vec<u8> = (0..options.tokens).map(|t| u8::from(t >= prompt)).collect();
    let padded = TokenBatch::pad(&rows, Padding::Right, 0, trainer.model().device())?;
    let behaviour: Vec<Vec<f32>> =
        next_token_log_probs(&trainer.policy()?.detached(), &padded, 1.0)?.to_vec2()?;
    let samples: Vec<GrpoSample> = rows
        .iter()
        .zip(&behaviour)
        .enumerate()
        .map(|(index, (ids, logprobs))| GrpoSample {
            token_ids: ids.clone(),
            loss_mask: mask.clone(),
            behaviour_logprobs: std::iter::once(0.0)
                .chain(logprobs.iter().copied())
                .collect(),
            advantage: Advantage::Sample(if index % 2 == 0 { 1.0 } else { -1.0 }),
        })
        .collect();
    let grpo = super::one_update(options.beta);
    let batch = GrpoBatches::new(
        &samples,
        0,
        trainer.model().device(),
        grpo.micro_batch_tokens,
    )?;
    let examples: Vec<SftExample> = rows
        .iter()
        .map(|ids| SftExample::new(ids.clone(), mask.clone()))
        .collect::<Result<_, _>>()?;
    let example_refs: Vec<&SftExample> = examples.iter().collect();
    let (mut references, mut iterations, mut updates, mut sft) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for run in 0..=options.repeats {
        let mut prepared = None;
        let reference_time = timed(|| {
            prepared = Some(trainer.prepare_grpo(&batch, Some(&reference), &grpo)?);
            Ok(())
        })?;
        let prepared = prepared.ok_or_else(|| anyhow::anyhow!("nothing prepared"))?;
        let iteration_time = timed(|| {
            trainer.grpo_iteration(&prepared, &grpo)?;
            Ok(())
        })?;
        let sft_time = timed(|| {
            trainer.sft_step(&example_refs, 0)?;
            Ok(())
        })?;
        if run > 0 {
            references.push(reference_time);
            iterations.push(iteration_time);
            updates.push(Timing {
                wall: reference_time.wall + iteration_time.wall,
                cpu: reference_time.cpu + iteration_time.cpu,
            });
            sft.push(sft_time);
        }
    }
    let (grpo_update_ms, grpo_update_cpu_ms) = milliseconds(&updates);
    let (sft_step_ms, sft_step_cpu_ms) = milliseconds(&sft);
    Ok(TrainBenchReport {
        parameters,
        threads: candle_core::utils::get_num_threads(),
        tokens: options.batch * options.tokens,
        beta: options.beta,
        lora_rank: options.lora_rank,
        grpo_update_ms,
        grpo_update_cpu_ms,
        reference_forward_ms: milliseconds(&references).0,
        grpo_iteration_ms: milliseconds(&iterations).0,
        sft_step_ms,
        sft_step_cpu_ms,
    })
}
