//! The local policy: one decode thread owns the candle `Decoder` and advances every sequence
//! that is generating in one batched step, while the episodes that own those sequences wait
//! on tools elsewhere. Turns are asked for through a channel and answered when they end.

use crate::model::{Decoder, SamplingParams, SequenceId};
use std::collections::BTreeMap;
use std::sync::mpsc;
use std::time::Instant;
use tokio::sync::oneshot;

/// Why a generated turn ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TurnFinish {
    /// The policy wrote its end-of-turn token.
    EndOfTurn,
    /// The turn's token budget ran out.
    MaxTokens,
    /// The context window is full.
    ContextFull,
    /// The caller stopped listening to the streamed tokens (a stop string was written, or
    /// the client went away).
    Stopped,
}

/// The tokens of one generated turn.
#[derive(Clone, Debug, PartialEq)]
pub struct GeneratedTurn {
    /// The sequence, to continue it next turn.
    pub sequence: SequenceId,
    /// Sampled tokens, the end-of-turn token included when there is one.
    pub tokens: Vec<u32>,
    /// Sampling log-probs of those tokens.
    pub logprobs: Vec<f32>,
    /// Sampling entropies at those tokens.
    pub entropies: Vec<f32>,
    /// Why it ended.
    pub finish: TurnFinish,
}

/// Which sequence a turn continues.
pub enum Start {
    /// A new sequence from these prompt tokens.
    Prompt(Vec<u32>, SamplingParams),
    /// An existing sequence, after appending these tokens (an observation).
    Continue(SequenceId, Vec<u32>),
}

enum Request {
    Turn {
        start: Start,
        max_new_tokens: usize,
        reply: oneshot::Sender<Result<GeneratedTurn, String>>,
        stream: Option<mpsc::Sender<u32>>,
    },
    Release(SequenceId),
}

struct Active {
    max_new_tokens: usize,
    turn: GeneratedTurn,
    reply: oneshot::Sender<Result<GeneratedTurn, String>>,
    /// Where each sampled token (end-of-turn tokens aside) goes as it is sampled.
    stream: Option<mpsc::Sender<u32>>,
}

/// A handle to the decode thread; cheap to clone, one per episode.
#[derive(Clone)]
pub struct LocalPolicy {
    sender: mpsc::Sender<Request>,
}

/// Figures of the decode thread, for benchmarks and metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DecodeStats {
    /// Batched steps run.
    pub steps: u64,
    /// Tokens sampled.
    pub tokens: u64,
    /// Seconds spent in steps.
    pub busy_seconds: f64,
}

impl LocalPolicy {
    /// Starts the decode thread; it ends when every handle is dropped, and its join handle
    /// returns the figures.
    pub fn spawn(
        decoder: Decoder,
        stop_tokens: Vec<u32>,
    ) -> std::io::Result<(Self, std::thread::JoinHandle<DecodeStats>)> {
        let (sender, receiver) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("rollscope-decode".into())
            .spawn(move || decode_loop(decoder, &stop_tokens, &receiver))?;
        Ok((Self { sender }, thread))
    }

    /// Generates one turn: until the end-of-turn token, `max_new_tokens`, or a full context.
    pub async fn turn(&self, start: Start, max_new_tokens: usize) -> Result<GeneratedTurn, String> {
        let (reply, answer) = oneshot::channel();
        self.sender
            .send(Request::Turn {
                start,
                max_new_tokens,
                reply,
                stream: None,
            })
            .map_err(|_| "the decode thread has stopped".to_string())?;
        answer
            .await
            .map_err(|_| "the decode thread dropped the turn".to_string())?
    }

    /// Generates one turn from a thread that is not async (the HTTP server).
    pub fn turn_blocking(
        &self,
        start: Start,
        max_new_tokens: usize,
    ) -> Result<GeneratedTurn, String> {
        let (reply, answer) = oneshot::channel();
        self.sender
            .send(Request::Turn {
                start,
                max_new_tokens,
                reply,
                stream: None,
            })
            .map_err(|_| "the decode thread has stopped".to_string())?;
        answer
            .blocking_recv()
            .map_err(|_| "the decode thread dropped the turn".to_string())?
    }

    /// Generates one turn from a thread that is not async, handing each token to `on_token`
    /// as it is sampled (the end-of-turn token aside); the turn ends early, as `Stopped`,
    /// once `on_token` returns false.
    pub fn turn_streaming(
        &self,
        start: Start,
        max_new_tokens: usize,
        on_token: &mut dyn FnMut(u32) -> bool,
    ) -> Result<GeneratedTurn, String> {
        let (reply, answer) = oneshot::channel();
        let (stream, sampled) = mpsc::channel();
        self.sender
            .send(Request::Turn {
                start,
                max_new_tokens,
                reply,
                stream: Some(stream),
            })
            .map_err(|_| "the decode thread has stopped".to_string())?;
        for token in sampled.iter() {
            if !on_token(token) {
                break;
            }
        }
        drop(sampled);
        answer
            .blocking_recv()
            .map_err(|_| "the decode thread dropped the turn".to_string())?
    }

    /// Frees a sequence that will not be continued.
    pub fn release(&self, sequence: SequenceId) {
        let _ = self.sender.send(Request::Release(sequence));
    }
}

fn decode_loop(
    mut decoder: Decoder,
    stop_tokens: &[u32],
    receiver: &mpsc::Receiver<Request>,
) -> DecodeStats {
    let mut active: BTreeMap<SequenceId, Active> = BTreeMap::new();
    let mut stats = DecodeStats::default();
    loop {
        if active.is_empty() {
            match receiver.recv() {
                Ok(request) => admit(&mut decoder, &mut active, request),
                Err(_) => return stats,
            }
        }
        while let Ok(request) = receiver.try_recv() {
            admit(&mut decoder, &mut active, request);
        }
        if active.is_empty() {
            continue;
        }
        let ids: Vec<SequenceId> = active.keys().copied().collect();
        let (ready, full): (Vec<_>, Vec<_>) = ids
            .into_iter()
            .partition(|&id| decoder.room(id).unwrap_or(0) > 0);
        for id in full {
            finish(&mut active, id, TurnFinish::ContextFull);
        }
        if ready.is_empty() {
            continue;
        }
        let started = Instant::now();
        let sampled = decoder.step(&ready);
        stats.busy_seconds += started.elapsed().as_secs_f64();
        stats.steps += 1;
        match sampled {
            Ok(tokens) => {
                stats.tokens += tokens.len() as u64;
                for (id, token) in ready.into_iter().zip(tokens) {
                    let Some(entry) = active.get_mut(&id) else {
                        continue;
                    };
                    entry.turn.tokens.push(token.token);
                    entry.turn.logprobs.push(token.logprob);
                    entry.turn.entropies.push(token.entropy);
                    if stop_tokens.contains(&token.token) {
                        finish(&mut active, id, TurnFinish::EndOfTurn);
                        continue;
                    }
                    let heard = entry
                        .stream
                        .as_ref()
                        .is_none_or(|stream| stream.send(token.token).is_ok());
                    if entry.turn.tokens.len() >= entry.max_new_tokens {
                        finish(&mut active, id, TurnFinish::MaxTokens);
                    } else if !heard {
                        finish(&mut active, id, TurnFinish::Stopped);
                    }
                }
            }
            Err(error) => {
                let message = format!("generation failed: {error}");
                for id in ready {
                    if let Some(entry) = active.remove(&id) {
                        let _ = entry.reply.send(Err(message.clone()));
                    }
                    let _ = decoder.remove(id);
                }
            }
        }
    }
}

fn admit(decoder: &mut Decoder, active: &mut BTreeMap<SequenceId, Active>, request: Request) {
    let (start, max_new_tokens, reply, stream) = match request {
        Request::Release(id) => {
            let _ = decoder.remove(id);
            return;
        }
        Request::Turn {
            start,
            max_new_tokens,
            reply,
            stream,
        } => (start, max_new_tokens, reply, stream),
    };
    let sequence = match start {
        Start::Prompt(prompt, sampling) => decoder.add_sequence(&prompt, sampling),
        Start::Continue(id, tokens) => decoder.append(id, &tokens).map(|()| id),
    };
    let sequence = match sequence {
        Ok(sequence) => sequence,
        Err(error) => {
            let _ = reply.send(Err(error.to_string()));
            return;
        }
    };
    let turn = GeneratedTurn {
        sequence,
        tokens: Vec::new(),
        logprobs: Vec::new(),
        entropies: Vec::new(),
        finish: TurnFinish::MaxTokens,
    };
    if max_new_tokens == 0 {
        let _ = reply.send(Ok(turn));
        return;
    }
    active.insert(
        sequence,
        Active {
            max_new_tokens,
            turn,
            reply,
            stream,
        },
    );
}

fn finish(active: &mut BTreeMap<SequenceId, Active>, id: SequenceId, reason: TurnFinish) {
    if let Some(mut entry) = active.remove(&id) {
        entry.turn.finish = reason;
        let _ = entry.reply.send(Ok(entry.turn));
    }
}
