//! `rollscope bench model`: greedy decoding and one training step of a model folder or of
//! the ~10M-parameter Qwen2 benchmark shape.

use super::Cli;
use super::model::{RuntimeArgs, load_model};
use crate::model::embedded::EmbeddedSpec;
use crate::model::{
    Decoder, ModelConfig, Network, Padding, ParameterStore, Qwen, SamplingParams, TokenBatch,
    default_dtype, next_token_log_probs,
};
use candle_nn::{AdamW, Optimizer, ParamsAdamW, VarMap};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Arguments of `rollscope bench model`.
#[derive(Debug, Args)]
pub struct BenchModelArgs {
    /// A model folder [default: the ~10M Qwen2 shape with random weights: hidden 256,
    /// 4 layers, 4/2 heads, MLP 2816, vocab 2048, tied].
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Prompt length of the decoding runs.
    #[arg(long, default_value_t = 32)]
    pub prompt_tokens: usize,
    /// New tokens per sequence in the decoding runs.
    #[arg(long, default_value_t = 127)]
    pub new_tokens: usize,
    /// Sequences × tokens of the training step.
    #[arg(long, default_value_t = 8)]
    pub train_batch: usize,
    /// Tokens per training sequence.
    #[arg(long, default_value_t = 128)]
    pub train_tokens: usize,
    /// Timed repetitions (the median is reported) after one warm-up.
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
    /// Device and dtype.
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

fn bench_network(args: &BenchModelArgs) -> anyhow::Result<(Qwen, VarMap)> {
    if let Some(dir) = &args.model {
        let model = load_model(dir, &args.runtime)?;
        return Ok((model.qwen()?.clone(), model.parameters().clone()));
    }
    let config = ModelConfig::from_json(
        Path::new("(bench shape)"),
        EmbeddedSpec::bench().config_json(2, 0),
    )?;
    let options = args.runtime.load_options()?;
    let dtype = options
        .dtype
        .unwrap_or_else(|| default_dtype(&options.device, None));
    let store = ParameterStore::random(0, 0.02, true);
    Ok(store.build(dtype, &options.device, |vb| Qwen::new(&config, vb))?)
}

/// The median of one figure of the runs.
pub(super) fn median(runs: &[Timing], figure: impl Fn(&Timing) -> f64) -> f64 {
    let mut values: Vec<f64> = runs.iter().map(figure).collect();
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

pub(super) fn random_tokens(rng: &mut StdRng, count: usize, vocab: usize) -> Vec<u32> {
    (0..count)
        .map(|_| rng.random_range(16..vocab as u32))
        .collect()
}

/// Wall-clock and process CPU seconds of one run. On a shared machine the CPU time of a
/// single-threaded run is the better estimate of its uncontended wall time.
#[derive(Clone, Copy, Debug)]
pub(super) struct Timing {
    pub(super) wall: f64,
    pub(super) cpu: f64,
}

/// CPU seconds used by this process so far.
fn process_cpu_seconds() -> f64 {
    let mut time = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec it is given.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut time) };
    if status == 0 {
        time.tv_sec as f64 + time.tv_nsec as f64 * 1e-9
    } else {
        f64::NAN
    }
}

/// Times `work`.
pub(super) fn timed(work: impl FnOnce() -> anyhow::Result<()>) -> anyhow::Result<Timing> {
    let (wall, cpu) = (Instant::now(), process_cpu_seconds());
    work()?;
    Ok(Timing {
        wall: wall.elapsed().as_secs_f64(),
        cpu: process_cpu_seconds() - cpu,
    })
}

/// Generates `new_tokens` greedy tokens after each prompt (prefill included).
fn time_decode(
    network: &Network,
    context: usize,
    prompts: &[Vec<u32>],
    new_tokens: usize,
) -> anyhow::Result<Timing> {
    let mut decoder = Decoder::new(network, context);
    timed(|| {
        let ids = prompts
            .iter()
            .map(|prompt| decoder.add_sequence(prompt, SamplingParams::greedy()))
            .collect::<Result<Vec<_>, _>>()?;
        for _ in 0..new_tokens {
            decoder.step(&ids)?;
        }
        Ok(())
    })
}

/// One step: forward, mean next-token cross-entropy, backward, AdamW.
fn time_train_step(
    model: &Qwen,
    optimizer: &mut AdamW,
    batch: &TokenBatch,
) -> anyhow::Result<Timing> {
    timed(|| {
        let loss = next_token_log_probs(model, batch, 1.0)?.mean_all()?.neg()?;
        optimizer.backward_step(&loss)?;
        Ok(())
    })
}

pub fn bench_model(cli: &Cli, args: &BenchModelArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.repeats > 0 && args.new_tokens > 0 && args.prompt_tokens > 0,
        "counts must be positive"
    );
    let (model, parameters) = bench_network(args)?;
    let config = model.config().clone();
    let network = Network::Qwen(model.clone());
    let context = config.max_position_embeddings;
    let mut rng = StdRng::seed_from_u64(7);
    let bar = ProgressBar::new((3 * (args.repeats + 1)) as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} runs {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut decode = Vec::new();
    for batch in [1usize, 8] {
        let prompts: Vec<Vec<u32>> = (0..batch)
            .map(|_| random_tokens(&mut rng, args.prompt_tokens, config.vocab_size))
            .collect();
        let mut runs = Vec::new();
        for run in 0..=args.repeats {
            let timing = time_decode(&network, context, &prompts, args.new_tokens)?;
            bar.inc(1);
            if run > 0 {
                runs.push(timing);
            }
        }
        let tokens = (batch * args.new_tokens) as f64;
        decode.push((
            batch,
            tokens / median(&runs, |t| t.wall),
            tokens / median(&runs, |t| t.cpu),
        ));
    }
    let rows: Vec<Vec<u32>> = (0..args.train_batch)
        .map(|_| random_tokens(&mut rng, args.train_tokens, config.vocab_size))
        .collect();
    let batch = TokenBatch::pad(&rows, Padding::Right, 0, model.device())?;
    let adamw = ParamsAdamW {
        lr: 1e-4,
        ..ParamsAdamW::default()
    };
    let mut optimizer = AdamW::new(parameters.all_vars(), adamw)?;
    let mut steps = Vec::new();
    for run in 0..=args.repeats {
        let timing = time_train_step(&model, &mut optimizer, &batch)?;
        bar.inc(1);
        if run > 0 {
            steps.push(timing);
        }
    }
    bar.finish_and_clear();
    let (step_ms, step_cpu_ms) = (
        median(&steps, |t| t.wall) * 1e3,
        median(&steps, |t| t.cpu) * 1e3,
    );
    let threads = candle_core::utils::get_num_threads();
    if cli.json {
        let rates: Vec<_> = decode
            .iter()
            .map(|(batch, wall, cpu)| json!({"batch": batch, "tokens_per_second": wall, "tokens_per_cpu_second": cpu}))
            .collect();
        let summary = json!({
            "parameters": config.parameter_count(), "threads": threads, "dtype": format!("{:?}", model.dtype()),
            "decode": rates, "train_step_ms": step_ms, "train_step_cpu_ms": step_cpu_ms,
            "train_tokens": args.train_batch * args.train_tokens,
        });
        println!("{summary}");
        return Ok(());
    }
    println!(
        "model: {} parameters, {:?}, {threads} threads; prompts of {} tokens, {} new tokens (prefill included); \
         medians of {} runs, wall clock (per CPU-second of the process in brackets)",
        config.parameter_count(),
        model.dtype(),
        args.prompt_tokens,
        args.new_tokens,
        args.repeats
    );
    for (batch, wall, cpu) in &decode {
        let reference = if *batch == 1 { 250.0 } else { 1230.0 };
        println!(
            "greedy decode, batch {batch}: {wall:.0} tokens/s [{cpu:.0}] (transformers here: ≈ {reference:.0})"
        );
    }
    println!(
        "training step, {}×{} tokens (forward + backward + AdamW): {step_ms:.0} ms [{step_cpu_ms:.0} ms CPU] (PyTorch here: ≈ 360 ms)",
        args.train_batch, args.train_tokens
    );
    Ok(())
}
