//! The tool-call protocol of the chat templates: an assistant turn holds text and any number
//! of `<tool_call>{"name": …, "arguments": {…}}</tool_call>` blocks. Parsing never fails: a
//! malformed block becomes a `CallError` that the environment answers with an observation
//! saying what was wrong, and that counts as a format failure.

use super::schema::{self, SchemaError};
use crate::trajectory::{ArgumentsEncoding, Message, ToolCall};
use serde_json::{Map, Value};

/// The tag that opens a call.
pub const OPEN_TAG: &str = "<tool_call>";
/// The tag that closes a call.
pub const CLOSE_TAG: &str = "</tool_call>";
/// How a call must be written, appended to format errors so the policy can correct itself.
pub const CALL_FORMAT_HINT: &str = "Write each call as <tool_call>{\"name\": \"TOOL\", \"arguments\": {\"ARGUMENT\": VALUE}}</tool_call>.";

/// A call that parsed and fits its tool's schema.
#[derive(Clone, Debug, PartialEq)]
pub struct ValidCall {
    /// The tool's name.
    pub name: String,
    /// The arguments object.
    pub arguments: Map<String, Value>,
}

/// Why a `<tool_call>` block is not a valid call.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The block is not JSON.
    #[error("the tool call is not valid JSON ({reason}){}", if *.unclosed { "; the block has no </tool_call>" } else { "" })]
    InvalidJson {
        /// The parser's message.
        reason: String,
        /// Whether the block was never closed.
        unclosed: bool,
    },
    /// The JSON is not an object.
    #[error("the tool call must be a JSON object with `name` and `arguments`, not {found}")]
    NotAnObject {
        /// The JSON type found.
        found: &'static str,
    },
    /// No string `name`.
    #[error("the tool call has no `name` string")]
    MissingName,
    /// `arguments` is not an object.
    #[error("the `arguments` of `{tool}` must be a JSON object, not {found}")]
    ArgumentsNotObject {
        /// The tool.
        tool: String,
        /// The JSON type found.
        found: &'static str,
    },
    /// No tool of that name is offered.
    #[error("there is no tool `{name}` (tools: {known})")]
    UnknownTool {
        /// The name asked for.
        name: String,
        /// The tools offered.
        known: String,
    },
    /// The arguments do not fit the tool's schema.
    #[error(transparent)]
    Schema(#[from] SchemaError),
}

impl CallError {
    /// The observation the environment answers a malformed call with.
    pub fn observation(&self) -> String {
        match self {
            Self::InvalidJson { .. }
            | Self::NotAnObject { .. }
            | Self::MissingName
            | Self::ArgumentsNotObject { .. } => format!("error: {self}. {CALL_FORMAT_HINT}"),
            Self::UnknownTool { .. } | Self::Schema(_) => format!("error: {self}."),
        }
    }
}

/// One `<tool_call>` block of a turn.
#[derive(Clone, Debug, PartialEq)]
pub struct CallBlock {
    /// The id the observation answers (`call_<turn>_<k>`).
    pub id: String,
    /// The text between the tags, trimmed.
    pub raw: String,
    /// The call, or why it is malformed.
    pub call: Result<ValidCall, CallError>,
}

impl CallBlock {
    /// The call as the trajectory stores it: valid calls with their arguments object,
    /// malformed ones with whatever name could be read and the raw block text.
    pub fn to_tool_call(&self) -> ToolCall {
        let mut stored = match &self.call {
            Ok(call) => ToolCall {
                id: None,
                name: call.name.clone(),
                arguments: raw_member(&self.raw, "arguments").map_or_else(
                    || Value::Object(call.arguments.clone()).to_string(),
                    str::to_string,
                ),
                encoding: ArgumentsEncoding::Object,
            },
            Err(_) => {
                let parsed: Option<Value> = serde_json::from_str(&self.raw).ok();
                let name = parsed
                    .as_ref()
                    .and_then(|value| value.get("name"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                match parsed.as_ref().and_then(|value| value.get("arguments")) {
                    Some(arguments) if !name.is_empty() => {
                        ToolCall::from_json_arguments(name, arguments)
                    }
                    _ => ToolCall {
                        id: None,
                        name: name.to_string(),
                        arguments: self.raw.clone(),
                        encoding: ArgumentsEncoding::String,
                    },
                }
            }
        };
        stored.id = Some(self.id.clone());
        stored
    }
}

/// The text of member `key` of a JSON object exactly as written (`None` when the text is
/// not an object or has no such member).
fn raw_member<'a>(object: &'a str, key: &str) -> Option<&'a str> {
    let after_space = |from: usize| object.len() - object[from..].trim_start().len();
    let value_end = |from: usize| {
        let mut stream = serde_json::Deserializer::from_str(&object[from..]).into_iter::<Value>();
        stream.next()?.ok()?;
        Some(from + stream.byte_offset())
    };
    let after = |from: usize, punctuation: u8| {
        let at = after_space(from);
        (object.as_bytes().get(at) == Some(&punctuation)).then_some(at + 1)
    };
    let mut pos = after(0, b'{')?;
    loop {
        let key_start = after_space(pos);
        let key_end = value_end(key_start)?;
        let name: String = serde_json::from_str(&object[key_start..key_end]).ok()?;
        let value_start = after_space(after(key_end, b':')?);
        let end = value_end(value_start)?;
        if name == key {
            return Some(&object[value_start..end]);
        }
        pos = after(end, b',')?;
    }
}

/// An assistant turn split into its text and its calls.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedTurn {
    /// The text outside the call blocks, trimmed.
    pub content: String,
    /// The call blocks in order.
    pub calls: Vec<CallBlock>,
}

impl ParsedTurn {
    /// Number of malformed calls.
    pub fn format_failures(&self) -> usize {
        self.calls
            .iter()
            .filter(|block| block.call.is_err())
            .count()
    }

    /// The assistant message for the trajectory's messages view.
    pub fn to_message(&self) -> Message {
        let mut message = Message::assistant(self.content.clone());
        message.tool_calls = self.calls.iter().map(CallBlock::to_tool_call).collect();
        message
    }
}

/// Splits an assistant turn into text and calls, and checks each call against the tool
/// specifications offered (OpenAI `{"type": "function", "function": {…}}` values). Call ids
/// are `call_<turn>_<k>`.
pub fn parse_turn(text: &str, tools: &[Value], turn: usize) -> ParsedTurn {
    let mut content_parts = Vec::new();
    let mut calls = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find(OPEN_TAG) {
        content_parts.push(&rest[..open]);
        let body = &rest[open + OPEN_TAG.len()..];
        let (raw, unclosed, after) = match body.find(CLOSE_TAG) {
            Some(close) => (&body[..close], false, &body[close + CLOSE_TAG.len()..]),
            None => (body, true, ""),
        };
        let id = format!("call_{turn}_{}", calls.len());
        calls.push(CallBlock {
            id,
            raw: raw.trim().to_string(),
            call: parse_call(raw, unclosed).and_then(|call| check_call(call, tools)),
        });
        rest = after;
    }
    content_parts.push(rest);
    let content = content_parts
        .iter()
        .map(|part| part.trim())
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    ParsedTurn { content, calls }
}

/// Reads a block's JSON: an object with a string `name` and an object `arguments`
/// (absent `arguments` read as `{}`).
fn parse_call(raw: &str, unclosed: bool) -> Result<ValidCall, CallError> {
    let value: Value =
        serde_json::from_str(raw.trim()).map_err(|error| CallError::InvalidJson {
            reason: error.to_string(),
            unclosed,
        })?;
    let Value::Object(mut object) = value else {
        return Err(CallError::NotAnObject {
            found: schema::type_name(&value),
        });
    };
    let name = match object.remove("name") {
        Some(Value::String(name)) if !name.trim().is_empty() => name,
        _ => return Err(CallError::MissingName),
    };
    let arguments = match object.remove("arguments") {
        None => Map::new(),
        Some(Value::Object(arguments)) => arguments,
        Some(other) => {
            return Err(CallError::ArgumentsNotObject {
                tool: name,
                found: schema::type_name(&other),
            });
        }
    };
    Ok(ValidCall { name, arguments })
}

/// The name of a tool spec (`function.name`, or a top-level `name`).
pub fn spec_name(spec: &Value) -> Option<&str> {
    spec.get("function")
        .unwrap_or(spec)
        .get("name")
        .and_then(Value::as_str)
}

/// The parameters schema of a tool spec.
pub fn spec_parameters(spec: &Value) -> Option<&Value> {
    spec.get("function").unwrap_or(spec).get("parameters")
}

/// Checks a call against the tools offered: the tool exists and the arguments fit.
pub fn check_call(call: ValidCall, tools: &[Value]) -> Result<ValidCall, CallError> {
    let Some(spec) = tools
        .iter()
        .find(|spec| spec_name(spec) == Some(&call.name))
    else {
        let known: Vec<&str> = tools.iter().filter_map(spec_name).collect();
        return Err(CallError::UnknownTool {
            name: call.name,
            known: if known.is_empty() {
                "none".into()
            } else {
                known.join(", ")
            },
        });
    };
    if let Some(parameters) = spec_parameters(spec) {
        schema::check_arguments(&call.name, parameters, &call.arguments)?;
    }
    Ok(call)
}

/// Checks a call as a trajectory stored it (re-scoring stored or imported rollouts).
pub fn check_stored_call(call: &ToolCall, tools: &[Value]) -> Result<ValidCall, CallError> {
    if call.name.trim().is_empty() {
        return Err(match serde_json::from_str::<Value>(&call.arguments) {
            Ok(_) => CallError::MissingName,
            Err(error) => CallError::InvalidJson {
                reason: error.to_string(),
                unclosed: false,
            },
        });
    }
    let arguments = match call.parsed_arguments() {
        Some(Value::Object(arguments)) => arguments,
        Some(other) => {
            return Err(CallError::ArgumentsNotObject {
                tool: call.name.clone(),
                found: schema::type_name(&other),
            });
        }
        None if call.arguments.trim().is_empty() => Map::new(),
        None => {
            return Err(CallError::ArgumentsNotObject {
                tool: call.name.clone(),
                found: "text that is not JSON",
            });
        }
    };
    let valid = ValidCall {
        name: call.name.clone(),
        arguments,
    };
    if tools.is_empty() {
        Ok(valid)
    } else {
        check_call(valid, tools)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_are_read_as_written() {
        let object = "{ \"na\\\"me\" : \"x}\" ,\n \"arguments\":{\"a\": [1, {\"b\": \"}\"}]}  }";
        assert_eq!(
            raw_member(object, "arguments"),
            Some("{\"a\": [1, {\"b\": \"}\"}]}")
        );
        assert_eq!(raw_member(object, "na\"me"), Some("\"x}\""));
        assert_eq!(raw_member(object, "missing"), None);
        assert_eq!(raw_member("[1]", "arguments"), None);
    }
}
