//! Chat messages: what the policy said (text, reasoning, tool calls) and what the environment
//! answered (tool results).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// Who wrote a message.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum Role {
    /// Instructions set by whoever runs the agent.
    System,
    /// The task or a person's follow-up.
    User,
    /// The policy: text, reasoning and tool calls; the only role that is trained on.
    Assistant,
    /// A tool result injected by the environment (an observation).
    Tool,
    /// A role another tool wrote that has no counterpart here (kept verbatim, e.g. `exit`).
    Other(String),
}

impl Role {
    /// The role's name as OpenAI's chat format spells it.
    pub fn as_str(&self) -> &str {
        match self {
            Self::System => "system",
            Self::User => "user",
            Self::Assistant => "assistant",
            Self::Tool => "tool",
            Self::Other(name) => name,
        }
    }
}

impl From<String> for Role {
    fn from(name: String) -> Self {
        match name.as_str() {
            "system" => Self::System,
            "user" => Self::User,
            "assistant" => Self::Assistant,
            "tool" => Self::Tool,
            _ => Self::Other(name),
        }
    }
}

impl From<Role> for String {
    fn from(role: Role) -> Self {
        role.as_str().to_string()
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a tool call's arguments were written in the source, so exports can write them back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArgumentsEncoding {
    /// A JSON text in a string (OpenAI's convention), or plain text that is not JSON.
    #[default]
    String,
    /// A JSON object written inline (Inspect, the chat templates).
    Object,
    /// A string holding a JSON string that itself holds the JSON object (seen in real files).
    DoubleEncoded,
}

/// A call of a tool by the policy.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call id that links the result back to it, where the source has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The arguments as the raw text the model or file gave.
    pub arguments: String,
    /// How the arguments were encoded in the source.
    #[serde(default, skip_serializing_if = "is_default")]
    pub encoding: ArgumentsEncoding,
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

impl ToolCall {
    /// A call from raw argument text as a model wrote it.
    pub fn new(name: impl Into<String>, arguments: impl Into<String>) -> Self {
        Self {
            id: None,
            name: name.into(),
            arguments: arguments.into(),
            encoding: ArgumentsEncoding::String,
        }
    }

    /// A call from a JSON value found in a file: objects keep their text, strings that hold
    /// JSON are unwrapped once and flagged.
    pub fn from_json_arguments(name: impl Into<String>, arguments: &Value) -> Self {
        let (text, encoding) = match arguments {
            Value::String(text) => match serde_json::from_str::<Value>(text) {
                Ok(Value::String(inner)) if serde_json::from_str::<Value>(&inner).is_ok() => {
                    (inner, ArgumentsEncoding::DoubleEncoded)
                }
                _ => (text.clone(), ArgumentsEncoding::String),
            },
            other => (other.to_string(), ArgumentsEncoding::Object),
        };
        Self {
            id: None,
            name: name.into(),
            arguments: text,
            encoding,
        }
    }

    /// The arguments parsed as JSON, when they parse.
    pub fn parsed_arguments(&self) -> Option<Value> {
        serde_json::from_str(&self.arguments).ok()
    }

    /// The arguments as the source wrote them: a JSON value for objects, a string otherwise.
    pub fn arguments_as_written(&self) -> Value {
        match self.encoding {
            ArgumentsEncoding::Object => self
                .parsed_arguments()
                .unwrap_or_else(|| Value::String(self.arguments.clone())),
            ArgumentsEncoding::String => Value::String(self.arguments.clone()),
            ArgumentsEncoding::DoubleEncoded => {
                Value::String(Value::String(self.arguments.clone()).to_string())
            }
        }
    }
}

/// A byte range inside a message's content: one step of a single-message solution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    /// First byte of the step.
    pub start: u32,
    /// One past the last byte of the step.
    pub end: u32,
}

/// One message of a conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// Its visible text (may be empty when an assistant message holds only tool calls).
    #[serde(default)]
    pub content: String,
    /// The policy's reasoning, where it was kept apart from the content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// Tool calls made by an assistant message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a tool result: the id of the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For a tool result: the tool's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// For a tool result: whether the tool failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// For a tool result: how long the call took, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<f64>,
    /// Steps of a single-message solution, as byte ranges of `content`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spans: Vec<Span>,
    /// Fields the source had that this model does not name, kept verbatim.
    #[serde(flatten, default, skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
}

impl Message {
    /// A message with a role and text and nothing else.
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            reasoning: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
            is_error: false,
            latency_ms: None,
            spans: Vec::new(),
            extra: Map::new(),
        }
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::new(Role::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::new(Role::User, content)
    }

    /// An assistant message.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new(Role::Assistant, content)
    }

    /// A tool result.
    pub fn tool(content: impl Into<String>) -> Self {
        Self::new(Role::Tool, content)
    }

    /// The text of span `index`, or the whole content when the message has no spans.
    pub fn span_text(&self, span: Option<Span>) -> &str {
        match span {
            Some(span) => self
                .content
                .get(span.start as usize..span.end as usize)
                .unwrap_or(""),
            None => &self.content,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn double_encoded_arguments_are_unwrapped_and_written_back() {
        let inner = r#"{"expression": "1+2"}"#;
        let twice = Value::String(Value::String(inner.into()).to_string());
        let call = ToolCall::from_json_arguments("calculator", &twice);
        assert_eq!(call.encoding, ArgumentsEncoding::DoubleEncoded);
        assert_eq!(call.arguments, inner);
        assert_eq!(call.arguments_as_written(), twice);
    }

    #[test]
    fn object_arguments_round_trip_as_objects() {
        let object = serde_json::json!({"b": 1, "a": [2]});
        let call = ToolCall::from_json_arguments("f", &object);
        assert_eq!(call.encoding, ArgumentsEncoding::Object);
        assert_eq!(call.arguments_as_written(), object);
    }

    #[test]
    fn unknown_roles_and_fields_survive() {
        let json = r#"{"role":"exit","content":"done","extra_field":{"x":1}}"#;
        let message: Message = serde_json::from_str(json).unwrap();
        assert_eq!(message.role, Role::Other("exit".into()));
        assert_eq!(serde_json::to_string(&message).unwrap(), json);
    }
}
