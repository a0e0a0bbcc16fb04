//! The prefix benchmark: N sampled continuations of one P-token prompt (a fork's N
//! children, a GRPO group), with the decoder's prefix cache (the prompt prefilled once and
//! copied) and without it (each continuation prefills its own), in interleaved pairs; the
//! sampled tokens must be the same both ways.

use super::quantiles;
use super::steps::{Timing, median, timed};
use super::{BenchProgress, Runtime, bench_language_model, random_tokens};
use crate::model::{DEFAULT_PREFIX_CACHE_TOKENS, Decoder, LanguageModel, SamplingParams};
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde::Serialize;
use std::path::PathBuf;

/// The shapes the prefix benchmark decodes.
#[derive(Clone, Debug)]
pub struct PrefixBenchOptions {
    /// A model folder [default: the ~10M Qwen2 benchmark shape with random weights].
    pub model: Option<PathBuf>,
    /// Prompt lengths, tokens.
    pub prefixes: Vec<usize>,
    /// Continuations of each prompt.
    pub continuations: usize,
    /// Tokens sampled per continuation.
    pub new_tokens: usize,
    /// Interleaved pairs per prompt length (the medians are reported).
    pub pairs: usize,
    /// Device and dtype.
    pub runtime: Runtime,
}

/// One prompt length's figures.
#[derive(Debug, Clone, Serialize)]
pub struct PrefixFigure {
    /// Prompt tokens.
    pub prefix: usize,
    /// Median milliseconds with the prefix cache.
    pub shared_ms: f64,
    /// Median milliseconds without it.
    pub separate_ms: f64,
    /// Median over pairs of shared over separate time.
    pub ratio: f64,
    /// Whether both ways sampled the same tokens in every pair.
    pub same_tokens: bool,
}

/// The figures of the prefix benchmark.
#[derive(Debug, Clone, Serialize)]
pub struct PrefixBenchReport {
    /// Continuations of each prompt.
    pub continuations: usize,
    /// Tokens sampled per continuation.
    pub new_tokens: usize,
    /// Per prompt length.
    pub prefixes: Vec<PrefixFigure>,
}

/// Times N continuations of each prompt length with and without the prefix cache.
pub fn bench_prefix(
    options: &PrefixBenchOptions,
    progress: &mut dyn FnMut(BenchProgress),
) -> anyhow::Result<PrefixBenchReport> {
    anyhow::ensure!(
        options.pairs > 0 && options.continuations > 0 && options.new_tokens > 0,
        "--pairs, -n and --new-tokens must be positive"
    );
    let model = bench_language_model(options.model.as_deref(), &options.runtime, progress)?;
    let vocab = model.config.vocab_size;
    let mut rng = StdRng::seed_from_u64(11);
    progress(BenchProgress::counted(
        "pairs",
        (options.prefixes.len() * options.pairs) as u64,
    ));
    let mut figures = Vec::new();
    for &prefix in &options.prefixes {
        let prompt = random_tokens(&mut rng, prefix, vocab);
        let (mut shared, mut separate, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        let mut same_tokens = true;
        for pair in 0..=options.pairs {
            let cached = |tokens| continue_prompt(&model, &prompt, options, tokens);
            let ((with_time, with_tokens), (without_time, without_tokens)) = if pair % 2 == 0 {
                let with_cache = cached(DEFAULT_PREFIX_CACHE_TOKENS)?;
                (with_cache, cached(0)?)
            } else {
                let without = cached(0)?;
                (cached(DEFAULT_PREFIX_CACHE_TOKENS)?, without)
            };
            same_tokens &= with_tokens == without_tokens;
            if pair > 0 {
                ratios.push(with_time.wall / without_time.wall.max(1e-12));
                shared.push(with_time);
                separate.push(without_time);
                progress(BenchProgress::Advance(1));
            }
        }
        figures.push(PrefixFigure {
            prefix,
            shared_ms: median(&shared, |t| t.wall) * 1e3,
            separate_ms: median(&separate, |t| t.wall) * 1e3,
            ratio: quantiles::median(&mut ratios),
            same_tokens,
        });
    }
    progress(BenchProgress::End);
    Ok(PrefixBenchReport {
        continuations: options.continuations,
        new_tokens: options.new_tokens,
        prefixes: figures,
    })
}

/// N seeded continuations of `prompt` decoded together, with a prefix cache of
/// `cache_tokens`: the time and every continuation's tokens.
fn continue_prompt(
    model: &LanguageModel,
    prompt: &[u32],
    options: &PrefixBenchOptions,
    cache_tokens: usize,
) -> anyhow::Result<(Timing, Vec<Vec<u32>>)> {
    let mut decoder = Decoder::new(model.network(), prompt.len() + options.new_tokens + 1)
        .with_prefix_cache(cache_tokens);
    let mut ids = Vec::new();
    let timing = timed(|| {
        for index in 0..options.continuations {
            ids.push(decoder.add_sequence(prompt, SamplingParams::sample(1.0, index as u64))?);
        }
        for _ in 0..options.new_tokens {
            decoder.step(&ids)?;
        }
        Ok(())
    })?;
    let tokens = ids
        .iter()
        .map(|&id| Ok(decoder.tokens(id)?.to_vec()))
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok((timing, tokens))
}
