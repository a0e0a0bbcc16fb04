//! The timed units of the model benchmarks (greedy decoding, a training step and a GRPO
//! step, each measured in wall-clock and process CPU seconds) and the helpers that repeat
//! them and take their medians.

use super::BenchProgress;
use crate::model::{
    Decoder, Network, Qwen, SamplingParams, TokenBatch, next_token_log_probs, on_pool,
};
use crate::train::loss::{ObjectiveConfig, ObjectiveInputs, UpdateTotals, grpo_objective};
use crate::train::optim::AdamW;
use candle_core::Tensor;
use std::time::Instant;

/// Wall-clock and process CPU seconds of one run. On a shared machine the CPU time of a run
/// is the better estimate of its uncontended wall time.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// Elapsed seconds.
    pub wall: f64,
    /// CPU seconds of every thread of the process.
    pub cpu: f64,
}

/// The median of one figure of the runs.
pub fn median(runs: &[Timing], figure: impl Fn(&Timing) -> f64) -> f64 {
    let mut values: Vec<f64> = runs.iter().map(figure).collect();
    super::quantiles::median(&mut values)
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
pub fn timed(work: impl FnOnce() -> anyhow::Result<()>) -> anyhow::Result<Timing> {
    let (wall, cpu) = (Instant::now(), process_cpu_seconds());
    work()?;
    Ok(Timing {
        wall: wall.elapsed().as_secs_f64(),
        cpu: process_cpu_seconds() - cpu,
    })
}

/// Generates `new_tokens` greedy tokens after each prompt (prefill included).
pub fn time_decode(
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
pub fn time_train_step(
    model: &Qwen,
    optimizer: &mut AdamW,
    batch: &TokenBatch,
) -> anyhow::Result<Timing> {
    timed(|| {
        on_pool(|| {
            let loss = next_token_log_probs(model, batch, 1.0)?.mean_all()?.neg()?;
            optimizer.step(&loss.backward()?, 1e-4)?;
            Ok(())
        })
    })
}

/// What a GRPO step needs besides the policy: the frozen reference and the batch's
/// advantages `[B, 1]` and loss mask `[B, T-1]`.
pub struct GrpoInputs<'a> {
    /// The frozen reference policy (detached).
    pub reference: &'a Qwen,
    /// Per-sample advantages.
    pub advantages: &'a Tensor,
    /// 1 on the tokens that count.
    pub mask: &'a Tensor,
}

/// One GRPO step as TRL runs it for one iteration per batch: reference log-probs (no
/// gradient), policy log-probs, the clipped objective with a k3 KL (β = 0.04) against the
/// detached policy log-probs as the behaviour policy, backward, AdamW.
pub fn time_grpo_step(
    model: &Qwen,
    optimizer: &mut AdamW,
    batch: &TokenBatch,
    inputs: &GrpoInputs<'_>,
) -> anyhow::Result<Timing> {
    timed(|| {
        on_pool(|| {
            let reference = next_token_log_probs(inputs.reference, batch, 1.0)?;
            let policy = next_token_log_probs(model, batch, 1.0)?;
            let behaviour = policy.detach();
            let objective = grpo_objective(
                &ObjectiveInputs {
                    logprobs: &policy,
                    old_logprobs: &behaviour,
                    ref_logprobs: Some(&reference),
                    mask: inputs.mask,
                    advantages: inputs.advantages,
                    totals: UpdateTotals::of_mask(inputs.mask)?,
                },
                &ObjectiveConfig {
                    beta: 0.04,
                    ..ObjectiveConfig::default()
                },
            )?;
            optimizer.step(&objective.loss.backward()?, 1e-4)?;
            Ok(())
        })
    })
}

/// Runs `measure` once to warm up and `repeats` times more.
pub fn repeated(
    repeats: usize,
    progress: &mut dyn FnMut(BenchProgress),
    mut measure: impl FnMut() -> anyhow::Result<Timing>,
) -> anyhow::Result<Vec<Timing>> {
    let mut runs = Vec::with_capacity(repeats);
    for run in 0..=repeats {
        let timing = measure()?;
        progress(BenchProgress::Advance(1));
        if run > 0 {
            runs.push(timing);
        }
    }
    Ok(runs)
}

/// Tokens per second of the median run: wall clock and process CPU.
pub fn per_second(runs: &[Timing], tokens: usize) -> (f64, f64) {
    let tokens = tokens as f64;
    (
        tokens / median(runs, |t| t.wall),
        tokens / median(runs, |t| t.cpu),
    )
}

/// Medians of the runs in milliseconds: wall clock and process CPU.
pub fn step_milliseconds(runs: &[Timing]) -> (Option<f64>, Option<f64>) {
    (
        Some(median(runs, |t| t.wall) * 1e3),
        Some(median(runs, |t| t.cpu) * 1e3),
    )
}
