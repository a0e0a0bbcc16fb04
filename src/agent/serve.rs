//! `rollscope serve`: an OpenAI-compatible `/v1/chat/completions` over a local policy, so
//! tools that speak the API (and our own HTTP policy) can use it. Concurrent requests are
//! batched by the decode thread.

use super::protocol::parse_turn;
use super::rollout::{LocalPolicy, Start, TurnFinish};
use crate::formats::chat_api::{Completion, ResponseInfo, read_request, response_body};
use crate::model::{Chat, SamplingParams};
use serde_json::{Value, json};
use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
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
        (Method::Post, "/v1/chat/completions") => read_body(&mut request)
            .and_then(|body| complete(body, model, counter.fetch_add(1, Ordering::Relaxed))),
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

fn read_body(request: &mut Request) -> Result<Value, (u16, String)> {
    let mut text = String::new();
    request
        .as_reader()
        .take(MAX_BODY)
        .read_to_string(&mut text)
        .map_err(|error| (400, format!("cannot read the request body: {error}")))?;
    serde_json::from_str(&text).map_err(|error| (400, format!("the body is not JSON: {error}")))
}

fn complete(body: Value, model: &ServedModel, number: u64) -> Result<Value, (u16, String)> {
    let request = read_request(body).map_err(|message| (400, message))?;
    let prompt = model
        .chat
        .prompt_ids(&request.messages, &request.tools)
        .map_err(|error| (400, error.to_string()))?;
    let temperature = request.temperature.unwrap_or(1.0);
    let sampling = SamplingParams {
        temperature,
        top_p: request.top_p.unwrap_or(1.0),
        top_k: request.top_k.unwrap_or(0),
        seed: request.seed.unwrap_or(number),
    };
    let prompt_tokens = prompt.len();
    let max_tokens = request
        .max_tokens
        .unwrap_or(model.default_max_tokens)
        .max(1);
    let turn = model
        .policy
        .turn_blocking(Start::Prompt(prompt, sampling), max_tokens)
        .map_err(|message| (400, message))?;
    model.policy.release(turn.sequence);
    let visible = match turn.finish {
        TurnFinish::EndOfTurn => &turn.tokens[..turn.tokens.len().saturating_sub(1)],
        _ => &turn.tokens[..],
    };
    let text = model
        .chat
        .tokenizer
        .decode(visible, false)
        .map_err(|error| (500, error.to_string()))?;
    let parsed = parse_turn(&text, &request.tools, 0);
    let mut message = parsed.to_message();
    for (call, block) in message.tool_calls.iter_mut().zip(&parsed.calls) {
        call.id = Some(format!("call_{number}_{}", block.id));
    }
    if request.tools.is_empty() {
        message.content = text;
        message.tool_calls.clear();
    }
    let finish_reason = match turn.finish {
        TurnFinish::MaxTokens | TurnFinish::ContextFull => "length",
        TurnFinish::EndOfTurn if !message.tool_calls.is_empty() => "tool_calls",
        TurnFinish::EndOfTurn => "stop",
    };
    let completion = Completion {
        message,
        finish_reason: finish_reason.to_string(),
        logprobs: turn.logprobs.clone(),
        completion_tokens: Some(turn.tokens.len() as u64),
    };
    let info = ResponseInfo {
        id: format!("chatcmpl-rollscope-{number}"),
        model: model.name.clone(),
        created: chrono::Utc::now().timestamp(),
        prompt_tokens,
        completion_tokens: turn.tokens.len(),
    };
    Ok(response_body(&completion, &info, request.logprobs))
}
