//! `rollscope bench train`: one GRPO update (reference forward, policy forward, loss,
//! backward, AdamW) and one SFT step through the trainer, on a model folder or the
//! ~10M-parameter Qwen2 benchmark shape.

use super::Cli;
use super::bench_model::random_tokens;
use super::bench_steps::{Timing, median, timed};
use super::model::{RuntimeArgs, load_model};
use crate::model::embedded::{self, EmbeddedSpec, GSM8K_TEST, gsm8k_rows};
use crate::model::{LanguageModel, Padding, TokenBatch, next_token_log_probs};
use crate::train::loss::ObjectiveConfig;
use crate::train::{
    Advantage, GrpoBatch, GrpoConfig, GrpoSample, LoraConfig, SftExample, Trainer, TrainerConfig,
};
use clap::Args;
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde_json::json;
use std::path::PathBuf;

/// Arguments of `rollscope bench train`.
#[derive(Debug, Args)]
pub struct BenchTrainArgs {
    /// A model folder [default: the ~10M Qwen2 shape with random weights: hidden 256,
    /// 4 layers, 4/2 heads, MLP 2816, vocab 2048, tied].
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Sequences per batch.
    #[arg(long, default_value_t = 8)]
    pub batch: usize,
    /// Tokens per sequence (the first eighth is prompt, not trained).
    #[arg(long, default_value_t = 128)]
    pub tokens: usize,
    /// KL weight β (0 skips the reference forward).
    #[arg(long, default_value_t = 0.04)]
    pub beta: f64,
    /// Train LoRA adapters of this rank on every projection instead of every weight.
    #[arg(long)]
    pub lora_rank: Option<usize>,
    /// Timed repetitions (the median is reported) after one warm-up.
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
    /// Device and dtype.
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

/// The model folder `model`, or the ~10M-parameter Qwen2 benchmark shape with random weights
/// and a tokenizer trained on the shipped GSM8K text.
pub(super) fn bench_language_model(
    model: Option<&std::path::Path>,
    runtime: &RuntimeArgs,
) -> anyhow::Result<LanguageModel> {
    if let Some(dir) = model {
        return load_model(dir, runtime);
    }
    let corpus: Vec<String> = gsm8k_rows(GSM8K_TEST)
        .iter()
        .map(|row| format!("{}\n{}", row.question, row.answer))
        .collect();
    Ok(embedded::build(
        &EmbeddedSpec::bench(),
        &corpus,
        &runtime.load_options()?,
    )?)
}

/// Medians of the runs, in milliseconds of wall clock and of process CPU.
fn milliseconds(runs: &[Timing]) -> (f64, f64) {
    (
        median(runs, |t| t.wall) * 1e3,
        median(runs, |t| t.cpu) * 1e3,
    )
}

/// Runs the benchmark.
pub fn bench_train(cli: &Cli, args: &BenchTrainArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.repeats > 0 && args.batch > 0 && args.tokens >= 16,
        "counts must be positive and sequences at least 16 tokens"
    );
    let model = bench_language_model(args.model.as_deref(), &args.runtime)?;
    let parameters = model.config.parameter_count();
    let vocab = model.config.vocab_size;
    let lora = args.lora_rank.map(|rank| LoraConfig {
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
    let rows: Vec<Vec<u32>> = (0..args.batch)
        .map(|_| random_tokens(&mut rng, args.tokens, vocab))
        .collect();
    let prompt = args.tokens / 8;
    let mask: Vec<u8> = (0..args.tokens).map(|t| u8::from(t >= prompt)).collect();
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
    let batch = GrpoBatch::new(&samples, 0, trainer.model().device())?;
    let grpo = GrpoConfig {
        objective: ObjectiveConfig {
            beta: args.beta,
            ..ObjectiveConfig::default()
        },
        iterations: 1,
        temperature: 1.0,
    };
    let examples: Vec<SftExample> = rows
        .iter()
        .map(|ids| SftExample::new(ids.clone(), mask.clone()))
        .collect::<Result<_, _>>()?;
    let example_refs: Vec<&SftExample> = examples.iter().collect();
    let (mut references, mut iterations, mut updates, mut sft) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for run in 0..=args.repeats {
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
            trainer.sft_step(&example_refs)?;
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
    let threads = candle_core::utils::get_num_threads();
    let (update, update_cpu) = milliseconds(&updates);
    let (reference_ms, _) = milliseconds(&references);
    let (iteration_ms, _) = milliseconds(&iterations);
    let (sft_ms, sft_cpu) = milliseconds(&sft);
    let tokens = args.batch * args.tokens;
    if cli.json {
        let summary = json!({
            "parameters": parameters, "threads": threads, "tokens": tokens, "beta": args.beta,
            "lora_rank": args.lora_rank, "grpo_update_ms": update, "grpo_update_cpu_ms": update_cpu,
            "reference_forward_ms": reference_ms, "grpo_iteration_ms": iteration_ms,
            "sft_step_ms": sft_ms, "sft_step_cpu_ms": sft_cpu,
        });
        println!("{summary}");
        return Ok(());
    }
    println!(
        "model: {parameters} parameters, {threads} threads; {}×{} tokens, β = {}{}; medians of {} runs, \
         wall clock [process CPU]",
        args.batch,
        args.tokens,
        args.beta,
        args.lora_rank
            .map_or(String::new(), |rank| format!(", LoRA rank {rank}")),
        args.repeats
    );
    println!(
        "GRPO update (reference forward {reference_ms:.0} ms + policy forward, loss, backward, \
         AdamW {iteration_ms:.0} ms): {update:.0} ms [{update_cpu:.0} ms]"
    );
    println!("SFT step (forward, loss, backward, AdamW): {sft_ms:.0} ms [{sft_cpu:.0} ms]");
    Ok(())
}
