//! Benchmarks: each takes a plain options value and a progress sink, measures, and returns
//! a report of its figures; the command line (`rollscope bench …`) parses the flags and
//! prints the report.

pub mod all;
pub mod export;
pub mod follow;
pub mod grpo;
pub mod import;
pub mod model;
pub mod prefix;
pub mod quantiles;
pub mod ragged;
pub mod rollout;
mod rollout_run;
pub mod search;
pub mod session;
mod session_soak;
pub mod steps;
pub mod store;
pub mod train;
pub mod transcript;
pub mod tui;
pub mod update;

pub use all::{AllBenchOptions, AllBenchReport, bench_all};
pub use export::{ExportBenchOptions, ExportBenchReport, bench_export};
pub use follow::{FollowBenchOptions, FollowBenchReport, bench_follow};
pub use grpo::{GrpoBenchOptions, GrpoBenchReport, bench_grpo};
pub use import::{ImportBenchOptions, ImportBenchReport, ImportFigure, bench_import};
pub use model::{ModelBenchOptions, ModelBenchReport, ModelFigure, bench_model};
pub use prefix::{PrefixBenchOptions, PrefixBenchReport, bench_prefix};
pub use rollout::{RolloutBenchOptions, RolloutBenchReport, bench_rollout};
pub use search::{SearchBenchOptions, SearchBenchReport, bench_search};
pub use session::{SessionBenchOptions, SessionBenchReport, bench_session};
pub use session_soak::SoakReport;
pub use store::{StoreBenchOptions, StoreBenchReport, bench_store};
pub use train::{TrainBenchOptions, TrainBenchReport, bench_train};
pub use transcript::{TranscriptBenchOptions, TranscriptBenchReport, bench_transcript};
pub use tui::{TuiBenchOptions, TuiBenchReport, bench_tui};
pub use update::{UpdateBenchOptions, UpdateBenchReport, bench_update};

use crate::formats::gsm8k;
use crate::model::embedded::{self, EmbeddedSpec};
use crate::model::{DeviceChoice, LanguageModel, LoadOptions};
use anyhow::Context;
use candle_core::DType;
use rand::Rng;
use rand::rngs::StdRng;
use std::path::Path;

/// What a benchmark reports while it runs, for a progress display.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BenchProgress {
    /// A stage starts: `total` units of work, or an amount not known (`None`). Stages nest.
    Begin {
        /// What the stage does.
        label: String,
        /// Units of work in the stage, if known.
        total: Option<u64>,
    },
    /// This many more units of the innermost running stage are done.
    Advance(u64),
    /// The innermost running stage's label changes.
    Relabel(String),
    /// The innermost running stage ends.
    End,
    /// A line of commentary for the reader.
    Note(String),
}

impl BenchProgress {
    /// A stage of `total` units.
    pub fn counted(label: impl Into<String>, total: u64) -> Self {
        Self::Begin {
            label: label.into(),
            total: Some(total),
        }
    }

    /// A stage of unknown length.
    pub fn waiting(label: impl Into<String>) -> Self {
        Self::Begin {
            label: label.into(),
            total: None,
        }
    }
}

/// The GRPO update the benchmarks time: one iteration at temperature 1, KL weight `beta`.
pub fn one_update(beta: f64) -> crate::train::GrpoConfig {
    crate::train::GrpoConfig {
        objective: crate::train::loss::ObjectiveConfig {
            beta,
            ..crate::train::loss::ObjectiveConfig::default()
        },
        iterations: 1,
        temperature: 1.0,
        ..crate::train::GrpoConfig::default()
    }
}

/// Where a benchmark's model runs: the device and the compute dtype.
#[derive(Clone, Copy, Debug, Default)]
pub struct Runtime {
    /// The device.
    pub device: DeviceChoice,
    /// The compute dtype [default: f32 on the CPU, the stored one on a GPU].
    pub dtype: Option<DType>,
}

impl Runtime {
    /// Opens the device and makes the load options.
    pub fn load_options(&self) -> anyhow::Result<LoadOptions> {
        Ok(LoadOptions {
            device: self.device.open()?,
            dtype: self.dtype,
        })
    }
}

/// Peak resident memory of this process so far, in bytes (Linux), if known.
pub fn peak_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Loads the model folder `dir`, reporting the load as a stage.
pub fn load_model(
    dir: &Path,
    runtime: &Runtime,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<LanguageModel> {
    anyhow::ensure!(
        dir.is_dir(),
        "no model folder {}: run `rollscope model init` (the embedded default) or pass --model DIR",
        dir.display()
    );
    progress(BenchProgress::waiting(format!("loading {}", dir.display())));
    let model = runtime.load_options().and_then(|options| {
        LanguageModel::load(dir, &options)
            .with_context(|| format!("cannot load model {}", dir.display()))
    });
    progress(BenchProgress::End);
    model
}

/// The model folder `model`, or the ~10M-parameter Qwen2 benchmark shape with random weights
/// and a tokenizer trained on the shipped GSM8K train split.
pub fn bench_language_model(
    model: Option<&Path>,
    runtime: &Runtime,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<LanguageModel> {
    if let Some(dir) = model {
        return load_model(dir, runtime, progress);
    }
    let corpus: Vec<String> = gsm8k::rows(gsm8k::TRAIN, "examples/gsm8k/train.jsonl")
        .map_err(anyhow::Error::msg)?
        .into_iter()
        .map(|(_, row)| format!("{}\n{}", row.question, row.answer))
        .collect();
    Ok(embedded::build(
        &EmbeddedSpec::bench(),
        &corpus,
        &runtime.load_options()?,
    )?)
}

/// `count` random token ids of a vocabulary of `vocab`, above the first 16 ids.
pub fn random_tokens(rng: &mut StdRng, count: usize, vocab: usize) -> Vec<u32> {
    (0..count)
        .map(|_| rng.random_range(16.min(vocab as u32 - 1)..vocab as u32))
        .collect()
}

/// Resident and peak resident memory of a process, from `/proc/PID/status`.
fn process_memory(pid: u32) -> (Option<u64>, Option<u64>) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next()?.parse::<u64>().ok())
            .map(|kib| kib * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Runs the reference script `examples/NAME` with `python` and `args`, showing `label` while
/// it runs, and reads the last JSON line it prints.
pub(crate) fn run_reference_script(
    python: &Path,
    name: &str,
    args: &[String],
    label: String,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<serde_json::Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name);
    progress(BenchProgress::waiting(label));
    let output = std::process::Command::new(python)
        .arg(&script)
        .args(args)
        .output();
    progress(BenchProgress::End);
    let output =
        output.map_err(|error| anyhow::anyhow!("cannot run {}: {error}", python.display()))?;
    anyhow::ensure!(
        output.status.success(),
        "{} {} failed: {}",
        python.display(),
        script.display(),
        String::from_utf8_lossy(&output.stderr)
            .lines()
            .last()
            .unwrap_or("")
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .rev()
        .find(|line| line.starts_with('{'))
        .ok_or_else(|| anyhow::anyhow!("{} printed no JSON line", script.display()))?;
    Ok(serde_json::from_str(line)?)
}
