//! ATIF's per-step token ids as one token trace. Each agent step may carry the prompt it was
//! sent (`prompt_token_ids`, the history included), the tokens it generated
//! (`completion_token_ids`) and their `logprobs`. The trace is built step by step: a prompt
//! that continues the trace so far adds only its new tokens; one that does not (the context
//! was summarised or reset) starts a new stretch with the whole prompt; the completion
//! follows with loss mask 1 and its log-probs. Where each step's tokens lie is written on its
//! message (`TOKEN_SPAN`), so an export gives every step back exactly the ids it had. Log-probs
//! whose count differs from the completion's stay in the step's metrics as they were.

use super::fields::{Object, field};
use crate::trajectory::{Message, TokenTrace};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Message `extra` key: where a step's prompt and completion lie in the trajectory's trace.
pub const TOKEN_SPAN: &str = "token_span";

/// Where one step's tokens lie in the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenSpan {
    /// Where the step's prompt starts (it runs to `completion_start`); `None` when the step
    /// had no prompt ids.
    pub prompt_start: Option<usize>,
    /// Where its completion starts.
    pub completion_start: usize,
    /// One past its completion's end.
    pub completion_end: usize,
    /// Whether its log-probs are in the trace.
    pub logprobs: bool,
}

impl TokenSpan {
    /// The span written on a message, if any.
    pub fn of(message: &Message) -> Option<Self> {
        serde_json::from_value(message.extra.get(TOKEN_SPAN)?.clone()).ok()
    }
}

/// One step's token ids, as read.
struct StepTokens {
    message: usize,
    prompt: Option<Vec<u32>>,
    completion: Vec<u32>,
    logprobs: Option<Vec<f32>>,
}

/// The token ids of a trajectory's steps, gathered while its steps are read.
#[derive(Default)]
pub struct TokenSteps {
    steps: Vec<StepTokens>,
}

impl TokenSteps {
    /// Takes the token ids out of a step's `metrics` (at `path`); the step's message will be
    /// message `message` of the trajectory.
    pub fn read(&mut self, metrics: &mut Object, path: &str, message: usize) -> Result<(), String> {
        let Some(completion) = ids(metrics, "completion_token_ids", path)? else {
            return Ok(());
        };
        let prompt = ids(metrics, "prompt_token_ids", path)?;
        let logprobs = match metrics.get("logprobs") {
            Some(Value::Array(values)) if values.len() == completion.len() => {
                let values: Option<Vec<f32>> = values
                    .iter()
                    .map(|v| v.as_f64().map(|v| v as f32))
                    .collect();
                if values.is_some() {
                    metrics.remove("logprobs");
                }
                values
            }
            _ => None,
        };
        self.steps.push(StepTokens {
            message,
            prompt,
            completion,
            logprobs,
        });
        Ok(())
    }

    /// The trace of every step's tokens, each step's span written on its message; `None`
    /// when no step had token ids.
    pub fn finish(self, messages: &mut [Message]) -> Option<TokenTrace> {
        if self.steps.is_empty() {
            return None;
        }
        let any_logprobs = self.steps.iter().any(|step| step.logprobs.is_some());
        let mut trace = TokenTrace::default();
        let mut stretch = 0;
        for step in self.steps {
            let prompt_start = step.prompt.map(|prompt| {
                let continues = trace.token_ids.len() >= stretch
                    && prompt.starts_with(&trace.token_ids[stretch..]);
                let new = if continues {
                    trace.token_ids.len() - stretch
                } else {
                    stretch = trace.token_ids.len();
                    0
                };
                push(&mut trace, &prompt[new..], 0, None, any_logprobs);
                stretch
            });
            let completion_start = trace.token_ids.len();
            let has_logprobs = step.logprobs.is_some();
            push(&mut trace, &step.completion, 1, step.logprobs, any_logprobs);
            let span = TokenSpan {
                prompt_start,
                completion_start,
                completion_end: trace.token_ids.len(),
                logprobs: has_logprobs,
            };
            if let (Some(message), Ok(value)) =
                (messages.get_mut(step.message), serde_json::to_value(span))
            {
                message.extra.insert(TOKEN_SPAN.into(), value);
            }
        }
        Some(trace)
    }
}

/// Appends tokens with one mask value and their log-probs (zeros where there are none, when
/// the trace keeps log-probs at all).
fn push(trace: &mut TokenTrace, ids: &[u32], mask: u8, logprobs: Option<Vec<f32>>, keep: bool) {
    trace.token_ids.extend_from_slice(ids);
    trace.loss_mask.extend(std::iter::repeat_n(mask, ids.len()));
    if keep {
        match logprobs {
            Some(values) => trace.logprobs.extend(values),
            None => trace.logprobs.extend(std::iter::repeat_n(0.0, ids.len())),
        }
    }
}

/// A list of token ids taken out of `metrics`.
fn ids(metrics: &mut Object, key: &str, path: &str) -> Result<Option<Vec<u32>>, String> {
    let Some(value) = metrics.remove(key) else {
        return Ok(None);
    };
    let Value::Array(values) = value else {
        return Err(format!(
            "{}: expected a list of token ids",
            field(path, key)
        ));
    };
    values
        .iter()
        .enumerate()
        .map(|(index, value)| {
            value
                .as_u64()
                .and_then(|id| u32::try_from(id).ok())
                .ok_or_else(|| format!("{}[{index}]: not a token id", field(path, key)))
        })
        .collect::<Result<Vec<u32>, String>>()
        .map(Some)
}

/// One step's tokens read back from a trace.
pub struct StepIds<'a> {
    /// The prompt's ids, when the step had them.
    pub prompt: Option<&'a [u32]>,
    /// The completion's ids.
    pub completion: &'a [u32],
    /// The completion's log-probs, when the step had them.
    pub logprobs: Option<&'a [f32]>,
}

/// A step's ids and log-probs read back from a trace (the export's side), as the span says.
pub fn step_ids(trace: &TokenTrace, span: TokenSpan) -> Option<StepIds<'_>> {
    let completion = trace
        .token_ids
        .get(span.completion_start..span.completion_end)?;
    let prompt = match span.prompt_start {
        Some(start) => Some(trace.token_ids.get(start..span.completion_start)?),
        None => None,
    };
    let logprobs = span
        .logprobs
        .then(|| {
            trace
                .logprobs
                .get(span.completion_start..span.completion_end)
        })
        .flatten();
    Some(StepIds {
        prompt,
        completion,
        logprobs,
    })
}
