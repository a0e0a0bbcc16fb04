//! The flags of `rollscope bench …` for the store-side benchmarks (store, search, session,
//! follow, import, export, TUI) and the options they make.

use crate::bench::{
    ExportBenchOptions, FollowBenchOptions, ImportBenchOptions, SearchBenchOptions,
    SessionBenchOptions, StoreBenchOptions, TuiBenchOptions,
};
use clap::Args;
use std::path::PathBuf;

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
    /// The benchmark options these flags ask for; this executable serves the server rebuild.
    pub fn options(&self) -> anyhow::Result<SearchBenchOptions> {
        Ok(SearchBenchOptions {
            store: StoreBenchOptions {
                count: self.count,
                trace_tokens: self.trace_tokens,
            },
            repeats: self.repeats,
            pairs: self.pairs,
            server: Some(std::env::current_exe()?),
        })
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
    /// Trials in the generated Harbor job folder of ATIF trajectories (20 steps each).
    #[arg(long, default_value_t = 10_000)]
    pub atif_trials: usize,
}

impl ImportBenchArgs {
    /// The benchmark options these flags ask for (the importer is this program).
    pub fn options(&self) -> anyhow::Result<ImportBenchOptions> {
        Ok(ImportBenchOptions {
            samples: self.samples,
            sample_bytes: self.sample_bytes,
            parquet_rows: self.parquet_rows,
            atif_trials: self.atif_trials,
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
