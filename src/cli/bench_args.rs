//! The flags of `rollscope bench …` and the benchmark options they make.

use super::model::RuntimeArgs;
use crate::bench::{
    ExportBenchOptions, FollowBenchOptions, GrpoBenchOptions, ImportBenchOptions,
    ModelBenchOptions, ModelFigure, RolloutBenchOptions, Runtime, SearchBenchOptions,
    SessionBenchOptions, StoreBenchOptions, TrainBenchOptions, TuiBenchOptions,
};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

pub(super) fn runtime(args: &RuntimeArgs) -> Runtime {
    Runtime {
        device: args.device,
        dtype: args.dtype,
    }
}

/// Arguments of `rollscope bench store`.
#[derive(Debug, Args)]
pub struct StoreBenchArgs {
    /// Trajectories to generate (6–12 messages each; every other one with a token trace).
    #[arg(long, default_value_t = StoreBenchOptions::default().count)]
    pub count: u64,
    /// Tokens per token trace.
    #[arg(long, default_value_t = StoreBenchOptions::default().trace_tokens)]
    pub trace_tokens: usize,
}

impl StoreBenchArgs {
    /// The benchmark options these flags ask for.
    pub fn options(&self) -> StoreBenchOptions {
        StoreBenchOptions {
            count: self.count,
            trace_tokens: self.trace_tokens,
        }
    }
}

/// Arguments of `rollscope bench search`.
#[derive(Debug, Args)]
pub struct SearchBenchArgs {
    /// Trajectories to generate (as `bench store` does: every other one with a token trace).
    #[arg(long, default_value_t = 100_000)]
    pub count: u64,
    /// Tokens per token trace.
    #[arg(long, default_value_t = 1000)]
    pub trace_tokens: usize,
    /// Times each query runs, for its p50 and p95.
    #[arg(long, default_value_t = 100)]
    pub repeats: usize,
    /// Import pairs (index on, index off, alternating which goes first).
    #[arg(long, default_value_t = 3)]
    pub pairs: usize,
}

impl SearchBenchArgs {
    /// The benchmark options these flags ask for.
    pub fn options(&self) -> SearchBenchOptions {
        SearchBenchOptions {
            store: StoreBenchOptions {
                count: self.count,
                trace_tokens: self.trace_tokens,
            },
            repeats: self.repeats,
            pairs: self.pairs,
        }
    }
}

/// Arguments of `rollscope bench session`.
#[derive(Debug, Args)]
pub struct SessionBenchArgs {
    /// Trajectories in the generated store (two copies: one in-process, one served).
    #[arg(long, default_value_t = 2000)]
    pub count: u64,
    /// Interleaved pairs per operation, for the median of the ratios.
    #[arg(long, default_value_t = 200)]
    pub pairs: usize,
    /// Writes timed from one client until another client's engine sees them.
    #[arg(long, default_value_t = 40)]
    pub latency_samples: usize,
    /// Then minutes of three clients listing, reading and labelling beside a training run
    /// (0: no soak); every acknowledged label is checked at the end.
    #[arg(long, default_value_t = 0.0)]
    pub soak_minutes: f64,
}

impl SessionBenchArgs {
    /// The benchmark options these flags ask for (the server is this program).
    pub fn options(&self) -> anyhow::Result<SessionBenchOptions> {
        Ok(SessionBenchOptions {
            count: self.count,
            pairs: self.pairs,
            latency_samples: self.latency_samples,
            executable: std::env::current_exe()?,
            soak_minutes: self.soak_minutes,
        })
    }
}

/// Arguments of `rollscope bench follow`.
#[derive(Debug, Args)]
pub struct FollowBenchArgs {
    /// Writes timed.
    #[arg(long, default_value_t = 40)]
    pub samples: usize,
    /// Seconds between the follower's polls (`import --follow --every`).
    #[arg(long, default_value_t = 0.5)]
    pub every: f64,
    /// Add copies of this TRL completions parquet file as new step files instead of
    /// appending JSONL lines (e.g. tests/data/formats/trl/completions/completions_00001.parquet).
    #[arg(long)]
    pub parquet: Option<PathBuf>,
}

impl FollowBenchArgs {
    /// The benchmark options these flags ask for (the follower is this program).
    pub fn options(&self) -> anyhow::Result<FollowBenchOptions> {
        anyhow::ensure!(self.every > 0.0, "--every must be above 0 seconds");
        Ok(FollowBenchOptions {
            samples: self.samples,
            every: self.every,
            parquet: self.parquet.clone(),
            executable: std::env::current_exe()?,
        })
    }
}

/// Arguments of `rollscope bench import`.
#[derive(Debug, Args)]
pub struct ImportBenchArgs {
    /// Samples in the generated Inspect `.eval` log.
    #[arg(long, default_value_t = 100_000)]
    pub samples: usize,
    /// Bytes of JSON per sample, roughly (the defaults make a ~1 GiB log).
    #[arg(long, default_value_t = 11_700)]
    pub sample_bytes: usize,
    /// Rows of the generated TRL completions parquet file.
    #[arg(long, default_value_t = 100_000)]
    pub parquet_rows: usize,
}

impl ImportBenchArgs {
    /// The benchmark options these flags ask for (the importer is this program).
    pub fn options(&self) -> anyhow::Result<ImportBenchOptions> {
        Ok(ImportBenchOptions {
            samples: self.samples,
            sample_bytes: self.sample_bytes,
            parquet_rows: self.parquet_rows,
            executable: std::env::current_exe()?,
        })
    }
}

/// Arguments of `rollscope bench export`.
#[derive(Debug, Args)]
pub struct ExportBenchArgs {
    /// Trajectories in the benchmark store.
    #[arg(long, default_value_t = 100_000)]
    pub count: u64,
    /// Tokens per token trace (every other trajectory has one).
    #[arg(long, default_value_t = 1000)]
    pub trace_tokens: usize,
    /// Keep the benchmark store here and reuse it next time [default: a temporary folder].
    #[arg(long, value_name = "DIR")]
    pub store_root: Option<PathBuf>,
}

impl ExportBenchArgs {
    /// The benchmark options these flags ask for.
    pub fn options(&self) -> ExportBenchOptions {
        ExportBenchOptions {
            count: self.count,
            trace_tokens: self.trace_tokens,
            store_root: self.store_root.clone(),
        }
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
            portable: self.portable,
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

/// Arguments of `rollscope bench tui`.
#[derive(Debug, Args)]
pub struct TuiBenchArgs {
    /// Trajectories in the benchmark store.
    #[arg(long, default_value_t = 100_000)]
    pub count: u64,
    /// Sessions root of the benchmark store (made once, then reused) [default: the temp dir].
    #[arg(long, value_name = "DIR")]
    pub store_root: Option<PathBuf>,
    /// Frames drawn for the frame-time figures.
    #[arg(long, default_value_t = 200)]
    pub frames: usize,
    /// Pages scrolled for the paging figures.
    #[arg(long, default_value_t = 200)]
    pub pages: usize,
}

impl TuiBenchArgs {
    /// The benchmark options these flags ask for; this executable makes the store.
    pub fn options(&self) -> anyhow::Result<TuiBenchOptions> {
        Ok(TuiBenchOptions {
            count: self.count,
            store_root: self.store_root.clone(),
            frames: self.frames,
            pages: self.pages,
            executable: std::env::current_exe()?,
        })
    }
}
