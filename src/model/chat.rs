//! Conversations to tokens: messages rendered by the chat template, tokenized, and the loss
//! mask that marks exactly what the policy generated.
//!
//! The mask of an assistant turn starts where the template's generation prompt for that turn
//! ends (the longest common prefix of the history rendered with the generation prompt and the
//! full text) and ends after the first end-of-turn token (`eos_token`) that follows. Template
//! glue after it (the newline of ChatML) is not the policy's.

use super::error::{ModelError, Result};
use super::template::{ChatTemplate, RenderOptions};
use super::tokenizer::ChatTokenizer;
use crate::trajectory::{Message, Role, ToolCall};
use serde_json::{Map, Value, json};

/// A rendered and tokenized conversation.
#[derive(Clone, Debug, PartialEq)]
pub struct EncodedChat {
    /// The text the template rendered.
    pub text: String,
    /// Its tokens.
    pub token_ids: Vec<u32>,
    /// 1 on tokens the policy generated (assistant content, tool-call text, the closing
    /// end-of-turn token), 0 on everything else.
    pub loss_mask: Vec<u8>,
}

/// Which tokens of an encoded conversation the loss covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossOn {
    /// What the policy wrote: assistant content, tool-call text, end-of-turn tokens.
    Policy,
    /// That and the user messages' text (the task's question), as axolotl's
    /// `train_on_inputs` does for the prompt, minus the system prompt and tool results.
    PolicyAndUser,
}

/// A tool call as OpenAI messages carry it, with the arguments as a parsed object when they
/// parse (chat templates apply `tojson` to them).
fn tool_call_json(call: &ToolCall) -> Value {
    let arguments = call
        .parsed_arguments()
        .unwrap_or_else(|| Value::String(call.arguments.clone()));
    let mut object = Map::new();
    if let Some(id) = &call.id {
        object.insert("id".into(), Value::String(id.clone()));
    }
    object.insert("type".into(), json!("function"));
    object.insert(
        "function".into(),
        json!({"name": call.name, "arguments": arguments}),
    );
    Value::Object(object)
}

/// A message as the OpenAI chat format (and so every chat template) expects it.
pub fn message_json(message: &Message) -> Value {
    let mut object = Map::new();
    object.insert(
        "role".into(),
        Value::String(message.role.as_str().to_string()),
    );
    object.insert("content".into(), Value::String(message.content.clone()));
    if let Some(reasoning) = &message.reasoning {
        object.insert("reasoning_content".into(), Value::String(reasoning.clone()));
    }
    if !message.tool_calls.is_empty() {
        let calls = message.tool_calls.iter().map(tool_call_json).collect();
        object.insert("tool_calls".into(), Value::Array(calls));
    }
    if let Some(id) = &message.tool_call_id {
        object.insert("tool_call_id".into(), Value::String(id.clone()));
    }
    if let Some(name) = &message.name {
        object.insert("name".into(), Value::String(name.clone()));
    }
    Value::Object(object)
}

/// Every message as OpenAI JSON.
pub fn messages_json(messages: &[Message]) -> Vec<Value> {
    messages.iter().map(message_json).collect()
}

/// The tokenizer and the chat template together: how a conversation becomes tokens.
#[derive(Clone, Debug)]
pub struct Chat {
    /// The tokenizer.
    pub tokenizer: ChatTokenizer,
    /// The chat template.
    pub template: ChatTemplate,
}

impl Chat {
    /// Pairs a tokenizer and a template, checking that every `<|...|>` token the template
    /// writes and its end-of-turn token are single tokens of the tokenizer.
    pub fn new(tokenizer: ChatTokenizer, template: ChatTemplate) -> Result<Self> {
        for token in template.literal_special_tokens() {
            tokenizer.require(
                &token,
                &format!("the chat template ({}) writes it", template.source_name()),
            )?;
        }
        if !template.eos_token().is_empty() {
            tokenizer.require(
                template.eos_token(),
                "tokenizer_config.json names it eos_token, the end of a turn",
            )?;
        }
        Ok(Self {
            tokenizer,
            template,
        })
    }

    /// The id of the token that ends a policy turn.
    pub fn end_of_turn_id(&self) -> Option<u32> {
        self.tokenizer.token_id(self.template.eos_token())
    }

    /// The text that prompts the policy: the conversation and the assistant header.
    pub fn prompt_text(&self, messages: &[Message], tools: &[Value]) -> Result<String> {
        self.template.render(
            &messages_json(messages),
            tools,
            &RenderOptions::generation_prompt(true),
        )
    }

    /// The tokens that prompt the policy.
    pub fn prompt_ids(&self, messages: &[Message], tools: &[Value]) -> Result<Vec<u32>> {
        self.tokenizer.encode(&self.prompt_text(messages, tools)?)
    }

    /// A whole conversation with its loss mask on the policy's tokens.
    pub fn encode(&self, messages: &[Message], tools: &[Value]) -> Result<EncodedChat> {
        self.encode_json(&messages_json(messages), tools)
    }

    /// A whole conversation with its loss mask on the tokens `loss_on` names.
    pub fn encode_for(
        &self,
        messages: &[Message],
        tools: &[Value],
        loss_on: LossOn,
    ) -> Result<EncodedChat> {
        self.encode_json_for(&messages_json(messages), tools, loss_on)
    }

    /// A whole conversation given as OpenAI JSON messages, with its loss mask on the policy's
    /// tokens.
    pub fn encode_json(&self, messages: &[Value], tools: &[Value]) -> Result<EncodedChat> {
        self.encode_json_for(messages, tools, LossOn::Policy)
    }

    fn encode_json_for(
        &self,
        messages: &[Value],
        tools: &[Value],
        loss_on: LossOn,
    ) -> Result<EncodedChat> {
        let text =
            self.template
                .render(messages, tools, &RenderOptions::generation_prompt(false))?;
        let mut spans = self.assistant_spans(messages, tools, &text)?;
        if loss_on == LossOn::PolicyAndUser {
            spans.extend(self.user_spans(messages, tools, &text)?);
        }
        let (token_ids, offsets) = self.tokenizer.encode_with_offsets(&text)?;
        let loss_mask = offsets
            .iter()
            .map(|&(start, _)| {
                u8::from(spans.iter().any(|&(from, to)| start >= from && start < to))
            })
            .collect();
        Ok(EncodedChat {
            text,
            token_ids,
            loss_mask,
        })
    }

    /// Byte ranges of `text` the policy wrote, one per assistant message.
    fn assistant_spans(
        &self,
        messages: &[Value],
        tools: &[Value],
        text: &str,
    ) -> Result<Vec<(usize, usize)>> {
        let end_of_turn = self.template.eos_token();
        let mut spans = Vec::new();
        for (index, message) in messages.iter().enumerate() {
            if message.get("role").and_then(Value::as_str) != Some(Role::Assistant.as_str()) {
                continue;
            }
            let prompt = self.template.render(
                &messages[..index],
                tools,
                &RenderOptions::generation_prompt(true),
            )?;
            let start = common_prefix_len(&prompt, text);
            let end = match (end_of_turn.is_empty(), text[start..].find(end_of_turn)) {
                (false, Some(found)) => start + found + end_of_turn.len(),
                _ => text.len(),
            };
            spans.push((start, end));
        }
        Ok(spans)
    }

    /// Byte ranges of `text` holding the user messages' content, one per user message.
    fn user_spans(
        &self,
        messages: &[Value],
        tools: &[Value],
        text: &str,
    ) -> Result<Vec<(usize, usize)>> {
        let mut spans = Vec::new();
        for (index, message) in messages.iter().enumerate() {
            if message.get("role").and_then(Value::as_str) != Some(Role::User.as_str()) {
                continue;
            }
            let Some(content) = message.get("content").and_then(Value::as_str) else {
                continue;
            };
            let before = self.template.render(
                &messages[..index],
                tools,
                &RenderOptions::generation_prompt(false),
            )?;
            let from = common_prefix_len(&before, text);
            if let Some(found) = text[from..].find(content) {
                spans.push((from + found, from + found + content.len()));
            }
        }
        Ok(spans)
    }

    /// The tokens the environment adds after the policy's turn ended with its end-of-turn
    /// token: `observations` (tool results, a user reply) in the template's format, then the
    /// header of the next assistant turn. `history` ends with that assistant turn.
    pub fn observation_ids(
        &self,
        history: &[Message],
        observations: &[Message],
        tools: &[Value],
    ) -> Result<Vec<u32>> {
        let before = self.template.render(
            &messages_json(history),
            tools,
            &RenderOptions::generation_prompt(false),
        )?;
        let mut all = history.to_vec();
        all.extend_from_slice(observations);
        let after = self.template.render(
            &messages_json(&all),
            tools,
            &RenderOptions::generation_prompt(true),
        )?;
        let end_of_turn = self.template.eos_token();
        let cut = match before.rfind(end_of_turn) {
            Some(found) if !end_of_turn.is_empty() => found + end_of_turn.len(),
            _ => before.len(),
        };
        if !after.starts_with(&before[..cut]) {
            return Err(ModelError::Template {
                source_name: self.template.source_name().to_string(),
                message:
                    "rendering more messages changed the text of earlier ones, so the observation \
                          cannot be appended to the cache; re-encode the whole conversation instead"
                        .into(),
            });
        }
        self.tokenizer.encode(&after[cut..])
    }
}

fn common_prefix_len(a: &str, b: &str) -> usize {
    let mut len = 0;
    for ((index, x), y) in a.char_indices().zip(b.chars()) {
        if x != y {
            return index;
        }
        len = index + x.len_utf8();
    }
    len
}
