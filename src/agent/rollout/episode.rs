//! One episode: generate → execute → observe → generate again, until the policy answers or
//! a limit is hit. The episode keeps the messages view and, for the local policy, the exact
//! token trace (observation tokens masked out).

use super::local::{Start, TurnFinish};
use super::{Environment, Policy, RolloutConfig};
use crate::agent::protocol::{CallBlock, check_stored_call, parse_turn};
use crate::model::{SamplingParams, SequenceId};
use crate::trajectory::{Message, StopReason, TokenTrace};
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Semaphore;

/// The turns tool calls take when a run limits how many run at once; cheap to clone.
#[derive(Clone, Debug, Default)]
pub(crate) struct ToolSlots {
    slots: Option<Arc<Semaphore>>,
}

impl ToolSlots {
    /// At most `limit` calls at once (0 = no limit).
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            slots: (limit > 0).then(|| Arc::new(Semaphore::new(limit))),
        }
    }

    /// Waits for a slot; the call runs while the returned guard lives.
    async fn take(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        match &self.slots {
            Some(slots) => slots.clone().acquire_owned().await.ok(),
            None => None,
        }
    }
}

/// Where an episode stands; cloned at turn boundaries to start Monte-Carlo continuations.
#[derive(Clone, Debug, Default)]
pub struct EpisodeState {
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// The tokens so far (empty for a policy that does not expose tokens).
    pub trace: TokenTrace,
    /// Assistant turns taken.
    pub turns: usize,
    /// Tokens the policy generated.
    pub policy_tokens: usize,
    /// Milliseconds waiting for generation.
    pub generate_ms: f64,
    /// Milliseconds waiting for tools.
    pub tools_ms: f64,
    /// Malformed tool calls.
    pub format_failures: usize,
    /// Why it ended, once it has.
    pub stop: Option<StopReason>,
    /// A failure of the backend, when `stop` is `Error`.
    pub error: Option<String>,
    /// After each assistant turn that was answered by tools: the state at that point.
    pub checkpoints: Vec<Checkpoint>,
}

/// The state right after turn `turn`'s observations were appended.
#[derive(Clone, Debug)]
pub struct Checkpoint {
    /// The 0-based turn.
    pub turn: usize,
    /// Messages up to and including the observations.
    pub messages: usize,
    /// Tokens up to and including the observations.
    pub tokens: usize,
}

impl EpisodeState {
    /// A fresh episode on a prompt; `prompt_ids` is empty for an endpoint policy.
    pub fn new(prompt: Vec<Message>, prompt_ids: Vec<u32>) -> Self {
        let n = prompt_ids.len();
        Self {
            messages: prompt,
            trace: TokenTrace {
                token_ids: prompt_ids,
                loss_mask: vec![0; n],
                logprobs: vec![0.0; n],
                entropies: vec![0.0; n],
            },
            ..Self::default()
        }
    }

    /// The state at a checkpoint, to continue from there.
    pub fn rewound(&self, checkpoint: &Checkpoint) -> Self {
        let cut = |values: &Vec<f32>| values[..checkpoint.tokens.min(values.len())].to_vec();
        Self {
            messages: self.messages[..checkpoint.messages].to_vec(),
            trace: TokenTrace {
                token_ids: self.trace.token_ids[..checkpoint.tokens].to_vec(),
                loss_mask: self.trace.loss_mask[..checkpoint.tokens].to_vec(),
                logprobs: cut(&self.trace.logprobs),
                entropies: cut(&self.trace.entropies),
            },
            turns: checkpoint.turn + 1,
            ..Self::default()
        }
    }

    fn push_tokens(&mut self, tokens: &[u32], trained: bool, logprobs: &[f32], entropies: &[f32]) {
        self.trace.token_ids.extend_from_slice(tokens);
        self.trace
            .loss_mask
            .extend(std::iter::repeat_n(u8::from(trained), tokens.len()));
        if trained {
            self.trace.logprobs.extend_from_slice(logprobs);
            self.trace.entropies.extend_from_slice(entropies);
        } else {
            self.trace
                .logprobs
                .extend(std::iter::repeat_n(0.0, tokens.len()));
            self.trace
                .entropies
                .extend(std::iter::repeat_n(0.0, tokens.len()));
        }
    }
}

/// A generated turn, whatever the backend.
struct Turn {
    message: Message,
    calls: Vec<CallBlock>,
    finish: TurnFinish,
}

/// Runs an episode from `state` to its end.
pub async fn run(
    policy: &Policy,
    environment: &Environment,
    config: &RolloutConfig,
    slots: &ToolSlots,
    tools: &[Value],
    sampling: SamplingParams,
    mut state: EpisodeState,
) -> EpisodeState {
    let mut sequence: Option<SequenceId> = None;
    let mut pending = state.trace.token_ids.clone();
    loop {
        let budget = config
            .max_new_tokens
            .min(config.max_tokens.saturating_sub(state.policy_tokens));
        if budget == 0 {
            state.stop = Some(StopReason::MaxTokens);
            break;
        }
        let started = Instant::now();
        let turn = match policy {
            Policy::Local { policy, chat } => {
                let start = match sequence {
                    None => Start::Prompt(std::mem::take(&mut pending), sampling.clone()),
                    Some(id) => Start::Continue(id, std::mem::take(&mut pending)),
                };
                match policy.turn(start, budget).await {
                    Ok(generated) => {
                        sequence = Some(generated.sequence);
                        state.push_tokens(
                            &generated.tokens,
                            true,
                            &generated.logprobs,
                            &generated.entropies,
                        );
                        state.policy_tokens += generated.tokens.len();
                        let visible = match generated.finish {
                            TurnFinish::EndOfTurn => {
                                &generated.tokens[..generated.tokens.len().saturating_sub(1)]
                            }
                            _ => &generated.tokens[..],
                        };
                        chat.tokenizer
                            .decode(visible, false)
                            .map(|text| local_turn(&text, tools, state.turns, generated.finish))
                            .map_err(|error| error.to_string())
                    }
                    Err(error) => Err(error),
                }
            }
            Policy::Http(http) => http
                .turn(&state.messages, tools, &sampling, budget)
                .await
                .map(|completion| {
                    state.policy_tokens += completion
                        .completion_tokens
                        .map_or(completion.message.content.len() / 4, |n| n as usize);
                    api_turn(
                        completion.message,
                        &completion.finish_reason,
                        tools,
                        state.turns,
                    )
                }),
        };
        state.generate_ms += started.elapsed().as_secs_f64() * 1e3;
        let turn = match turn {
            Ok(turn) => turn,
            Err(error) => {
                state.stop = Some(StopReason::Error);
                state.error = Some(error);
                break;
            }
        };
        state.turns += 1;
        state.format_failures += turn.calls.iter().filter(|call| call.call.is_err()).count();
        state.messages.push(turn.message);
        match turn.finish {
            TurnFinish::MaxTokens => {
                state.stop = Some(StopReason::MaxTokens);
                break;
            }
            TurnFinish::ContextFull => {
                state.stop = Some(StopReason::MaxContext);
                break;
            }
            TurnFinish::EndOfTurn | TurnFinish::Stopped => {}
        }
        if turn.calls.is_empty() {
            state.stop = Some(StopReason::Answered);
            break;
        }
        if state.turns >= config.max_turns {
            state.stop = Some(StopReason::MaxTurns);
            break;
        }
        let observations = execute_calls(environment, config, slots, &turn.calls, &mut state).await;
        if let Policy::Local { chat, .. } = policy {
            let history_len = state.messages.len();
            match chat.observation_ids(&state.messages[..history_len], &observations, tools) {
                Ok(ids) => {
                    state.push_tokens(&ids, false, &[], &[]);
                    pending = ids;
                }
                Err(error) => {
                    state.messages.extend(observations);
                    state.stop = Some(StopReason::Error);
                    state.error = Some(error.to_string());
                    break;
                }
            }
        }
        state.messages.extend(observations);
        state.checkpoints.push(Checkpoint {
            turn: state.turns - 1,
            messages: state.messages.len(),
            tokens: state.trace.token_ids.len(),
        });
    }
    if let (Policy::Local { policy, .. }, Some(id)) = (policy, sequence) {
        policy.release(id);
    }
    state
}

fn local_turn(text: &str, tools: &[Value], turn: usize, finish: TurnFinish) -> Turn {
    let parsed = parse_turn(text, tools, turn);
    let mut message = parsed.to_message();
    for (call, block) in message.tool_calls.iter_mut().zip(&parsed.calls) {
        call.id = Some(block.id.clone());
    }
    Turn {
        message,
        calls: parsed.calls,
        finish,
    }
}

/// A turn an endpoint generated. Its calls are named `call_<turn>_<k>` as the local policy's
/// are, whatever ids the endpoint gave (random ones, or the same one every turn): stable
/// across reruns and unique in the conversation, so each result names its call.
fn api_turn(mut message: Message, finish_reason: &str, tools: &[Value], turn: usize) -> Turn {
    let calls = message
        .tool_calls
        .iter_mut()
        .enumerate()
        .map(|(index, call)| {
            let id = format!("call_{turn}_{index}");
            call.id = Some(id.clone());
            CallBlock {
                id,
                raw: call.arguments.clone(),
                call: check_stored_call(call, tools),
            }
        })
        .collect();
    Turn {
        message,
        calls,
        finish: if finish_reason == "length" {
            TurnFinish::MaxTokens
        } else {
            TurnFinish::EndOfTurn
        },
    }
}

async fn execute_calls(
    environment: &Environment,
    config: &RolloutConfig,
    slots: &ToolSlots,
    calls: &[CallBlock],
    state: &mut EpisodeState,
) -> Vec<Message> {
    let started = Instant::now();
    let timeout = config.tool_timeout();
    let running: Vec<_> = calls
        .iter()
        .map(|call| {
            let tools = environment.tools.clone();
            let call = call.clone();
            let slots = slots.clone();
            tokio::spawn(async move {
                let _slot = slots.take().await;
                tools.execute(&call, Instant::now() + timeout).await
            })
        })
        .collect();
    let mut messages = Vec::with_capacity(running.len());
    for (handle, call) in running.into_iter().zip(calls) {
        messages.push(match handle.await {
            Ok(observation) => observation.to_message(),
            Err(error) => {
                let mut message = Message::tool(format!("error: the tool call failed: {error}"));
                message.tool_call_id = Some(call.id.clone());
                message.is_error = true;
                message
            }
        });
    }
    state.tools_ms += started.elapsed().as_secs_f64() * 1e3;
    messages
}
