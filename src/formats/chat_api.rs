//! The OpenAI chat-completions wire format, both ways: the requests our HTTP policy sends and
//! `rollscope serve` reads, and the responses it writes and the HTTP policy reads.

use super::ToolArguments;
use super::chat::{read_message, read_messages, tool_specs, write_message};
use crate::trajectory::Message;
use serde_json::{Map, Value, json};

/// A chat-completions request, as far as a policy needs it.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatRequest {
    /// The model name asked for.
    pub model: String,
    /// The conversation.
    pub messages: Vec<Message>,
    /// Tool specifications offered.
    pub tools: Vec<Value>,
    /// Sampling temperature (default 1).
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    pub top_p: Option<f64>,
    /// Top-k sampling (vLLM's extension).
    pub top_k: Option<usize>,
    /// Token budget of the reply.
    pub max_tokens: Option<usize>,
    /// Sampling seed.
    pub seed: Option<u64>,
    /// Whether per-token log-probs are wanted.
    pub logprobs: bool,
    /// Choices to generate (default 1).
    pub n: usize,
    /// Strings that end the reply where they first appear (they are not part of it).
    pub stop: Vec<String>,
    /// Whether the reply streams as server-sent events of `chat.completion.chunk`s.
    pub stream: bool,
    /// Whether a streamed reply ends with a chunk that reports the token usage.
    pub stream_usage: bool,
}

/// The most choices one request may ask for.
pub const MAX_CHOICES: usize = 16;

impl Default for ChatRequest {
    fn default() -> Self {
        Self {
            model: String::new(),
            messages: Vec::new(),
            tools: Vec::new(),
            temperature: None,
            top_p: None,
            top_k: None,
            max_tokens: None,
            seed: None,
            logprobs: false,
            n: 1,
            stop: Vec::new(),
            stream: false,
            stream_usage: false,
        }
    }
}

/// The request body for a conversation (arguments written as JSON strings, as the API wants).
pub fn request_body(request: &ChatRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    let messages: Vec<Value> = request
        .messages
        .iter()
        .map(|m| write_message(m, false, ToolArguments::String))
        .collect();
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        body.insert("tools".into(), Value::Array(request.tools.clone()));
    }
    let optional = [
        ("temperature", request.temperature.map(|v| json!(v))),
        ("top_p", request.top_p.map(|v| json!(v))),
        ("top_k", request.top_k.map(|v| json!(v))),
        ("max_tokens", request.max_tokens.map(|v| json!(v))),
        ("seed", request.seed.map(|v| json!(v))),
    ];
    for (name, value) in optional {
        if let Some(value) = value {
            body.insert(name.into(), value);
        }
    }
    if request.logprobs {
        body.insert("logprobs".into(), json!(true));
    }
    if request.n > 1 {
        body.insert("n".into(), json!(request.n));
    }
    if !request.stop.is_empty() {
        body.insert("stop".into(), json!(request.stop));
    }
    if request.stream {
        body.insert("stream".into(), json!(true));
        if request.stream_usage {
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
    }
    Value::Object(body)
}

/// Reads a request body (what `rollscope serve` receives).
pub fn read_request(body: Value) -> Result<ChatRequest, String> {
    let Value::Object(mut body) = body else {
        return Err("the request body must be a JSON object".into());
    };
    let messages = body
        .remove("messages")
        .ok_or_else(|| "the request has no `messages`".to_string())?;
    let number = |body: &Map<String, Value>, name: &str| -> Result<Option<f64>, String> {
        match body.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => value
                .as_f64()
                .map(Some)
                .ok_or_else(|| format!("`{name}` must be a number")),
        }
    };
    let whole = |body: &Map<String, Value>, name: &str| -> Result<Option<u64>, String> {
        match body.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => value
                .as_u64()
                .map(Some)
                .ok_or_else(|| format!("`{name}` must be a whole number")),
        }
    };
    let flag = |value: Option<&Value>, name: &str| -> Result<bool, String> {
        match value {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(flag)) => Ok(*flag),
            Some(_) => Err(format!("`{name}` must be true or false")),
        }
    };
    let n = whole(&body, "n")?.unwrap_or(1) as usize;
    if !(1..=MAX_CHOICES).contains(&n) {
        return Err(format!(
            "`n` must be a whole number from 1 to {MAX_CHOICES}"
        ));
    }
    Ok(ChatRequest {
        n,
        stop: stop_strings(body.get("stop"))?,
        stream: flag(body.get("stream"), "stream")?,
        stream_usage: flag(
            body.get("stream_options")
                .and_then(|options| options.get("include_usage")),
            "stream_options.include_usage",
        )?,
        model: body
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        messages: read_messages(messages, "messages")?,
        tools: match body.remove("tools") {
            None | Some(Value::Null) => Vec::new(),
            Some(tools) => tool_specs(tools, "tools")?,
        },
        temperature: number(&body, "temperature")?,
        top_p: number(&body, "top_p")?,
        top_k: whole(&body, "top_k")?.map(|k| k as usize),
        max_tokens: whole(&body, "max_tokens")?
            .or(whole(&body, "max_completion_tokens")?)
            .map(|n| n as usize),
        seed: whole(&body, "seed")?,
        logprobs: body
            .get("logprobs")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    })
}

/// `stop`: nothing, one string, or a list of strings (empty strings are dropped).
fn stop_strings(value: Option<&Value>) -> Result<Vec<String>, String> {
    let strings = match value {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(text)) => vec![text.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| item.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| "`stop` must be a string or a list of strings".to_string())?,
        Some(_) => return Err("`stop` must be a string or a list of strings".into()),
    };
    Ok(strings
        .into_iter()
        .filter(|text| !text.is_empty())
        .collect())
}

/// One choice of a completion.
#[derive(Clone, Debug, PartialEq)]
pub struct Completion {
    /// The assistant message (content, reasoning, tool calls).
    pub message: Message,
    /// `stop`, `tool_calls`, `length`, …
    pub finish_reason: String,
    /// Per-token log-probs, where the server returned them.
    pub logprobs: Vec<f32>,
    /// Tokens the server counted for the reply.
    pub completion_tokens: Option<u64>,
}

/// Reads the first choice of a response body (what the HTTP policy receives).
pub fn read_response(body: Value) -> Result<Completion, String> {
    if let Some(error) = body.get("error") {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .map_or_else(|| error.to_string(), str::to_string);
        return Err(format!("the server answered with an error: {message}"));
    }
    let choice = body
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|choices| choices.first())
        .ok_or_else(|| "the response has no `choices`".to_string())?;
    let message = choice
        .get("message")
        .cloned()
        .ok_or_else(|| "choices[0] has no `message`".to_string())?;
    let message = read_message(message, "choices[0].message")?;
    let logprobs = choice
        .pointer("/logprobs/content")
        .and_then(Value::as_array)
        .map(|tokens| {
            tokens
                .iter()
                .filter_map(|token| token.get("logprob").and_then(Value::as_f64))
                .map(|logprob| logprob as f32)
                .collect()
        })
        .unwrap_or_default();
    Ok(Completion {
        message,
        finish_reason: choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .unwrap_or("stop")
            .to_string(),
        logprobs,
        completion_tokens: body
            .pointer("/usage/completion_tokens")
            .and_then(Value::as_u64),
    })
}

/// What a response reports beyond the message.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResponseInfo {
    /// The response id.
    pub id: String,
    /// The model name.
    pub model: String,
    /// Seconds since the Unix epoch.
    pub created: i64,
    /// Prompt tokens.
    pub prompt_tokens: usize,
    /// Completion tokens.
    pub completion_tokens: usize,
}

/// A response body with a choice per completion, in order (what `rollscope serve` writes).
pub fn response_body(
    completions: &[Completion],
    info: &ResponseInfo,
    with_logprobs: bool,
) -> Value {
    let choices: Vec<Value> = completions
        .iter()
        .enumerate()
        .map(|(index, completion)| {
            json!({
                "index": index,
                "message": write_message(&completion.message, false, ToolArguments::String),
                "finish_reason": completion.finish_reason,
                "logprobs": logprobs_of(completion, with_logprobs),
            })
        })
        .collect();
    json!({
        "id": info.id,
        "object": "chat.completion",
        "created": info.created,
        "model": info.model,
        "choices": choices,
        "usage": usage(info),
    })
}

fn logprobs_of(completion: &Completion, with_logprobs: bool) -> Value {
    if !with_logprobs {
        return Value::Null;
    }
    let content: Vec<Value> = completion
        .logprobs
        .iter()
        .map(|logprob| json!({"logprob": logprob}))
        .collect();
    json!({"content": content})
}

/// The `usage` object of a response.
pub(super) fn usage(info: &ResponseInfo) -> Value {
    json!({
        "prompt_tokens": info.prompt_tokens,
        "completion_tokens": info.completion_tokens,
        "total_tokens": info.prompt_tokens + info.completion_tokens,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::ToolCall;

    #[test]
    fn request_and_response_round_trip() {
        let mut call = Message::assistant("");
        call.tool_calls.push(ToolCall {
            id: Some("call_1".into()),
            ..ToolCall::new("calculator", r#"{"expression": "2+2"}"#)
        });
        let mut result = Message::tool("4");
        result.tool_call_id = Some("call_1".into());
        let request = ChatRequest {
            model: "policy".into(),
            messages: vec![Message::user("2+2?"), call.clone(), result],
            tools: vec![
                json!({"type": "function", "function": {"name": "calculator", "parameters": {}}}),
            ],
            temperature: Some(0.7),
            max_tokens: Some(64),
            seed: Some(3),
            logprobs: true,
            n: 2,
            stop: vec!["\n\n".into()],
            stream: true,
            stream_usage: true,
            ..ChatRequest::default()
        };
        let body = request_body(&request);
        assert_eq!(
            body["messages"][1]["tool_calls"][0]["function"]["arguments"],
            json!(r#"{"expression": "2+2"}"#)
        );
        assert_eq!(read_request(body).unwrap(), request);
        let completion = Completion {
            message: call,
            finish_reason: "tool_calls".into(),
            logprobs: vec![-0.5, -1.0],
            completion_tokens: Some(2),
        };
        let info = ResponseInfo {
            completion_tokens: 2,
            ..ResponseInfo::default()
        };
        let back = read_response(response_body(
            std::slice::from_ref(&completion),
            &info,
            true,
        ))
        .unwrap();
        assert_eq!(back, completion);
    }

    #[test]
    fn bad_bodies_name_what_is_wrong() {
        assert!(
            read_request(json!({"model": "m"}))
                .unwrap_err()
                .contains("messages")
        );
        assert!(
            read_request(json!({"messages": [], "temperature": "hot"}))
                .unwrap_err()
                .contains("temperature")
        );
        assert!(
            read_response(json!({"error": {"message": "overloaded"}}))
                .unwrap_err()
                .contains("overloaded")
        );
        assert!(
            read_response(json!({"choices": []}))
                .unwrap_err()
                .contains("choices")
        );
    }
}
