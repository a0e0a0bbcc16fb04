//! The model benchmark: greedy decoding, a training step and a GRPO step of a model folder
//! or of the ~10M-parameter Qwen2 benchmark shape, with switches to take out each fused kernel
//! so what every one gives can be measured.

use super::ragged::{RaggedShape, time_ragged_decode};
use super::steps::{
    GrpoInputs, per_second, repeated, step_milliseconds, time_decode, time_grpo_step,
    time_train_step,
};
use super::{BenchProgress, Runtime, load_model, random_tokens};
use crate::model::embedded::EmbeddedSpec;
use crate::model::{
    Kernels, ModelConfig, Network, Padding, ParameterStore, Qwen, TokenBatch, default_dtype,
};
use crate::train::optim::{AdamW, AdamWConfig};
use candle_core::{DType, Tensor};
use candle_nn::VarMap;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A figure the model benchmark can measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelFigure {
    /// Greedy decoding at batch 8, 1 and 64.
    Decode,
    /// Greedy decoding at the rollout shape (`RaggedShape::ROLLOUT`).
    Ragged,
    /// A training step.
    Train,
    /// A GRPO step.
    Grpo,
}

/// What the model benchmark runs, on which model and kernels.
#[derive(Clone, Debug)]
pub struct ModelBenchOptions {
    /// A model folder [default: the ~10M Qwen2 benchmark shape with random weights].
    pub model: Option<PathBuf>,
    /// Prompt length of the decoding runs.
    pub prompt_tokens: usize,
    /// New tokens per sequence in the decoding runs.
    pub new_tokens: usize,
    /// Sequences of the training and GRPO steps.
    pub train_batch: usize,
    /// Tokens per sequence of the training and GRPO steps.
    pub train_tokens: usize,
    /// Timed repetitions (the median is reported) after one warm-up.
    pub repeats: usize,
    /// Figures to measure [empty: all].
    pub only: Vec<ModelFigure>,
    /// Plain candle ops everywhere instead of the fused kernels.
    pub reference: bool,
    /// Fused kernels to switch off, by name (see `Kernels::NAMES`).
    pub without: Vec<String>,
    /// AdamW with tensor ops instead of the fused in-place update.
    pub unfused_optimizer: bool,
    /// Device and dtype.
    pub runtime: Runtime,
}

/// How the model benchmark ran.
#[derive(Debug, Clone, Serialize)]
pub struct ModelBenchSetup {
    /// Parameters of the model.
    pub parameters: usize,
    /// Compute threads.
    pub threads: usize,
    /// The compute dtype, as Rust writes it (`F32`).
    pub dtype: String,
    /// The kernels, as Rust writes them.
    pub kernels: String,
    /// Whether AdamW was the fused in-place update.
    pub fused_optimizer: bool,
    /// Tokens of a training batch.
    pub train_tokens: usize,
    /// The instruction set of the kernels and matmuls (`--isa`).
    pub isa: String,
}

/// Decoding speed at one batch size.
#[derive(Debug, Clone, Serialize)]
pub struct DecodeFigures {
    /// Sequences decoded together.
    pub batch: usize,
    /// New tokens per second of wall clock (median).
    pub tokens_per_second: f64,
    /// New tokens per CPU-second of the process (median).
    pub tokens_per_cpu_second: f64,
}

/// Every measured figure under one flat name; the ones not measured are left out.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ModelFigures {
    /// Tokens per second decoding 8 sequences.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decode_batch8_tps: Option<f64>,
    /// Tokens per CPU-second decoding 8 sequences.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decode_batch8_cpu_tps: Option<f64>,
    /// Tokens per second decoding one sequence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decode_batch1_tps: Option<f64>,
    /// Tokens per CPU-second decoding one sequence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decode_batch1_cpu_tps: Option<f64>,
    /// Tokens per second decoding 64 sequences.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decode_batch64_tps: Option<f64>,
    /// Tokens per CPU-second decoding 64 sequences.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decode_batch64_cpu_tps: Option<f64>,
    /// New tokens per second at the rollout shape.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decode_ragged64_tps: Option<f64>,
    /// New tokens per CPU-second at the rollout shape.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decode_ragged64_cpu_tps: Option<f64>,
    /// Milliseconds of a training step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub train_step_ms: Option<f64>,
    /// CPU milliseconds of a training step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub train_step_cpu_ms: Option<f64>,
    /// Milliseconds of a GRPO step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grpo_step_ms: Option<f64>,
    /// CPU milliseconds of a GRPO step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grpo_step_cpu_ms: Option<f64>,
}

/// The figures of the model benchmark (the step figures also at the top level).
#[derive(Debug, Clone, Serialize)]
pub struct ModelBenchReport {
    /// How it ran.
    pub setup: ModelBenchSetup,
    /// Decoding speed at batch 8, 1 and 64, if measured.
    pub decode: Vec<DecodeFigures>,
    /// The rollout-shaped workload, if measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ragged: Option<RaggedShape>,
    /// Milliseconds of a training step, if measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub train_step_ms: Option<f64>,
    /// CPU milliseconds of a training step, if measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub train_step_cpu_ms: Option<f64>,
    /// Milliseconds of a GRPO step, if measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grpo_step_ms: Option<f64>,
    /// CPU milliseconds of a GRPO step, if measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grpo_step_cpu_ms: Option<f64>,
    /// Every figure under one flat name.
    pub figures: ModelFigures,
}

impl ModelBenchOptions {
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
        Ok(kernels)
    }

    fn measures(&self, figure: ModelFigure) -> bool {
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

/// The benchmark shape's defaults, as `rollscope bench model` has them.
impl Default for ModelBenchOptions {
    fn default() -> Self {
        Self {
            model: None,
            prompt_tokens: 32,
            new_tokens: 127,
            train_batch: 8,
            train_tokens: 128,
            repeats: 3,
            only: Vec::new(),
            reference: false,
            without: Vec::new(),
            unfused_optimizer: false,
            runtime: Runtime::default(),
        }
    }
}

fn bench_network(
    options: &ModelBenchOptions,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<(Qwen, VarMap)> {
    if let Some(dir) = &options.model {
        let model = load_model(dir, &options.runtime, progress)?;
        return Ok((model.qwen()?.clone(), model.parameters().clone()));
    }
    let config = ModelConfig::from_json(
        Path::new("(bench shape)"),
        EmbeddedSpec::bench().config_json(2, 0),
    )?;
    let load = options.runtime.load_options()?;
    let dtype = load
        .dtype
        .unwrap_or_else(|| default_dtype(&load.device, None));
    let store = ParameterStore::random(0, 0.02, true);
    Ok(store.build(dtype, &load.device, |vb| Qwen::new(&config, vb))?)
}

/// Times greedy decoding, a training step and a GRPO step (those `options.only` asks for).
pub fn bench_model(
    options: &ModelBenchOptions,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<ModelBenchReport> {
    anyhow::ensure!(
        options.repeats > 0 && options.new_tokens > 0 && options.prompt_tokens > 0,
        "counts must be positive"
    );
    anyhow::ensure!(
        options.train_batch > 0 && options.train_tokens > 1,
        "a training batch needs at least one sequence of 2 tokens"
    );
    let kernels = options.kernels()?;
    let (model, parameters) = bench_network(options, progress)?;
    let model = model.with_kernels(kernels);
    let config = model.config().clone();
    let context = config.max_position_embeddings;
    let mut rng = StdRng::seed_from_u64(7);
    progress(BenchProgress::counted(
        "runs",
        (6 * (options.repeats + 1)) as u64,
    ));
    let mut figures = ModelFigures::default();
    let mut decode = Vec::new();
    if options.measures(ModelFigure::Decode) {
        let network = Network::Qwen(model.clone());
        let slots = [
            (
                8,
                &mut figures.decode_batch8_tps,
                &mut figures.decode_batch8_cpu_tps,
            ),
            (
                1,
                &mut figures.decode_batch1_tps,
                &mut figures.decode_batch1_cpu_tps,
            ),
            (
                64,
                &mut figures.decode_batch64_tps,
                &mut figures.decode_batch64_cpu_tps,
            ),
        ];
        for (batch, wall_slot, cpu_slot) in slots {
            let prompts: Vec<Vec<u32>> = (0..batch)
                .map(|_| random_tokens(&mut rng, options.prompt_tokens, config.vocab_size))
                .collect();
            let runs = repeated(options.repeats, progress, || {
                time_decode(&network, context, &prompts, options.new_tokens)
            })?;
            let (wall, cpu) = per_second(&runs, batch * options.new_tokens);
            (*wall_slot, *cpu_slot) = (Some(wall), Some(cpu));
            decode.push(DecodeFigures {
                batch,
                tokens_per_second: wall,
                tokens_per_cpu_second: cpu,
            });
        }
    }
    let mut ragged = None;
    if options.measures(ModelFigure::Ragged) {
        let network = Network::Qwen(model.clone());
        let shape = RaggedShape::ROLLOUT;
        anyhow::ensure!(
            shape.longest() <= context,
            "the rollout shape needs {} tokens of context and the model has {context}; \
             leave it out with --only decode,train,grpo",
            shape.longest()
        );
        let prompts = shape.prompts(&mut rng, config.vocab_size);
        let runs = repeated(options.repeats, progress, || {
            time_ragged_decode(&network, context, shape, &prompts)
        })?;
        let (wall, cpu) = per_second(&runs, shape.total_new_tokens());
        (figures.decode_ragged64_tps, figures.decode_ragged64_cpu_tps) = (Some(wall), Some(cpu));
        ragged = Some(shape);
    }
    let rows: Vec<Vec<u32>> = (0..options.train_batch)
        .map(|_| random_tokens(&mut rng, options.train_tokens, config.vocab_size))
        .collect();
    let batch = TokenBatch::pad(&rows, Padding::Right, 0, model.device())?;
    if options.measures(ModelFigure::Train) {
        let mut optimizer = options.optimizer(&parameters)?;
        let runs = repeated(options.repeats, progress, || {
            time_train_step(&model, &mut optimizer, &batch)
        })?;
        (figures.train_step_ms, figures.train_step_cpu_ms) = step_milliseconds(&runs);
    }
    if options.measures(ModelFigure::Grpo) {
        let reference = bench_network(options, progress)?
            .0
            .detached()
            .with_kernels(kernels);
        let mut optimizer = options.optimizer(&parameters)?;
        let device = model.device();
        let advantages: Vec<f32> = (0..options.train_batch)
            .map(|_| rng.random_range(-1.0..1.0))
            .collect();
        let advantages = Tensor::from_vec(advantages, (options.train_batch, 1), device)?;
        let mask = Tensor::ones(
            (options.train_batch, options.train_tokens - 1),
            DType::F32,
            device,
        )?;
        let inputs = GrpoInputs {
            reference: &reference,
            advantages: &advantages,
            mask: &mask,
        };
        let runs = repeated(options.repeats, progress, || {
            time_grpo_step(&model, &mut optimizer, &batch, &inputs)
        })?;
        (figures.grpo_step_ms, figures.grpo_step_cpu_ms) = step_milliseconds(&runs);
    }
    progress(BenchProgress::End);
    let setup = ModelBenchSetup {
        parameters: config.parameter_count(),
        threads: candle_core::utils::get_num_threads(),
        dtype: format!("{:?}", model.dtype()),
        kernels: format!("{kernels:?}"),
        fused_optimizer: !options.unfused_optimizer,
        train_tokens: options.train_batch * options.train_tokens,
        isa: kernels.isa.to_string(),
    };
    Ok(ModelBenchReport {
        setup,
        decode,
        ragged,
        train_step_ms: figures.train_step_ms,
        train_step_cpu_ms: figures.train_step_cpu_ms,
        grpo_step_ms: figures.grpo_step_ms,
        grpo_step_cpu_ms: figures.grpo_step_cpu_ms,
        figures,
    })
}
