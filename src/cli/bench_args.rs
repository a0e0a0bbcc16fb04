//! The flags of `rollscope bench …` for the model-side benchmarks (model, train, GRPO,
//! rollout) and the options they make; the store-side ones are in `bench_store_args`.

use super::model::RuntimeArgs;
use crate::bench::{
    GrpoBenchOptions, ModelBenchOptions, ModelFigure, RolloutBenchOptions, Runtime,
    TrainBenchOptions,
};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

pub(super) fn runtime(args: &RuntimeArgs) -> Runtime {
    Runtime {
        device: args.device,
        dtype: args.dtype,
    }
}

/// Which figures to measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Figure {
    /// Greedy decoding at batch 8, 1 and 64.
    Decode,
    /// Greedy decoding at the rollout shape: 128 sequences, 64 in flight, ragged lengths.
    Ragged,
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
    #[arg(long, default_value_t = ModelBenchOptions::default().prompt_tokens)]
    pub prompt_tokens: usize,
    /// New tokens per sequence in the decoding runs.
    #[arg(long, default_value_t = ModelBenchOptions::default().new_tokens)]
    pub new_tokens: usize,
    /// Sequences of the training and GRPO steps.
    #[arg(long, default_value_t = ModelBenchOptions::default().train_batch)]
    pub train_batch: usize,
    /// Tokens per sequence of the training and GRPO steps.
    #[arg(long, default_value_t = ModelBenchOptions::default().train_tokens)]
    pub train_tokens: usize,
    /// Timed repetitions (the median is reported) after one warm-up.
    #[arg(long, default_value_t = ModelBenchOptions::default().repeats)]
    pub repeats: usize,
    /// Figures to measure [default: all].
    #[arg(long, value_enum, value_delimiter = ',')]
    pub only: Vec<Figure>,
    /// Plain candle ops everywhere instead of the fused kernels.
    #[arg(long)]
    pub reference: bool,
    /// Fused kernels to switch off (flat_linears, norm, attention, swiglu, mlp, log_probs,
    /// decode, shared_prefix).
    #[arg(long, value_delimiter = ',')]
    pub without: Vec<String>,
    /// AdamW with tensor ops instead of the fused in-place update.
    #[arg(long)]
    pub unfused_optimizer: bool,
    /// Device and dtype.
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

impl BenchModelArgs {
    /// The benchmark options these flags ask for.
    pub fn options(&self) -> ModelBenchOptions {
        let figure = |figure: &Figure| match figure {
            Figure::Decode => ModelFigure::Decode,
            Figure::Ragged => ModelFigure::Ragged,
            Figure::Train => ModelFigure::Train,
            Figure::Grpo => ModelFigure::Grpo,
        };
        ModelBenchOptions {
            model: self.model.clone(),
            prompt_tokens: self.prompt_tokens,
            new_tokens: self.new_tokens,
            train_batch: self.train_batch,
            train_tokens: self.train_tokens,
            repeats: self.repeats,
            only: self.only.iter().map(figure).collect(),
            reference: self.reference,
            without: self.without.clone(),
            unfused_optimizer: self.unfused_optimizer,
            runtime: runtime(&self.runtime),
        }
    }
}

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

impl BenchTrainArgs {
    /// The benchmark options these flags ask for.
    pub fn options(&self) -> TrainBenchOptions {
        TrainBenchOptions {
            model: self.model.clone(),
            batch: self.batch,
            tokens: self.tokens,
            beta: self.beta,
            lora_rank: self.lora_rank,
            repeats: self.repeats,
            runtime: runtime(&self.runtime),
        }
    }
}

/// Arguments of `rollscope bench grpo`.
#[derive(Debug, Args)]
pub struct BenchGrpoArgs {
    /// A model folder [default: the ~10M Qwen2 shape with random weights].
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// G: completions of the prompt.
    #[arg(long, default_value_t = GrpoBenchOptions::default().group)]
    pub group: usize,
    /// Prompt tokens.
    #[arg(long, default_value_t = GrpoBenchOptions::default().prompt)]
    pub prompt: usize,
    /// Tokens of every completion (sampled at temperature 1, no early stop).
    #[arg(long, default_value_t = GrpoBenchOptions::default().completion)]
    pub completion: usize,
    /// KL weight β.
    #[arg(long, default_value_t = GrpoBenchOptions::default().beta)]
    pub beta: f64,
    /// Timed steps (the median is reported) after one warm-up.
    #[arg(long, default_value_t = GrpoBenchOptions::default().steps)]
    pub steps: usize,
    /// A Python with torch, transformers and trl: run TRL's GRPOTrainer on the same
    /// configuration right after, and compare.
    #[arg(long, value_name = "PYTHON")]
    pub trl: Option<PathBuf>,
    /// Device and dtype.
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

impl BenchGrpoArgs {
    /// The benchmark options these flags ask for.
    pub fn options(&self) -> GrpoBenchOptions {
        GrpoBenchOptions {
            model: self.model.clone(),
            group: self.group,
            prompt: self.prompt,
            completion: self.completion,
            beta: self.beta,
            steps: self.steps,
            trl: self.trl.clone(),
            runtime: runtime(&self.runtime),
        }
    }
}

/// Arguments of `rollscope bench rollout`.
#[derive(Debug, Args)]
pub struct BenchRolloutArgs {
    /// Rollouts per run.
    #[arg(long, default_value_t = 64)]
    pub rollouts: usize,
    /// Turns per rollout that end in a tool call.
    #[arg(long, default_value_t = 4)]
    pub turns: usize,
    /// How long the tool takes, in milliseconds.
    #[arg(long, default_value_t = 50)]
    pub tool_ms: u64,
    /// SFT steps at most to teach the model the turn (it stops once it has learned it).
    #[arg(long, default_value_t = 300)]
    pub teach_steps: usize,
    /// Timed repetitions of each run (the median is reported).
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
    /// Device and dtype.
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

impl BenchRolloutArgs {
    /// The benchmark options these flags ask for.
    pub fn options(&self) -> RolloutBenchOptions {
        RolloutBenchOptions {
            rollouts: self.rollouts,
            turns: self.turns,
            tool_ms: self.tool_ms,
            teach_steps: self.teach_steps,
            repeats: self.repeats,
            runtime: runtime(&self.runtime),
        }
    }
}
