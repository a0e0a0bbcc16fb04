//! `rollscope serve`: an OpenAI-compatible `/v1/chat/completions` over a local policy, so
//! tools that speak the API (and our own HTTP policy) can use it. Concurrent requests, and
//! the `n` choices of one, are batched by the decode thread. `stop` strings end a reply
//! where they first appear; `stream: true` answers with server-sent events, one
//! `chat.completion.chunk` per piece of text as it is sampled (a reply offered tools comes
//! as one chunk once its calls are parsed), then `data: [DONE]`.

mod events;
mod text;

use super::protocol::parse_turn;
use super::rollout::{LocalPolicy, Start, TurnFinish};
use crate::formats::chat_api::{
    ChatRequest, Completion, ResponseInfo, read_request, response_body,
};
use crate::formats::chat_stream::{ChunkDelta, chunk_body, usage_chunk_body};
use crate::model::{Chat, SamplingParams};
use crate::trajectory::Message;
use events::EventStream;
use serde_json::{Value, json};
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use text::ReplyText;
use tiny_http::{Header, Method, Request, Response, Server};

/// The largest request body read, in bytes.
const MAX_BODY: u64 = 16 * 1024 * 1024;

/// What the server answers with.
#[derive(Clone)]
pub struct ServedModel {
    /// The decode thread.
    pub policy: LocalPolicy,
    /// The model's tokenizer and template.
    pub chat: Arc<Chat>,
    /// The name clients ask for (any name is accepted).
    pub name: String,
    /// Reply budget when a request names none.
    pub default_max_tokens: usize,
}

/// Serves requests on `server` with `threads` workers until `server.unblock()` is called
/// (each worker that stops wakes the next, so one call stops them all).
pub fn serve(server: Arc<Server>, model: ServedModel, threads: usize) {
    let counter = Arc::new(AtomicU64::new(0));
    let workers: Vec<_> = (0..threads.max(1))
        .map(|_| {
            let (server, model, counter) = (server.clone(), model.clone(), counter.clone());
            std::thread::spawn(move || {
                while let Ok(request) = server.recv() {
                    handle(request, &model, &counter);
                }
                server.unblock();
            })
        })
        .collect();
    for worker in workers {
        let _ = worker.join();
    }
}

/// A chat request made ready to generate: its prompt, budget and sampling.
struct Prepared {
    request: ChatRequest,
    prompt: Vec<u32>,
    max_tokens: usize,
    sampling: SamplingParams,
    info: ResponseInfo,
    number: u64,
}

/// An error answer: the HTTP status and the message.
type Failure = (u16, String);

fn handle(mut request: Request, model: &ServedModel, counter: &AtomicU64) {
    let url = request
        .url()
        .split('?')
        .next()
        .unwrap_or("")
        .trim_end_matches('/')
        .to_string();
    let answer = match (request.method(), url.as_str()) {
        (Method::Get, "/health") => Ok(json!({"status": "ok"})),
        (Method::Get, "/v1/models") => Ok(json!({
            "object": "list",
            "data": [{"id": model.name, "object": "model", "owned_by": "rollscope"}],
        })),
        (Method::Post, "/v1/chat/completions") => {
            let number = counter.fetch_add(1, Ordering::Relaxed);
            match read_body(&mut request).and_then(|body| prepare(body, model, number)) {
                Ok(prepared) if prepared.request.stream => {
                    return stream(request, model, &prepared);
                }
                Ok(prepared) => complete(model, &prepared),
                Err(failure) => Err(failure),
            }
        }
        _ => Err((404, format!("no route {} {url}", request.method()))),
    };
    let (status, body) = match answer {
        Ok(body) => (200, body),
        Err((status, message)) => (
            status,
            json!({"error": {"message": message, "type": "invalid_request_error", "code": status}}),
        ),
    };
    let header = Header::from_bytes(&b"Content-Type"[..], &b"application/json"[..]);
    let mut response = Response::from_string(body.to_string()).with_status_code(status);
    if let Ok(header) = header {
        response = response.with_header(header);
    }
    let _ = request.respond(response);
}

fn read_body(request: &mut Request) -> Result<Value, Failure> {
    let mut text = String::new();
    request
        .as_reader()
        .take(MAX_BODY)
        .read_to_string(&mut text)
        .map_err(|error| (400, format!("cannot read the request body: {error}")))?;
    serde_json::from_str(&text).map_err(|error| (400, format!("the body is not JSON: {error}")))
}

fn prepare(body: Value, model: &ServedModel, number: u64) -> Result<Prepared, Failure> {
    let request = read_request(body).map_err(|message| (400, message))?;
    let prompt = model
        .chat
        .prompt_ids(&request.messages, &request.tools)
        .map_err(|error| (400, error.to_string()))?;
    let sampling = SamplingParams {
        temperature: request.temperature.unwrap_or(1.0),
        top_p: request.top_p.unwrap_or(1.0),
        top_k: request.top_k.unwrap_or(0),
        seed: request.seed.unwrap_or(number),
    };
    let max_tokens = request
        .max_tokens
        .unwrap_or(model.default_max_tokens)
        .max(1);
    let info = ResponseInfo {
        id: format!("chatcmpl-rollscope-{number}"),
        model: model.name.clone(),
        created: chrono::Utc::now().timestamp(),
        prompt_tokens: prompt.len(),
        completion_tokens: 0,
    };
    Ok(Prepared {
        request,
        prompt,
        max_tokens,
        sampling,
        info,
        number,
    })
}

/// Generates choice `index` of a request, handing each final piece of its text to
/// `on_text` (false: stop generating); returns it with the tokens it took.
fn generate(
    model: &ServedModel,
    prepared: &Prepared,
    index: usize,
    on_text: &mut dyn FnMut(&str) -> bool,
) -> Result<(Completion, usize), Failure> {
    let sampling = SamplingParams {
        seed: prepared.sampling.seed.wrapping_add(index as u64),
        ..prepared.sampling.clone()
    };
    let start = Start::Prompt(prepared.prompt.clone(), sampling);
    let mut reply = ReplyText::new(&model.chat.tokenizer, &prepared.request.stop);
    let turn = model
        .policy
        .turn_streaming(start, prepared.max_tokens, &mut |token| {
            reply.push(token, &mut *on_text)
        })
        .map_err(|message| (400, message))?;
    model.policy.release(turn.sequence);
    reply.finish(on_text);
    let text = reply.text().to_string();
    let message = served_message(text, &prepared.request.tools, prepared.number, index);
    let finish_reason = match turn.finish {
        _ if reply.stopped() => "stop",
        TurnFinish::MaxTokens | TurnFinish::ContextFull => "length",
        _ if !message.tool_calls.is_empty() => "tool_calls",
        _ => "stop",
    };
    let tokens = if reply.stopped() {
        reply.tokens()
    } else {
        turn.tokens.len()
    };
    let mut logprobs = turn.logprobs;
    logprobs.truncate(tokens);
    let completion = Completion {
        message,
        finish_reason: finish_reason.to_string(),
        logprobs,
        completion_tokens: Some(tokens as u64),
    };
    Ok((completion, tokens))
}

/// The message a completion answers with. Tool calls only when tools were offered and every
/// `<tool_call>` block of the text is a well-formed call of an offered tool (its arguments a
/// JSON object that fits the tool's schema); otherwise the whole text as content, as vLLM's
/// tool parsers answer output they cannot parse, so a client never receives a call it cannot
/// run.
pub fn served_message(text: String, tools: &[Value], request: u64, choice: usize) -> Message {
    let parsed = parse_turn(&text, tools, 0);
    if tools.is_empty() || parsed.calls.is_empty() || parsed.format_failures() > 0 {
        return Message::assistant(text);
    }
    let mut message = parsed.to_message();
    for (position, call) in message.tool_calls.iter_mut().enumerate() {
        call.id = Some(format!("call_{request}_{choice}_{position}"));
    }
    message
}

/// Generates every choice of a request at once (the decode thread batches them).
fn choices(
    model: &ServedModel,
    prepared: &Prepared,
    on_text: &(dyn Fn(usize, &str) -> bool + Sync),
) -> Vec<Result<(Completion, usize), Failure>> {
    std::thread::scope(|scope| {
        let running: Vec<_> = (0..prepared.request.n)
            .map(|index| {
                scope.spawn(move || {
                    generate(model, prepared, index, &mut |piece| on_text(index, piece))
                })
            })
            .collect();
        running
            .into_iter()
            .map(|choice| {
                choice
                    .join()
                    .unwrap_or_else(|_| Err((500, "generation panicked".to_string())))
            })
            .collect()
    })
}

fn complete(model: &ServedModel, prepared: &Prepared) -> Result<Value, Failure> {
    let done: Vec<(Completion, usize)> = choices(model, prepared, &|_, _| true)
        .into_iter()
        .collect::<Result<_, _>>()?;
    let info = ResponseInfo {
        completion_tokens: done.iter().map(|(_, tokens)| tokens).sum(),
        ..prepared.info.clone()
    };
    let completions: Vec<Completion> = done.into_iter().map(|(completion, _)| completion).collect();
    Ok(response_body(
        &completions,
        &info,
        prepared.request.logprobs,
    ))
}

/// Answers with server-sent events: each choice's role, its text as it is sampled (its
/// whole message at the end when tools were offered), its finish reason; then the usage
/// when asked for, and `[DONE]`.
fn stream(request: Request, model: &ServedModel, prepared: &Prepared) {
    let events = Mutex::new(EventStream::start(request));
    let send = |data: &Value| {
        events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .send(data)
    };
    let info = &prepared.info;
    let whole_message = !prepared.request.tools.is_empty();
    for index in 0..prepared.request.n {
        send(&chunk_body(info, index, &ChunkDelta::Role));
    }
    let done = choices(model, prepared, &|index, piece| {
        whole_message || send(&chunk_body(info, index, &ChunkDelta::Content(piece)))
    });
    let mut tokens = 0;
    for (index, choice) in done.iter().enumerate() {
        match choice {
            Ok((completion, used)) => {
                tokens += used;
                if whole_message {
                    send(&chunk_body(
                        info,
                        index,
                        &ChunkDelta::Message(&completion.message),
                    ));
                }
                send(&chunk_body(
                    info,
                    index,
                    &ChunkDelta::Finish(&completion.finish_reason),
                ));
            }
            Err((status, message)) => {
                send(&json!({"error": {"message": message, "code": status}}));
            }
        }
    }
    if prepared.request.stream_usage {
        let info = ResponseInfo {
            completion_tokens: tokens,
            ..info.clone()
        };
        send(&usage_chunk_body(&info));
    }
    events
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
        .end();
}
