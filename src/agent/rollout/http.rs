//! A policy served elsewhere: any OpenAI-compatible chat endpoint (vLLM, SGLang, llama.cpp
//! server, `rollscope serve`). Tool calls come back in the API's `tool_calls` field.

use crate::formats::chat_api::{ChatRequest, Completion, read_response, request_body};
use crate::model::SamplingParams;
use crate::trajectory::Message;
use serde_json::Value;
use std::time::Duration;

/// An OpenAI-compatible endpoint and the model name to ask it for.
#[derive(Clone)]
pub struct HttpPolicy {
    url: String,
    model: String,
    api_key: Option<String>,
    agent: ureq::Agent,
}

impl HttpPolicy {
    /// A policy at `endpoint` (e.g. `http://127.0.0.1:8000/v1`) serving `model`; the key is
    /// read from `$OPENAI_API_KEY` when set.
    pub fn new(endpoint: &str, model: &str, timeout: Duration) -> Self {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .build()
            .into();
        Self {
            url: format!("{}/chat/completions", endpoint.trim_end_matches('/')),
            model: model.to_string(),
            api_key: std::env::var("OPENAI_API_KEY")
                .ok()
                .filter(|key| !key.is_empty()),
            agent,
        }
    }

    /// The model name sent with each request.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Asks for the next assistant turn of a conversation.
    pub async fn turn(
        &self,
        messages: &[Message],
        tools: &[Value],
        sampling: &SamplingParams,
        max_tokens: usize,
    ) -> Result<Completion, String> {
        let request = ChatRequest {
            model: self.model.clone(),
            messages: messages.to_vec(),
            tools: tools.to_vec(),
            temperature: Some(if sampling.is_greedy() {
                0.0
            } else {
                sampling.temperature
            }),
            top_p: (sampling.top_p < 1.0).then_some(sampling.top_p),
            top_k: (sampling.top_k > 0).then_some(sampling.top_k),
            max_tokens: Some(max_tokens),
            seed: Some(sampling.seed),
            logprobs: true,
            ..ChatRequest::default()
        };
        let body = request_body(&request);
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.post(&body))
            .await
            .map_err(|error| format!("the request task failed: {error}"))?
    }

    fn post(&self, body: &Value) -> Result<Completion, String> {
        let mut request = self.agent.post(&self.url);
        if let Some(key) = &self.api_key {
            request = request.header("Authorization", &format!("Bearer {key}"));
        }
        let mut response = request
            .send_json(body)
            .map_err(|error| format!("cannot reach {}: {error}", self.url))?;
        let status = response.status();
        let answer: Value = response.body_mut().read_json().map_err(|error| {
            format!(
                "{} answered {status} with a body that is not JSON: {error}",
                self.url
            )
        })?;
        if !status.is_success() && answer.get("error").is_none() {
            return Err(format!("{} answered {status}: {answer}", self.url));
        }
        read_response(answer).map_err(|error| format!("{}: {error}", self.url))
    }
}
