//! `rollscope serve` speaks the parts of the chat-completions API clients rely on: streamed
//! replies as server-sent events, `n` choices, `stop` strings, and 400s naming the field.

use rollscope::agent::rollout::LocalPolicy;
use rollscope::agent::serve::{ServedModel, serve};
use rollscope::model::LanguageModel;
use serde_json::{Value, json};
use std::sync::Arc;

/// A server on loopback for the test's life.
pub struct Running {
    server: Arc<tiny_http::Server>,
    worker: Option<std::thread::JoinHandle<()>>,
    url: String,
    agent: ureq::Agent,
}

impl Running {
    pub fn start(model: &LanguageModel) -> Self {
        let (policy, _thread) =
            LocalPolicy::spawn(model.decoder(), model.stop_token_ids()).unwrap();
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let address = server.server_addr().to_ip().unwrap();
        let served = ServedModel {
            policy,
            chat: Arc::new(model.chat.clone()),
            name: "embedded".into(),
            default_max_tokens: 24,
        };
        let worker = {
            let server = server.clone();
            std::thread::spawn(move || serve(server, served, 4))
        };
        Self {
            server,
            worker: Some(worker),
            url: format!("http://{address}/v1/chat/completions"),
            agent: ureq::Agent::config_builder()
                .http_status_as_error(false)
                .build()
                .into(),
        }
    }

    /// Status, content type and body text of a POST.
    pub fn post(&self, body: &Value) -> (u16, String, String) {
        let mut response = self.agent.post(&self.url).send_json(body).unwrap();
        let kind = response
            .headers()
            .get("content-type")
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let text = response.body_mut().read_to_string().unwrap();
        (response.status().as_u16(), kind, text)
    }

    /// The JSON reply of a request that must succeed.
    pub fn complete(&self, body: &Value) -> Value {
        let (status, _, text) = self.post(body);
        assert_eq!(status, 200, "{text}");
        serde_json::from_str(&text).unwrap()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

fn request(extra: Value) -> Value {
    let mut body = json!({
        "model": "embedded",
        "messages": [{"role": "user", "content": "What is 17 + 25?"}],
        "temperature": 0.0,
        "max_tokens": 24,
    });
    for (key, value) in extra.as_object().unwrap() {
        body[key] = value.clone();
    }
    body
}

pub fn streams_n_choices_and_stop_strings(model: &LanguageModel) {
    let running = Running::start(model);
    let whole = running.complete(&request(json!({})));
    let text = whole["choices"][0]["message"]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        text.chars().count() > 8,
        "the greedy reply is long enough: {text:?}"
    );

    let (status, kind, body) = running.post(&request(json!({"stream": true})));
    assert_eq!(status, 200, "{body}");
    assert!(kind.starts_with("text/event-stream"), "{kind}: {body}");
    let events: Vec<&str> = body
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .collect();
    assert_eq!(events.last(), Some(&"[DONE]"), "{body}");
    let chunks: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|event| serde_json::from_str(event).unwrap())
        .collect();
    assert!(
        chunks
            .iter()
            .all(|c| c["object"] == "chat.completion.chunk")
    );
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    let streamed: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(streamed, text, "the deltas add up to the reply");
    let last = &chunks[chunks.len() - 1]["choices"][0];
    assert_eq!(last["finish_reason"], whole["choices"][0]["finish_reason"]);

    let n = running.complete(&request(json!({"n": 3, "temperature": 1.0, "seed": 5})));
    let choices = n["choices"].as_array().unwrap();
    assert_eq!(choices.len(), 3, "{n}");
    for (index, choice) in choices.iter().enumerate() {
        assert_eq!(choice["index"], index);
        assert!(choice["message"]["content"].is_string());
    }

    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let window = (2..chars.len() - 3)
        .find(|&at| chars[at..at + 3].iter().all(|(_, c)| *c != '\u{fffd}'))
        .expect("three decoded characters in a row");
    let stop = &text[chars[window].0..chars[window + 3].0];
    let cut = &text[..text.find(stop).unwrap()];
    let stopped = running.complete(&request(json!({"stop": [stop, "never appears"]})));
    assert_eq!(
        stopped["choices"][0]["message"]["content"], cut,
        "{stopped}"
    );
    assert_eq!(stopped["choices"][0]["finish_reason"], "stop");
    let (_, _, body) = running.post(&request(json!({"stop": stop, "stream": true})));
    let streamed: String = body
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter(|event| *event != "[DONE]")
        .filter_map(|event| {
            let chunk: Value = serde_json::from_str(event).unwrap();
            chunk["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_string)
        })
        .collect();
    assert_eq!(
        streamed, cut,
        "a streamed reply stops before the stop string too"
    );

    for (field, bad) in [
        ("n", json!({"n": 0})),
        ("stop", json!({"stop": 7})),
        ("stream", json!({"stream": "yes"})),
    ] {
        let (status, _, body) = running.post(&request(bad));
        assert_eq!(status, 400, "{field}: {body}");
        assert!(body.contains(&format!("`{field}`")), "{body}");
    }
}

/// Pieces random model output is made of: call tags, well-formed and broken calls, text.
fn output_piece() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    prop_oneof![
        Just("<tool_call>".to_string()),
        Just("</tool_call>".to_string()),
        Just(r#"{"name": "calculator", "arguments": {"expression": "12*3"}}"#.to_string()),
        Just(r#"{"name.\n{"name": "arguments": "calculator", "12"}}"#.to_string()),
        Just(r#"{"name": "", "arguments": {}}"#.to_string()),
        Just(r#"{"name": "calculator", "arguments": "12"}"#.to_string()),
        Just(r#"{"name": "unknown_tool", "arguments": {}}"#.to_string()),
        Just(r#"{"name": "calculator"}"#.to_string()),
        "[ -~\n]{0,24}",
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

    /// Whatever the model writes, a tool call served has a name of an offered tool, an id,
    /// and arguments that parse as a JSON object (what the `openai` SDK's clients run); text
    /// that is not a well-formed call goes back as content with `finish_reason: stop`.
    #[test]
    fn random_model_output_never_becomes_a_malformed_tool_call(
        pieces in proptest::collection::vec(output_piece(), 0..8)
    ) {
        use rollscope::formats::chat_api::{Completion, ResponseInfo, response_body};
        let text: String = pieces.concat();
        let tools = vec![json!({"type": "function", "function": {"name": "calculator",
            "parameters": {"type": "object", "properties": {"expression": {"type": "string"}},
                           "required": ["expression"]}}})];
        let message = rollscope::agent::serve::served_message(text.clone(), &tools, 7, 0);
        let finish = if message.tool_calls.is_empty() { "stop" } else { "tool_calls" };
        let completion = Completion {
            message,
            finish_reason: finish.into(),
            logprobs: Vec::new(),
            completion_tokens: Some(1),
        };
        let info = ResponseInfo {
            id: "chatcmpl-1".into(),
            model: "embedded".into(),
            created: 0,
            prompt_tokens: 1,
            completion_tokens: 1,
        };
        let body = response_body(&[completion], &info, false);
        let choice = &body["choices"][0];
        match choice["message"]["tool_calls"].as_array() {
            Some(calls) => {
                proptest::prop_assert_eq!(&choice["finish_reason"], "tool_calls");
                proptest::prop_assert!(!calls.is_empty());
                for call in calls {
                    proptest::prop_assert_eq!(&call["type"], "function");
                    proptest::prop_assert!(call["id"].as_str().is_some_and(|id| !id.is_empty()));
                    proptest::prop_assert_eq!(&call["function"]["name"], "calculator");
                    let arguments = call["function"]["arguments"].as_str().unwrap();
                    let parsed: Value = serde_json::from_str(arguments).unwrap();
                    proptest::prop_assert!(parsed.is_object());
                }
            }
            None => {
                proptest::prop_assert_eq!(&choice["finish_reason"], "stop");
                proptest::prop_assert_eq!(choice["message"]["content"].as_str(), Some(text.as_str()));
            }
        }
    }
}
