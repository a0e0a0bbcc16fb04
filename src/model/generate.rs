//! Whole-batch generation on top of the `Decoder`: stop tokens, stop strings and length
//! limits, for the CLI and for callers that need no tool calls.

use super::decoder::Decoder;
use super::error::Result;
use super::sampling::SamplingParams;
use super::tokenizer::ChatTokenizer;

/// When a generated run of tokens is finished.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StopCondition {
    /// Tokens that end generation (included in the output), e.g. `<|im_end|>`, `</tool_call>`.
    pub token_ids: Vec<u32>,
    /// Texts that end generation once the decoded output contains them.
    pub strings: Vec<String>,
}

/// Why generation of a sequence ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FinishReason {
    /// A stop token was generated (it is the last token).
    StopToken(u32),
    /// The output came to contain a stop string.
    StopString(String),
    /// `max_new_tokens` were generated.
    MaxTokens,
    /// The context window is full.
    ContextFull,
}

impl StopCondition {
    /// Whether `generated` (the tokens of this turn so far) should stop here.
    pub fn check(
        &self,
        tokenizer: &ChatTokenizer,
        generated: &[u32],
    ) -> Result<Option<FinishReason>> {
        let Some(&last) = generated.last() else {
            return Ok(None);
        };
        if self.token_ids.contains(&last) {
            return Ok(Some(FinishReason::StopToken(last)));
        }
        if self.strings.is_empty() {
            return Ok(None);
        }
        let window = self.strings.iter().map(String::len).max().unwrap_or(0) + 2;
        let tail = &generated[generated.len().saturating_sub(window)..];
        let text = tokenizer.decode(tail, false)?;
        Ok(self
            .strings
            .iter()
            .find(|stop| text.contains(stop.as_str()))
            .map(|stop| FinishReason::StopString(stop.clone())))
    }
}

/// What to generate.
#[derive(Clone, Debug, PartialEq)]
pub struct GenerateParams {
    /// How tokens are picked. Sequence `i` of a batch is seeded with `seed + i`.
    pub sampling: SamplingParams,
    /// The most tokens to generate per sequence.
    pub max_new_tokens: usize,
    /// When to stop early.
    pub stop: StopCondition,
}

/// One generated continuation.
#[derive(Clone, Debug, PartialEq)]
pub struct Generation {
    /// The new tokens (a stop token included).
    pub tokens: Vec<u32>,
    /// The log-prob of each new token (see `logprobs` for the convention).
    pub logprobs: Vec<f32>,
    /// The entropy of the distribution each token was drawn from.
    pub entropies: Vec<f32>,
    /// Why it ended.
    pub finish: FinishReason,
}

/// Generates a continuation of every prompt, stepping all unfinished sequences together;
/// `progress` is called with the number of tokens generated in each step.
pub fn generate(
    decoder: &mut Decoder,
    tokenizer: &ChatTokenizer,
    prompts: &[Vec<u32>],
    params: &GenerateParams,
    progress: &mut dyn FnMut(usize),
) -> Result<Vec<Generation>> {
    let mut ids = Vec::with_capacity(prompts.len());
    for (index, prompt) in prompts.iter().enumerate() {
        let sampling = params
            .sampling
            .with_seed(params.sampling.seed.wrapping_add(index as u64));
        ids.push(decoder.add_sequence(prompt, sampling)?);
    }
    let mut outputs: Vec<Generation> = prompts
        .iter()
        .map(|_| Generation {
            tokens: Vec::new(),
            logprobs: Vec::new(),
            entropies: Vec::new(),
            finish: FinishReason::MaxTokens,
        })
        .collect();
    let mut active: Vec<usize> = (0..prompts.len()).collect();
    while !active.is_empty() {
        let mut stepping = Vec::with_capacity(active.len());
        for &index in &active {
            if outputs[index].tokens.len() >= params.max_new_tokens {
                outputs[index].finish = FinishReason::MaxTokens;
            } else if decoder.room(ids[index])? == 0 {
                outputs[index].finish = FinishReason::ContextFull;
            } else {
                stepping.push(index);
            }
        }
        if stepping.is_empty() {
            break;
        }
        let step_ids: Vec<_> = stepping.iter().map(|&index| ids[index]).collect();
        let picked = decoder.step(&step_ids)?;
        progress(picked.len());
        active.clear();
        for (&index, token) in stepping.iter().zip(picked) {
            let output = &mut outputs[index];
            output.tokens.push(token.token);
            output.logprobs.push(token.logprob);
            output.entropies.push(token.entropy);
            match params.stop.check(tokenizer, &output.tokens)? {
                Some(reason) => output.finish = reason,
                None => active.push(index),
            }
        }
    }
    for id in ids {
        decoder.remove(id)?;
    }
    Ok(outputs)
}
