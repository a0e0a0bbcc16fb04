//! `rollscope bench model`: greedy decoding, a training step and a GRPO step of a model folder
//! or of the ~10M-parameter Qwen2 benchmark shape, with switches to take out each fused kernel
//! so what every one gives can be measured.

use super::Cli;
use super::bench_steps::{
    GrpoInputs, Timing, median, time_decode, time_grpo_step, time_train_step,
};
use super::model::{RuntimeArgs, load_model};
use crate::model::embedded::EmbeddedSpec;
use crate::model::{
    Isa, Kernels, ModelConfig, Network, Padding, ParameterStore, Qwen, TokenBatch, default_dtype,
};
use crate::train::optim::{AdamW, AdamWConfig};
use candle_core::{DType, Tensor};
use candle_nn::VarMap;
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// Which figures to measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Figure {
    /// Greedy decoding at batch 8 and batch 1.
    Decode,
    /// A training step.
    Train,
    /// A GRPO step.
    Grpo,
}

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
    /// Sequences of the training and GRPO steps.
    #[arg(long, default_value_t = 8)]
    pub train_batch: usize,
    /// Tokens per sequence of the training and GRPO steps.
    #[arg(long, default_value_t = 128)]
    pub train_tokens: usize,
    /// Timed repetitions (the median is reported) after one warm-up.
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
    /// Figures to measure [default: all].
    #[arg(long, value_enum, value_delimiter = ',')]
    pub only: Vec<Figure>,
    /// Plain candle ops everywhere instead of the fused kernels.
    #[arg(long)]
    pub reference: bool,
    /// Fused kernels to switch off (flat_linears, norm, attention, swiglu, mlp, log_probs,
    /// decode).
    #[arg(long, value_delimiter = ',')]
    pub without: Vec<String>,
    /// Run the hand-written kernels on portable code even on an AVX-512 CPU.
    #[arg(long)]
    pub portable: bool,
    /// AdamW with tensor ops instead of the fused in-place update.
    #[arg(long)]
    pub unfused_optimizer: bool,
    /// Device and dtype.
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

impl BenchModelArgs {
    fn kernels(&self) -> anyhow::Result<Kernels> {
        let mut kernels = if self.reference {
            Kernels::reference()
        } else {
            Kernels::fused()
        };
        for name in &self.without {
            kernels = kernels.without(name).ok_or_else(|| {
                anyhow::anyhow!(
                    "--without {name}: no such kernel; known: {}",
                    Kernels::NAMES.join(", ")
                )
            })?;
        }
        if self.portable {
            kernels.isa = Isa::Portable;
        }
        Ok(kernels)
    }

    fn measures(&self, figure: Figure) -> bool {
        self.only.is_empty() || self.only.contains(&figure)
    }

    fn optimizer(&self, parameters: &VarMap) -> anyhow::Result<AdamW> {
        let mut named: Vec<_> = parameters
            .data()
            .lock()
            .map_err(|_| anyhow::anyhow!("the parameter map is poisoned"))?
            .iter()
            .map(|(name, var)| (name.clone(), var.clone()))
            .collect();
        named.sort_by(|a, b| a.0.cmp(&b.0));
        let config = AdamWConfig::default();
        Ok(if self.unfused_optimizer {
            AdamW::unfused(named, config)?
        } else {
            AdamW::new(named, config)?
        })
    }
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

pub(super) fn random_tokens(rng: &mut StdRng, count: usize, vocab: usize) -> Vec<u32> {
    (0..count)
        .map(|_| rng.random_range(16.min(vocab as u32 - 1)..vocab as u32))
        .collect()
}

/// Runs `measure` once to warm up and `repeats` times more.
fn repeated(
    repeats: usize,
    bar: &ProgressBar,
    mut measure: impl FnMut() -> anyhow::Result<Timing>,
) -> anyhow::Result<Vec<Timing>> {
    let mut runs = Vec::with_capacity(repeats);
    for run in 0..=repeats {
        let timing = measure()?;
        bar.inc(1);
        if run > 0 {
            runs.push(timing);
        }
    }
    Ok(runs)
}

pub fn bench_model(cli: &Cli, args: &BenchModelArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.repeats > 0 && args.new_tokens > 0 && args.prompt_tokens > 0,
        "counts must be positive"
    );
    anyhow::ensure!(
        args.train_batch > 0 && args.train_tokens > 1,
        "a training batch needs at least one sequence of 2 tokens"
    );
    let kernels = args.kernels()?;
    let (model, parameters) = bench_network(args)?;
    let model = model.with_kernels(kernels);
    let config = model.config().clone();
    let context = config.max_position_embeddings;
    let mut rng = StdRng::seed_from_u64(7);
    let bar = ProgressBar::new((4 * (args.repeats + 1)) as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} runs {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut figures = Map::new();
    let mut decode = Vec::new();
    if args.measures(Figure::Decode) {
        let network = Network::Qwen(model.clone());
        for batch in [8usize, 1] {
            let prompts: Vec<Vec<u32>> = (0..batch)
                .map(|_| random_tokens(&mut rng, args.prompt_tokens, config.vocab_size))
                .collect();
            let runs = repeated(args.repeats, &bar, || {
                time_decode(&network, context, &prompts, args.new_tokens)
            })?;
            let tokens = (batch * args.new_tokens) as f64;
            let (wall, cpu) = (
                tokens / median(&runs, |t| t.wall),
                tokens / median(&runs, |t| t.cpu),
            );
            figures.insert(format!("decode_batch{batch}_tps"), json!(wall));
            figures.insert(format!("decode_batch{batch}_cpu_tps"), json!(cpu));
            decode.push(
                json!({"batch": batch, "tokens_per_second": wall, "tokens_per_cpu_second": cpu}),
            );
        }
    }
    let rows: Vec<Vec<u32>> = (0..args.train_batch)
        .map(|_| random_tokens(&mut rng, args.train_tokens, config.vocab_size))
        .collect();
    let batch = TokenBatch::pad(&rows, Padding::Right, 0, model.device())?;
    if args.measures(Figure::Train) {
        let mut optimizer = args.optimizer(&parameters)?;
        let runs = repeated(args.repeats, &bar, || {
            time_train_step(&model, &mut optimizer, &batch)
        })?;
        figures.insert(
            "train_step_ms".into(),
            json!(median(&runs, |t| t.wall) * 1e3),
        );
        figures.insert(
            "train_step_cpu_ms".into(),
            json!(median(&runs, |t| t.cpu) * 1e3),
        );
    }
    if args.measures(Figure::Grpo) {
        let reference = bench_network(args)?.0.detached().with_kernels(kernels);
        let mut optimizer = args.optimizer(&parameters)?;
        let device = model.device();
        let advantages: Vec<f32> = (0..args.train_batch)
            .map(|_| rng.random_range(-1.0..1.0))
            .collect();
        let advantages = Tensor::from_vec(advantages, (args.train_batch, 1), device)?;
        let mask = Tensor::ones(
            (args.train_batch, args.train_tokens - 1),
            DType::F32,
            device,
        )?;
        let inputs = GrpoInputs {
            reference: &reference,
            advantages: &advantages,
            mask: &mask,
        };
        let runs = repeated(args.repeats, &bar, || {
            time_grpo_step(&model, &mut optimizer, &batch, &inputs)
        })?;
        figures.insert(
            "grpo_step_ms".into(),
            json!(median(&runs, |t| t.wall) * 1e3),
        );
        figures.insert(
            "grpo_step_cpu_ms".into(),
            json!(median(&runs, |t| t.cpu) * 1e3),
        );
    }
    bar.finish_and_clear();
    let threads = candle_core::utils::get_num_threads();
    let setup = json!({
        "parameters": config.parameter_count(), "threads": threads,
        "dtype": format!("{:?}", model.dtype()), "kernels": format!("{kernels:?}"),
        "fused_optimizer": !args.unfused_optimizer, "train_tokens": args.train_batch * args.train_tokens,
        "avx512_matmul": cfg!(feature = "avx512") && Isa::detect() == Isa::Avx512,
    });
    if cli.json {
        let mut summary = Map::new();
        summary.insert("setup".into(), setup);
        summary.insert("decode".into(), Value::Array(decode));
        for key in [
            "train_step_ms",
            "train_step_cpu_ms",
            "grpo_step_ms",
            "grpo_step_cpu_ms",
        ] {
            if let Some(value) = figures.get(key) {
                summary.insert(key.into(), value.clone());
            }
        }
        summary.insert("figures".into(), Value::Object(figures));
        println!("{}", Value::Object(summary));
        return Ok(());
    }
    print_figures(args, &setup, &figures);
    Ok(())
}

fn print_figures(args: &BenchModelArgs, setup: &Value, figures: &Map<String, Value>) {
    println!(
        "model: {} parameters, {}, {} threads; kernels {}; prompts of {} tokens, {} new tokens \
         (prefill included); medians of {} runs, wall clock (per CPU-second of the process in brackets)",
        setup["parameters"],
        setup["dtype"],
        setup["threads"],
        setup["kernels"],
        args.prompt_tokens,
        args.new_tokens,
        args.repeats
    );
    let figure = |key: &str| figures.get(key).and_then(Value::as_f64);
    for (batch, reference) in [(8, 1229.0), (1, 248.0)] {
        if let (Some(wall), Some(cpu)) = (
            figure(&format!("decode_batch{batch}_tps")),
            figure(&format!("decode_batch{batch}_cpu_tps")),
        ) {
            println!(
                "greedy decode, batch {batch}: {wall:.0} tokens/s [{cpu:.0}] (transformers here: ≈ {reference:.0})"
            );
        }
    }
    let shape = format!("{}×{}", args.train_batch, args.train_tokens);
    if let (Some(wall), Some(cpu)) = (figure("train_step_ms"), figure("train_step_cpu_ms")) {
        println!(
            "training step, {shape} tokens (forward + backward + AdamW): {wall:.0} ms [{cpu:.0} ms CPU] (PyTorch here: ≈ 362 ms)"
        );
    }
    if let (Some(wall), Some(cpu)) = (figure("grpo_step_ms"), figure("grpo_step_cpu_ms")) {
        println!(
            "GRPO step, {shape} tokens (reference + policy + loss + backward + AdamW): {wall:.0} ms [{cpu:.0} ms CPU] (PyTorch here: ≈ 477 ms)"
        );
    }
}
