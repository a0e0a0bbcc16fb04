//! OpenHands events as chat messages. An event is an action (`message`, `run`, `read`,
//! `edit`, `think`, `finish`, …) or an observation of one (`run`, `read`, `error`, …). Two
//! schemas are in the wild: the current one `{id, source, action | observation, args |
//! content + extras, cause, tool_call_metadata{function_name, tool_call_id, model_response}}`
//! and an older flat one (`{action, command, thought, …}`, `{observation, content, …}`)
//! without sources or tool-call ids, which older evaluation and resolver outputs hold.
//!
//! Messages become user or assistant messages; every other action becomes an assistant
//! tool call (its `thought` the message text, its arguments the model's own call when the
//! event keeps the model response, else the action's arguments), and every observation the
//! tool result of the call it answers (an empty result shows the event's own line, such as
//! `Command … executed with exit code 0.`). `finish` gives the final answer. Bookkeeping events
//! (agent state changes, recalls, nulls) are counted, not turned into messages. What a
//! message does not name stays in its `extra`.

use super::fields::{Object, kind, text_of};
use crate::trajectory::{Message, Role, ToolCall};
use serde_json::Value;
use std::collections::BTreeMap;

/// Actions and observations that say nothing the conversation shows.
const BOOKKEEPING: [&str; 6] = [
    "null",
    "recall",
    "change_agent_state",
    "agent_state_changed",
    "condensation",
    "condensation_request",
];

/// Fields of an action's arguments that describe how OpenHands ran it, not what was asked.
const RUN_DETAILS: [&str; 12] = [
    "thought",
    "impl_source",
    "translated_ipython_code",
    "is_input",
    "blocking",
    "hidden",
    "confirmation_state",
    "keep_prompt",
    "is_confirmed",
    "action_risk",
    "security_risk",
    "kernel_init_code",
];

/// Event fields that carry no conversation content and stay with the message as `extra`.
const EVENT_KEYS: [&str; 3] = ["action", "observation", "args"];

/// A conversation read from events.
#[derive(Debug, Default)]
pub struct Conversation {
    /// The messages, in event order.
    pub messages: Vec<Message>,
    /// The text of the `finish` action, if the agent finished.
    pub final_answer: Option<String>,
    /// Bookkeeping events left out, by kind.
    pub left_out: BTreeMap<String, u64>,
}

/// Builds a conversation from events one at a time.
#[derive(Default)]
pub struct EventReader {
    conversation: Conversation,
    /// The model response the last assistant message came from, so the calls of one
    /// response share a message.
    last_response: Option<String>,
    /// Calls made and not yet answered, oldest first: (id, name).
    open_calls: Vec<(String, String)>,
    calls_made: usize,
}

impl EventReader {
    /// Reads one event found at `path` (`[3]`, `history[3]`).
    pub fn event(&mut self, event: Value, path: &str) -> Result<(), String> {
        let Value::Object(mut event) = event else {
            return Err(format!(
                "{path}: expected an event object, found {}",
                kind(&event)
            ));
        };
        let action = event
            .get("action")
            .and_then(Value::as_str)
            .map(str::to_string);
        let observation = event
            .get("observation")
            .and_then(Value::as_str)
            .map(str::to_string);
        match (action, observation) {
            (Some(kind), _) | (None, Some(kind)) if BOOKKEEPING.contains(&kind.as_str()) => {
                *self.conversation.left_out.entry(kind).or_default() += 1;
            }
            (Some(action), _) => self.action(&action, &mut event),
            (None, Some(observation)) => self.observation(&observation, event),
            (None, None) => {
                return Err(format!(
                    "{path}: neither `action` nor `observation` names the event"
                ));
            }
        }
        Ok(())
    }

    /// The conversation read so far.
    pub fn finish(self) -> Conversation {
        self.conversation
    }

    fn action(&mut self, action: &str, event: &mut Object) {
        let mut args = arguments(event);
        let source = event
            .get("source")
            .and_then(Value::as_str)
            .map(str::to_string);
        let thought = take_text(&mut args, "thought");
        match action {
            "system" => self.push(
                Message::system(take_text(&mut args, "content")),
                args,
                event,
            ),
            "message" => {
                let role = match source.as_deref() {
                    Some("user") => Role::User,
                    Some(_) => Role::Assistant,
                    None if self.has_assistant() => Role::Assistant,
                    None => Role::User,
                };
                let content = take_text(&mut args, "content");
                self.push(Message::new(role, content), args, event);
            }
            "finish" => {
                let final_thought = take_text(&mut args, "final_thought");
                let text = [final_thought, thought, message_line(event)]
                    .into_iter()
                    .find(|text| !text.trim().is_empty())
                    .unwrap_or_default();
                self.conversation.final_answer = Some(text.clone()).filter(|t| !t.is_empty());
                let mut message = Message::assistant(text);
                if let Some(call) = self.metadata_call(event, "finish", &args) {
                    message.tool_calls.push(call);
                }
                self.push(message, args, event);
            }
            "think" if event.get("tool_call_metadata").is_none() => {
                self.push(Message::assistant(thought), args, event)
            }
            _ => {
                let call = self
                    .metadata_call(event, action, &args)
                    .unwrap_or_else(|| self.own_call(action, &args));
                self.open_calls
                    .push((call.id.clone().unwrap_or_default(), call.name.clone()));
                let response = response_id(event);
                if response.is_some() && response == self.last_response && self.last_is_assistant()
                {
                    let last = self
                        .conversation
                        .messages
                        .last_mut()
                        .expect("checked above");
                    last.tool_calls.push(call);
                    return;
                }
                let mut message = Message::assistant(thought);
                message.tool_calls.push(call);
                self.push(message, args, event);
                self.last_response = response;
            }
        }
    }

    fn observation(&mut self, observation: &str, mut event: Object) {
        let mut content = take_text(&mut event, "content");
        if content.is_empty() {
            content = message_line(&event);
        }
        let metadata = event.get("tool_call_metadata");
        let id = metadata
            .and_then(|metadata| metadata.get("tool_call_id"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let answered = match &id {
            Some(id) => self.open_calls.iter().position(|(open, _)| open == id),
            None => (!self.open_calls.is_empty()).then_some(0),
        };
        let call = answered.map(|index| self.open_calls.remove(index));
        let mut message = Message::tool(content);
        message.tool_call_id = id.or_else(|| call.as_ref().map(|(id, _)| id.clone()));
        message.name = metadata
            .and_then(|metadata| metadata.get("function_name"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| call.map(|(_, name)| name))
            .or_else(|| Some(observation.to_string()));
        message.is_error = observation == "error";
        message
            .extra
            .insert("observation".into(), observation.into());
        self.last_response = None;
        self.push(message, Object::new(), &mut event);
    }

    /// The call as the model made it, from the event's tool-call metadata.
    fn metadata_call(&self, event: &Object, action: &str, args: &Object) -> Option<ToolCall> {
        let metadata = event.get("tool_call_metadata")?;
        let id = metadata.get("tool_call_id").and_then(Value::as_str)?;
        let name = metadata
            .get("function_name")
            .and_then(Value::as_str)
            .unwrap_or(action);
        let asked = metadata
            .pointer("/model_response/choices/0/message/tool_calls")
            .and_then(Value::as_array)
            .and_then(|calls| {
                calls
                    .iter()
                    .find(|call| call.get("id").and_then(Value::as_str) == Some(id))
            })
            .and_then(|call| call.pointer("/function/arguments"));
        let mut call = match asked {
            Some(arguments) => ToolCall::from_json_arguments(name, arguments),
            None => ToolCall::from_json_arguments(name, &asked_arguments(args)),
        };
        call.id = Some(id.to_string());
        Some(call)
    }

    /// A call for an action that names none: the action's name and arguments, a fresh id.
    fn own_call(&mut self, action: &str, args: &Object) -> ToolCall {
        self.calls_made += 1;
        let mut call = ToolCall::from_json_arguments(action, &asked_arguments(args));
        call.id = Some(format!("openhands-call-{}", self.calls_made));
        call
    }

    /// Appends a message, keeping what the action's arguments and the event had besides.
    fn push(&mut self, mut message: Message, args: Object, event: &mut Object) {
        for key in EVENT_KEYS {
            event.remove(key);
        }
        event.remove("content");
        if !args.is_empty() {
            message.extra.insert("args".into(), Value::Object(args));
        }
        message.extra.append(event);
        if message.role != Role::Assistant {
            self.last_response = None;
        }
        self.conversation.messages.push(message);
    }

    fn has_assistant(&self) -> bool {
        self.conversation
            .messages
            .iter()
            .any(|message| message.role == Role::Assistant)
    }

    fn last_is_assistant(&self) -> bool {
        self.conversation
            .messages
            .last()
            .is_some_and(|message| message.role == Role::Assistant)
    }
}

/// An action's arguments: its `args` object (current schema), else its other fields.
fn arguments(event: &mut Object) -> Object {
    if let Some(Value::Object(args)) = event.remove("args") {
        return args;
    }
    let keep = [
        "id",
        "timestamp",
        "source",
        "message",
        "cause",
        "timeout",
        "tool_call_metadata",
        "llm_metrics",
        "action",
    ];
    let keys: Vec<String> = event
        .keys()
        .filter(|key| !keep.contains(&key.as_str()))
        .cloned()
        .collect();
    keys.into_iter()
        .filter_map(|key| event.remove(&key).map(|value| (key, value)))
        .collect()
}

/// The arguments of what was asked: the action's arguments less how OpenHands ran it.
fn asked_arguments(args: &Object) -> Value {
    Value::Object(
        args.iter()
            .filter(|(key, _)| !RUN_DETAILS.contains(&key.as_str()))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect(),
    )
}

/// Removes a text field, as text (absent or null: empty).
fn take_text(object: &mut Object, key: &str) -> String {
    match object.remove(key) {
        None | Some(Value::Null) => String::new(),
        Some(value) => text_of(&value),
    }
}

/// The event's one-line description (`message`), as text.
fn message_line(event: &Object) -> String {
    event
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The id of the model response an action came from, if the event keeps it.
fn response_id(event: &Object) -> Option<String> {
    event
        .get("tool_call_metadata")?
        .pointer("/model_response/id")?
        .as_str()
        .map(str::to_string)
}
