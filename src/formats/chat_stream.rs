//! Streamed chat completions: the `chat.completion.chunk`s `rollscope serve` sends as
//! server-sent events when a request asks for `stream: true`.

use super::ToolArguments;
use super::chat::write_message;
use super::chat_api::{ResponseInfo, usage};
use crate::trajectory::Message;
use serde_json::{Value, json};

/// What one streamed chunk carries for its choice.
#[derive(Clone, Debug, PartialEq)]
pub enum ChunkDelta<'a> {
    /// The first chunk of a choice: the role.
    Role,
    /// More text of the reply.
    Content(&'a str),
    /// The whole message at once (a reply with tool calls): its text and its calls.
    Message(&'a Message),
    /// The last chunk of a choice: why it ended.
    Finish(&'a str),
}

/// A `chat.completion.chunk` of a streamed reply (one server-sent event's data).
pub fn chunk_body(info: &ResponseInfo, index: usize, delta: &ChunkDelta<'_>) -> Value {
    let (delta, finish_reason) = match delta {
        ChunkDelta::Role => (json!({"role": "assistant", "content": ""}), Value::Null),
        ChunkDelta::Content(text) => (json!({"content": text}), Value::Null),
        ChunkDelta::Message(message) => {
            let mut written = write_message(message, false, ToolArguments::String);
            if let Some(Value::Array(calls)) = written.get_mut("tool_calls") {
                for (position, call) in calls.iter_mut().enumerate() {
                    call["index"] = json!(position);
                }
            }
            if let Some(object) = written.as_object_mut() {
                object.remove("role");
            }
            (written, Value::Null)
        }
        ChunkDelta::Finish(reason) => (json!({}), json!(reason)),
    };
    json!({
        "id": info.id,
        "object": "chat.completion.chunk",
        "created": info.created,
        "model": info.model,
        "choices": [{"index": index, "delta": delta, "finish_reason": finish_reason}],
    })
}

/// The last chunk of a streamed reply that asked for usage: no choices, the token counts.
pub fn usage_chunk_body(info: &ResponseInfo) -> Value {
    json!({
        "id": info.id,
        "object": "chat.completion.chunk",
        "created": info.created,
        "model": info.model,
        "choices": [],
        "usage": usage(info),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::ToolCall;

    #[test]
    fn chunks_carry_the_role_text_calls_and_finish() {
        let info = ResponseInfo {
            id: "chatcmpl-1".into(),
            ..ResponseInfo::default()
        };
        let role = chunk_body(&info, 0, &ChunkDelta::Role);
        assert_eq!(role["object"], "chat.completion.chunk");
        assert_eq!(role["choices"][0]["delta"]["role"], "assistant");
        let text = chunk_body(&info, 2, &ChunkDelta::Content("4"));
        assert_eq!(text["choices"][0]["index"], 2);
        assert_eq!(text["choices"][0]["delta"]["content"], "4");
        let mut message = Message::assistant("");
        message.tool_calls.push(ToolCall {
            id: Some("call_1".into()),
            ..ToolCall::new("calculator", r#"{"expression": "2+2"}"#)
        });
        let calls = chunk_body(&info, 0, &ChunkDelta::Message(&message));
        let call = &calls["choices"][0]["delta"]["tool_calls"][0];
        assert_eq!(
            (call["index"].clone(), call["id"].clone()),
            (json!(0), json!("call_1"))
        );
        let finish = chunk_body(&info, 0, &ChunkDelta::Finish("stop"));
        assert_eq!(finish["choices"][0]["finish_reason"], "stop");
        assert_eq!(usage_chunk_body(&info)["choices"], json!([]));
    }
}
