//! `rollscope bench grpo`: one end-to-end GRPO step as TRL's `GRPOTrainer` makes it: G
//! sampled completions of one prompt (the prompt prefilled once and forked), a rule reward,
//! group advantages, the reference forward, the clipped objective with k3 KL, backward and
//! AdamW. With `--trl PYTHON`, TRL runs the same configuration in the same invocation
//! (`examples/bench_trl_grpo.py`) and both figures are printed side by side.

use super::Cli;
use super::bench_model::random_tokens;
use super::bench_steps::{Timing, median, timed};
use super::bench_train::bench_language_model;
use super::model::RuntimeArgs;
use crate::model::SamplingParams;
use crate::train::advantage::{AdvantageScale, group_advantages};
use crate::train::loss::ObjectiveConfig;
use crate::train::{Advantage, GrpoBatch, GrpoConfig, GrpoSample, Trainer, TrainerConfig};
use clap::Args;
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde_json::{Value, json};
use std::path::PathBuf;

/// Arguments of `rollscope bench grpo`.
#[derive(Debug, Args)]
pub struct BenchGrpoArgs {
    /// A model folder [default: the ~10M Qwen2 shape with random weights].
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// G: completions of the prompt.
    #[arg(long, default_value_t = 8)]
    pub group: usize,
    /// Prompt tokens.
    #[arg(long, default_value_t = 32)]
    pub prompt: usize,
    /// Tokens of every completion (sampled at temperature 1, no early stop).
    #[arg(long, default_value_t = 128)]
    pub completion: usize,
    /// KL weight β.
    #[arg(long, default_value_t = 0.04)]
    pub beta: f64,
    /// Timed steps (the median is reported) after one warm-up.
    #[arg(long, default_value_t = 5)]
    pub steps: usize,
    /// A Python with torch, transformers and trl: run TRL's GRPOTrainer on the same
    /// configuration right after, and compare.
    #[arg(long, value_name = "PYTHON")]
    pub trl: Option<PathBuf>,
    /// Device and dtype.
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

/// The timings of one step.
struct StepTimes {
    total: Timing,
    generate: f64,
    update: f64,
}

/// Runs the benchmark.
pub fn bench_grpo(cli: &Cli, args: &BenchGrpoArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.group >= 2 && args.prompt > 0 && args.completion > 0 && args.steps > 0,
        "--group must be at least 2, and --prompt, --completion and --steps positive"
    );
    let model = bench_language_model(args.model.as_deref(), &args.runtime)?;
    let vocab = model.config.vocab_size;
    let config = TrainerConfig {
        learning_rate: 1e-5,
        ..TrainerConfig::default()
    };
    let mut trainer = Trainer::new(model, config)?;
    let reference = trainer.reference_policy()?;
    let prompt = random_tokens(&mut StdRng::seed_from_u64(3), args.prompt, vocab);
    let grpo = GrpoConfig {
        objective: ObjectiveConfig {
            beta: args.beta,
            ..ObjectiveConfig::default()
        },
        iterations: 1,
        temperature: 1.0,
    };
    let bar = super::run_progress::count_bar(args.steps + 1, "grpo steps", cli.json);
    let mut steps = Vec::with_capacity(args.steps);
    for step in 0..=args.steps {
        let times = one_step(&mut trainer, &reference, &prompt, args, &grpo, step as u64)?;
        bar.inc(1);
        if step > 0 {
            steps.push(times);
        }
    }
    bar.finish_and_clear();
    let totals: Vec<Timing> = steps.iter().map(|s| s.total).collect();
    let wall = median(&totals, |t| t.wall) * 1e3;
    let cpu = median(&totals, |t| t.cpu) * 1e3;
    let middle = |pick: fn(&StepTimes) -> f64| {
        let mut values: Vec<f64> = steps.iter().map(pick).collect();
        values.sort_by(f64::total_cmp);
        values[values.len() / 2] * 1e3
    };
    let (generate, update) = (middle(|s| s.generate), middle(|s| s.update));
    let trl = match &args.trl {
        Some(python) => Some(run_trl(python, args.steps + 1)?),
        None => None,
    };
    let trl_ms = trl.as_ref().and_then(|v| v["trl_grpo_step_ms"].as_f64());
    if cli.json {
        let summary = json!({
            "group": args.group, "prompt": args.prompt, "completion": args.completion,
            "beta": args.beta, "grpo_step_ms": wall, "grpo_step_cpu_ms": cpu,
            "generate_ms": generate, "update_ms": update, "trl": trl,
            "ratio_to_trl": trl_ms.map(|t| wall / t),
        });
        println!("{summary}");
        return Ok(());
    }
    println!(
        "GRPO step, 1 prompt ({} tokens) × G = {} completions of {} tokens, β = {}: median of {} \
         steps",
        args.prompt, args.group, args.completion, args.beta, args.steps
    );
    println!(
        "  rollscope: {wall:.0} ms [{cpu:.0} ms CPU] (generation {generate:.0} ms, reward + \
         reference + update {update:.0} ms)"
    );
    if let Some(trl_ms) = trl_ms {
        let trl_cpu = trl
            .as_ref()
            .and_then(|v| v["trl_grpo_step_cpu_ms"].as_f64())
            .unwrap_or(f64::NAN);
        println!("  TRL GRPOTrainer: {trl_ms:.0} ms [{trl_cpu:.0} ms CPU]");
        println!("  ratio: {:.2}× TRL's step time", wall / trl_ms);
    }
    Ok(())
}

fn one_step(
    trainer: &mut Trainer,
    reference: &crate::model::Qwen,
    prompt: &[u32],
    args: &BenchGrpoArgs,
    grpo: &GrpoConfig,
    step: u64,
) -> anyhow::Result<StepTimes> {
    let mut generate = 0.0;
    let mut update = 0.0;
    let total = timed(|| {
        let started = std::time::Instant::now();
        let mut decoder = trainer.model().decoder();
        let sampling = |seed: u64| SamplingParams {
            temperature: 1.0,
            top_p: 1.0,
            top_k: 0,
            seed,
        };
        let parent = decoder.add_sequence(prompt, sampling(step))?;
        decoder.prefill(&[parent])?;
        let ids = (0..args.group)
            .map(|g| decoder.fork(parent, sampling(step * 1000 + g as u64)))
            .collect::<Result<Vec<_>, _>>()?;
        decoder.remove(parent)?;
        let mut logprobs = vec![vec![0f32; args.prompt]; args.group];
        for _ in 0..args.completion {
            for (row, sampled) in logprobs.iter_mut().zip(decoder.step(&ids)?) {
                row.push(sampled.logprob);
            }
        }
        let sequences = ids
            .iter()
            .map(|&id| decoder.remove(id))
            .collect::<Result<Vec<_>, _>>()?;
        generate = started.elapsed().as_secs_f64();
        let started = std::time::Instant::now();
        let rewards: Vec<f64> = sequences
            .iter()
            .map(|tokens| {
                let completion = &tokens[args.prompt..];
                completion.iter().filter(|&&t| t % 2 == 0).count() as f64 / completion.len() as f64
            })
            .collect();
        let advantages = group_advantages(&rewards, AdvantageScale::Unbiased, 1e-4).advantages;
        let mask: Vec<u8> = (0..args.prompt + args.completion)
            .map(|t| u8::from(t >= args.prompt))
            .collect();
        let samples: Vec<GrpoSample> = sequences
            .into_iter()
            .zip(logprobs)
            .zip(advantages)
            .map(|((token_ids, behaviour_logprobs), advantage)| GrpoSample {
                token_ids,
                loss_mask: mask.clone(),
                behaviour_logprobs,
                advantage: Advantage::Sample(advantage),
            })
            .collect();
        let batch = GrpoBatch::new(&samples, 0, trainer.model().device())?;
        trainer.grpo_update(&batch, Some(reference), grpo)?;
        update = started.elapsed().as_secs_f64();
        Ok(())
    })?;
    Ok(StepTimes {
        total,
        generate,
        update,
    })
}

/// Runs `examples/bench_trl_grpo.py` with `python` and reads its JSON line.
fn run_trl(python: &PathBuf, steps: usize) -> anyhow::Result<Value> {
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/bench_trl_grpo.py");
    let spinner = super::model::spinner(format!("TRL GRPOTrainer, {steps} steps"));
    let output = std::process::Command::new(python)
        .arg(&script)
        .args(["--steps", &steps.to_string()])
        .output();
    spinner.finish_and_clear();
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
        .ok_or_else(|| anyhow::anyhow!("TRL printed no JSON line"))?;
    Ok(serde_json::from_str(line)?)
}
