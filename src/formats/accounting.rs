//! The loss rule: every record an importer reads must account for the text it was given. The
//! source's text is every string under a text key (`TEXT_KEYS`: content, text, value,
//! reasoning, arguments, output, …) that holds more than one word; each must reach the stored
//! records (a message's content or reasoning, a tool call's name or arguments, a tool result,
//! the task's prompt and answer, the final answer), whole or inside a longer text. A string
//! that holds JSON counts by the strings inside it. Text kept only in `extra` is not stored
//! text: a record that would lose some is refused, naming the field. What a format leaves out
//! on purpose is listed, with why, in `LEFT_OUT` (`docs/FORMATS.md` prints the same list).

use super::{Format, Item};
use crate::trajectory::{Message, Trajectory};
use serde_json::Value;
use std::collections::HashSet;

/// Keys whose strings are text (what was said), not metadata.
pub const TEXT_KEYS: &[&str] = &[
    "content",
    "text",
    "value",
    "reasoning",
    "reasoning_content",
    "thinking",
    "thought",
    "arguments",
    "output",
    "observation",
    "action",
    "response",
    "prompt",
    "completion",
    "message",
    "question",
    "problem",
    "answer",
];

/// A field a format leaves out of the stored text on purpose.
#[derive(Clone, Copy, Debug)]
pub struct LeftOut {
    /// The format.
    pub format: Format,
    /// The field: its path from the record with array indices dropped (`history.action`),
    /// or `**.key` for that key at any depth.
    pub field: &'static str,
    /// Why it is not stored as text (it is kept in the record's `extra` unless this says so).
    pub why: &'static str,
}

/// Every field a format leaves out of the stored text on purpose.
pub const LEFT_OUT: &[LeftOut] = &[
    LeftOut {
        format: Format::SweAgent,
        field: "history.action",
        why: "the command line a tool call renders; the call is stored",
    },
    LeftOut {
        format: Format::SweAgent,
        field: "trajectory.action",
        why: "the same command lines, step by step",
    },
    LeftOut {
        format: Format::OpenHands,
        field: "message",
        why: "an event's one-line summary (`Reading file: …`); its call or result is stored",
    },
    LeftOut {
        format: Format::OpenHands,
        field: "history.message",
        why: "the same summaries in an evaluation row's events",
    },
    LeftOut {
        format: Format::Inspect,
        field: "**.view",
        why: "Inspect's rendering of a tool call for its viewer; the call is stored",
    },
    LeftOut {
        format: Format::InspectEval,
        field: "**.view",
        why: "Inspect's rendering of a tool call for its viewer; the call is stored",
    },
    LeftOut {
        format: Format::MathShepherd,
        field: "input",
        why: "the solution with `ки` step marks; `label` holds the same steps, stored",
    },
    LeftOut {
        format: Format::Prm800k,
        field: "label.steps.completions.text",
        why: "the candidate steps a rater did not choose (kept with their ratings)",
    },
];

/// The text a source record holds, with the field each piece sits in.
#[derive(Debug, Default)]
pub struct SourceText {
    pieces: Vec<(String, String)>,
}

impl SourceText {
    /// The text of `record` as `format` reads it (its left-out fields skipped).
    pub fn of(record: &Value, format: Format) -> Self {
        let left_out: Vec<&str> = LEFT_OUT
            .iter()
            .filter(|rule| rule.format == format)
            .map(|rule| rule.field)
            .collect();
        let mut text = Self::default();
        let mut walk = Walk {
            left_out: &left_out,
            path: String::new(),
            keys: Vec::new(),
            out: &mut text.pieces,
        };
        walk.value(record, false);
        text
    }

    /// Checks that every piece reached `items`; the first that did not is an error naming
    /// its field.
    pub fn check(&self, items: &[Item]) -> Result<(), String> {
        if self.pieces.is_empty() {
            return Ok(());
        }
        let stored = StoredText::of(items);
        for (path, text) in &self.pieces {
            if !stored.holds(text) {
                return Err(format!(
                    "{path}: this text is not stored anywhere a reader looks ({}); \
                     nothing from this record was imported (name the format with --format, \
                     or report the file's shape)",
                    preview(text)
                ));
            }
        }
        Ok(())
    }
}

/// The first words of a text, for an error message.
fn preview(text: &str) -> String {
    let words: String = text
        .split_whitespace()
        .take(8)
        .collect::<Vec<_>>()
        .join(" ");
    let cut: String = words.chars().take(60).collect();
    let cut = crate::text::inert(&cut);
    if cut.len() < text.trim().len() {
        format!("\"{cut}…\"")
    } else {
        format!("\"{cut}\"")
    }
}

/// A walk over a record collecting its text.
struct Walk<'a> {
    left_out: &'a [&'a str],
    path: String,
    keys: Vec<&'a str>,
    out: &'a mut Vec<(String, String)>,
}

impl<'a> Walk<'a> {
    fn value(&mut self, value: &'a Value, text_key: bool) {
        match value {
            Value::String(text) if text_key && is_text(text) => {
                self.out.push((self.path.clone(), text.clone()));
            }
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    let length = self.path.len();
                    self.path.push_str(&format!("[{index}]"));
                    self.value(item, text_key);
                    self.path.truncate(length);
                }
            }
            Value::Object(object) => {
                for (key, item) in object {
                    self.keys.push(key);
                    if !self.is_left_out() {
                        let length = self.path.len();
                        if !self.path.is_empty() {
                            self.path.push('.');
                        }
                        self.path.push_str(key);
                        self.value(item, TEXT_KEYS.contains(&key.as_str()));
                        self.path.truncate(length);
                    }
                    self.keys.pop();
                }
            }
            _ => {}
        }
    }

    /// Whether the field at the current keys is one the format leaves out.
    fn is_left_out(&self) -> bool {
        self.left_out
            .iter()
            .any(|field| match field.strip_prefix("**.") {
                Some(key) => self.keys.last() == Some(&key),
                None => field.split('.').eq(self.keys.iter().copied()),
            })
    }
}

/// Whether a string is text: more than one word (a single word is a tag, an id or a number).
fn is_text(text: &str) -> bool {
    text.split_whitespace().nth(1).is_some()
}

/// The text the stored records hold, by field (trimmed), with all of it joined for pieces
/// that sit inside a longer text.
struct StoredText<'a> {
    fields: HashSet<&'a str>,
    parsed: HashSet<String>,
    joined: std::cell::OnceCell<String>,
}

impl<'a> StoredText<'a> {
    fn of(items: &'a [Item]) -> Self {
        let mut stored = Self {
            fields: HashSet::new(),
            parsed: HashSet::new(),
            joined: std::cell::OnceCell::new(),
        };
        for item in items {
            match item {
                Item::Trajectory(trajectory) => stored.add_trajectory(trajectory),
                Item::Task(task) => {
                    stored.add_messages(&task.prompt);
                    stored.add(task.ground_truth.as_deref());
                    stored.add(task.reference_solution.as_deref());
                }
            }
        }
        stored
    }

    fn add_trajectory(&mut self, trajectory: &'a Trajectory) {
        self.add_messages(&trajectory.messages);
        self.add(trajectory.final_answer.as_deref());
    }

    fn add_messages(&mut self, messages: &'a [Message]) {
        for message in messages {
            self.add(Some(&message.content));
            self.add(message.reasoning.as_deref());
            self.add(message.name.as_deref());
            for call in &message.tool_calls {
                self.add(Some(&call.name));
                self.add(Some(&call.arguments));
                if let Some(arguments) = call.parsed_arguments() {
                    let mut strings = Vec::new();
                    collect_strings(&arguments, &mut strings);
                    self.parsed
                        .extend(strings.into_iter().map(|text| text.trim().to_string()));
                }
            }
        }
    }

    fn add(&mut self, text: Option<&'a str>) {
        if let Some(text) = text {
            self.fields.insert(text.trim());
        }
    }

    /// Whether `text` is stored: a field equal to it, inside one, or (for JSON) every
    /// string inside it stored.
    fn holds(&self, text: &str) -> bool {
        let text = text.trim();
        if self.fields.contains(text) || self.parsed.contains(text) {
            return true;
        }
        if self.joined().contains(text) {
            return true;
        }
        match serde_json::from_str::<Value>(text) {
            Ok(Value::String(inner)) => self.holds(&inner),
            Ok(value @ (Value::Object(_) | Value::Array(_))) => {
                let mut inner = Vec::new();
                collect_strings(&value, &mut inner);
                inner
                    .iter()
                    .filter(|inner| is_text(inner))
                    .all(|inner| self.holds(inner))
            }
            _ => false,
        }
    }

    fn joined(&self) -> &str {
        self.joined.get_or_init(|| {
            let mut joined = String::new();
            for text in self
                .fields
                .iter()
                .copied()
                .chain(self.parsed.iter().map(String::as_str))
            {
                joined.push_str(text);
                joined.push('\u{0}');
            }
            joined
        })
    }
}

/// Every string inside a JSON value.
fn collect_strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(text) => out.push(text.clone()),
        Value::Array(items) => items.iter().for_each(|item| collect_strings(item, out)),
        Value::Object(object) => object.values().for_each(|item| collect_strings(item, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::{Message, Task, TrajectoryId};
    use serde_json::json;

    fn items(messages: Vec<Message>) -> Vec<Item> {
        vec![Item::Trajectory(Box::new(Trajectory::new(
            TrajectoryId(1),
            messages,
        )))]
    }

    #[test]
    fn text_in_an_unread_field_is_named() {
        let record = json!({"messages": [{"role": "user", "content": [
            {"type": "text", "value": "what is two plus two"}]}]});
        let source = SourceText::of(&record, Format::OpenaiMessages);
        let error = source.check(&items(vec![Message::user("")])).unwrap_err();
        assert!(
            error.starts_with("messages[0].content[0].value: "),
            "{error}"
        );
        assert!(error.contains("\"what is two plus two\""), "{error}");
        source
            .check(&items(vec![Message::user("Q: what is two plus two?")]))
            .unwrap();
    }

    #[test]
    fn tags_json_and_left_out_fields_are_not_text() {
        let record = json!({"action": "message", "output": "{\"a\": \"one two\", \"b\": 3}",
            "label": {"steps": [{"completions": [{"text": "fly to Seattle please"}]}]}});
        let stored = items(vec![Message::tool("result: one two")]);
        SourceText::of(&record, Format::Prm800k)
            .check(&stored)
            .unwrap();
        let error = SourceText::of(&record, Format::OpenaiMessages)
            .check(&stored)
            .unwrap_err();
        assert!(
            error.starts_with("label.steps[0].completions[0].text: "),
            "{error}"
        );
        let task = Item::Task(Box::new(Task::new("t", "s", "fly to Seattle please")));
        SourceText::of(&record, Format::OpenaiMessages)
            .check(&[stored[0].clone(), task])
            .unwrap();
    }
}
