//! Every figure of the performance table in one run: the store at scale, the model's steps
//! and decoding side by side with PyTorch / transformers (`examples/bench_pytorch.py`, in
//! interleaved pairs, medians of pairwise ratios), and an end-to-end GRPO step beside TRL's
//! `GRPOTrainer`.

use super::grpo::{GrpoBenchOptions, GrpoBenchReport, bench_grpo};
use super::model::{ModelBenchOptions, bench_model};
use super::store::{StoreBenchOptions, StoreBenchReport, bench_store};
use super::{BenchProgress, quantiles, run_reference_script};
use anyhow::Context;
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What `bench all` runs.
#[derive(Clone, Debug)]
pub struct AllBenchOptions {
    /// A Python with torch, transformers and trl for the reference runs [none: ours only].
    pub python: Option<PathBuf>,
    /// Interleaved pairs of model benchmark runs (ours, then theirs; theirs first every
    /// other pair).
    pub pairs: usize,
    /// Timed repetitions of every figure in each run.
    pub repeats: usize,
    /// A model folder [default: the ~10M Qwen2 benchmark shape with random weights].
    pub model: Option<PathBuf>,
    /// Trajectories of the store benchmark.
    pub store_count: u64,
}

/// A figure of the model benchmark compared with the reference.
#[derive(Clone, Copy, Debug)]
struct Compared {
    key: &'static str,
    label: &'static str,
    unit: &'static str,
    higher_is_better: bool,
}

/// The compared figures, by the names both benchmarks print.
const COMPARED: [Compared; 6] = [
    Compared {
        key: "train_step_ms",
        label: "training step 8×128 (forward + backward + AdamW)",
        unit: "ms",
        higher_is_better: false,
    },
    Compared {
        key: "grpo_step_ms",
        label: "GRPO update 8×128 (reference, policy, loss, backward, AdamW)",
        unit: "ms",
        higher_is_better: false,
    },
    Compared {
        key: "decode_batch8_tps",
        label: "greedy decode, batch 8",
        unit: "tokens/s",
        higher_is_better: true,
    },
    Compared {
        key: "decode_batch1_tps",
        label: "greedy decode, batch 1",
        unit: "tokens/s",
        higher_is_better: true,
    },
    Compared {
        key: "decode_batch64_tps",
        label: "greedy decode, batch 64",
        unit: "tokens/s",
        higher_is_better: true,
    },
    Compared {
        key: "decode_ragged64_tps",
        label: "greedy decode, rollout shape (128 sequences, 64 in flight)",
        unit: "tokens/s",
        higher_is_better: true,
    },
];

/// One row of the table.
#[derive(Clone, Debug, Serialize)]
pub struct FigureRow {
    /// Its name in both benchmarks' JSON (`train_step_ms`, `decode_batch8_tps`, …).
    pub key: String,
    /// What was measured.
    pub figure: String,
    /// Unit of the two values.
    pub unit: String,
    /// Our median.
    pub rollscope: f64,
    /// The reference's median, if it ran.
    pub reference: Option<f64>,
    /// The median of the pairwise ratios of our time to the reference's (below 1: faster).
    pub time_ratio: Option<f64>,
    /// Each pair's ratio, in order.
    pub pair_ratios: Vec<f64>,
}

/// The figures of `bench all`.
#[derive(Debug, Clone, Serialize)]
pub struct AllBenchReport {
    /// The store benchmark, run first so that its peak memory is its own.
    pub store: StoreBenchReport,
    /// The model figures beside PyTorch's.
    pub model: Vec<FigureRow>,
    /// The end-to-end GRPO step, with TRL's beside it when a Python was given.
    pub grpo: GrpoBenchReport,
    /// Interleaved pairs of the model figures.
    pub pairs: usize,
}

/// Runs the store, model and GRPO benchmarks, the reference beside each where a Python is
/// given.
pub fn bench_all(
    options: &AllBenchOptions,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<AllBenchReport> {
    anyhow::ensure!(
        options.pairs > 0 && options.repeats > 0,
        "--pairs and --repeats must be positive"
    );
    anyhow::ensure!(
        options.model.is_none() || options.python.is_none(),
        "--model with --python: the reference scripts run the benchmark shape only, so the \
         ratios would compare two models; leave out --model to compare, or --python to \
         measure the folder alone"
    );
    if let Some(python) = &options.python {
        progress(BenchProgress::waiting(format!(
            "checking {} for torch, transformers and trl",
            python.display()
        )));
        let checked = check_python(python);
        progress(BenchProgress::End);
        checked?;
    }
    let store = bench_store(
        &StoreBenchOptions {
            count: options.store_count,
            ..StoreBenchOptions::default()
        },
        progress,
    )?;
    let model_options = ModelBenchOptions {
        model: options.model.clone(),
        repeats: options.repeats,
        ..ModelBenchOptions::default()
    };
    let mut runs: Vec<(Value, Option<Value>)> = Vec::with_capacity(options.pairs);
    for pair in 0..options.pairs {
        let theirs_first = pair % 2 == 1;
        let mut theirs = None;
        if theirs_first && let Some(python) = &options.python {
            theirs = Some(run_pytorch(python, options.repeats, progress)?);
        }
        let ours = serde_json::to_value(bench_model(&model_options, progress)?.figures)?;
        if !theirs_first && let Some(python) = &options.python {
            theirs = Some(run_pytorch(python, options.repeats, progress)?);
        }
        runs.push((ours, theirs));
    }
    let model = COMPARED
        .iter()
        .map(|compared| row(compared, &runs))
        .collect::<anyhow::Result<_>>()?;
    let grpo = bench_grpo(
        &GrpoBenchOptions {
            model: options.model.clone(),
            steps: options.repeats,
            trl: options.python.clone(),
            ..GrpoBenchOptions::default()
        },
        progress,
    )?;
    Ok(AllBenchReport {
        store,
        model,
        grpo,
        pairs: options.pairs,
    })
}

/// The row of one figure over the runs.
fn row(compared: &Compared, runs: &[(Value, Option<Value>)]) -> anyhow::Result<FigureRow> {
    let value = |figures: &Value, side: &str| {
        figures[compared.key]
            .as_f64()
            .with_context(|| format!("{side} reported no `{}`", compared.key))
    };
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    let mut ratios = Vec::new();
    for (our_figures, their_figures) in runs {
        let our = value(our_figures, "rollscope")?;
        ours.push(our);
        if let Some(their_figures) = their_figures {
            let their = value(their_figures, "the reference")?;
            theirs.push(their);
            ratios.push(if compared.higher_is_better {
                their / our
            } else {
                our / their
            });
        }
    }
    let median =
        |values: &[f64]| (!values.is_empty()).then(|| quantiles::median(&mut values.to_vec()));
    Ok(FigureRow {
        key: compared.key.into(),
        figure: compared.label.into(),
        unit: compared.unit.into(),
        rollscope: median(&ours).unwrap_or(f64::NAN),
        reference: median(&theirs),
        time_ratio: median(&ratios),
        pair_ratios: ratios,
    })
}

/// Fails early, with what to do, when `python` cannot import what the references need.
fn check_python(python: &Path) -> anyhow::Result<()> {
    let output = std::process::Command::new(python)
        .args(["-c", "import torch, transformers, trl"])
        .output()
        .map_err(|error| {
            anyhow::anyhow!("--python {}: cannot run it: {error}", python.display())
        })?;
    anyhow::ensure!(
        output.status.success(),
        "--python {}: {}; install them with `{0} -m pip install torch transformers trl`",
        python.display(),
        String::from_utf8_lossy(&output.stderr)
            .lines()
            .last()
            .unwrap_or("cannot import torch, transformers and trl")
    );
    Ok(())
}

/// Runs `examples/bench_pytorch.py` alone with `python` and reads the JSON line it prints.
fn run_pytorch(
    python: &Path,
    repeats: usize,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<Value> {
    run_reference_script(
        python,
        "bench_pytorch.py",
        &["--repeats".into(), repeats.to_string()],
        "PyTorch / transformers".into(),
        progress,
    )
}

#[cfg(test)]
mod tests {
    use super::{COMPARED, row};
    use serde_json::json;

    #[test]
    fn ratios_are_our_time_over_theirs_pair_by_pair() {
        let runs = vec![
            (
                json!({"train_step_ms": 300.0, "decode_batch8_tps": 2000.0}),
                Some(json!({"train_step_ms": 200.0, "decode_batch8_tps": 1000.0})),
            ),
            (
                json!({"train_step_ms": 500.0, "decode_batch8_tps": 1000.0}),
                Some(json!({"train_step_ms": 250.0, "decode_batch8_tps": 1000.0})),
            ),
            (
                json!({"train_step_ms": 400.0, "decode_batch8_tps": 4000.0}),
                Some(json!({"train_step_ms": 400.0, "decode_batch8_tps": 1000.0})),
            ),
        ];
        let step = row(&COMPARED[0], &runs).unwrap();
        assert_eq!(step.pair_ratios, vec![1.5, 2.0, 1.0]);
        assert_eq!(
            (step.rollscope, step.reference, step.time_ratio),
            (400.0, Some(250.0), Some(1.5))
        );
        let decode = row(&COMPARED[2], &runs).unwrap();
        assert_eq!(decode.pair_ratios, vec![0.5, 1.0, 0.25]);
        assert_eq!(decode.time_ratio, Some(0.5));
        assert_eq!(decode.rollscope, 2000.0);
        let alone: Vec<_> = runs.into_iter().map(|(ours, _)| (ours, None)).collect();
        let step = row(&COMPARED[0], &alone).unwrap();
        assert_eq!((step.reference, step.time_ratio), (None, None));
        assert!(step.pair_ratios.is_empty());
        let missing = row(&COMPARED[1], &alone).unwrap_err().to_string();
        assert!(missing.contains("grpo_step_ms"), "{missing}");
    }
}
