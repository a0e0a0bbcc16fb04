//! The state of one file's import: the file, the format's name, and the tasks already handed
//! out, so each distinct task is imported once.

use super::{Format, Item};
use crate::trajectory::{Message, Task, Trajectory, TrajectoryId};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// What every importer needs while reading one file.
pub struct Context<'a> {
    /// The file.
    pub path: &'a Path,
    /// The format it is read as.
    pub format: Format,
    tasks_seen: HashSet<String>,
    group_sizes: HashMap<u64, u32>,
}

impl<'a> Context<'a> {
    /// A context for reading `path` as `format`.
    pub fn new(path: &'a Path, format: Format) -> Self {
        Self {
            path,
            format,
            tasks_seen: HashSet::new(),
            group_sizes: HashMap::new(),
        }
    }

    /// The GRPO group of a sample of `prompt` at `step` (a 32-bit hash of both, so siblings
    /// share it even across files) and its index among this file's samples of that group.
    pub fn group_sample(&mut self, step: Option<u64>, prompt: &str) -> (u64, u32) {
        let mut hasher = Sha256::new();
        hasher.update(step.unwrap_or(0).to_be_bytes());
        hasher.update(prompt.as_bytes());
        let digest = hasher.finalize();
        let group = u64::from(u32::from_be_bytes([
            digest[0], digest[1], digest[2], digest[3],
        ]));
        let size = self.group_sizes.entry(group).or_insert(0);
        *size += 1;
        (group, *size - 1)
    }

    /// A trajectory of these messages, marked with this format (its id is given from its
    /// content once the reader has filled it in: `Intake::record`).
    pub fn trajectory(&self, messages: Vec<Message>) -> Trajectory {
        let mut trajectory = Trajectory::new(TrajectoryId(0), messages);
        trajectory.source_format = self.format.name().to_string();
        trajectory
    }

    /// Gives `task` its content-derived id, points `trajectory` at it, and returns the items
    /// to import: the task (the first time this file meets it), then the trajectory. Message
    /// fields kept in their flattened `extra` under a name the data model uses are renamed
    /// `source_<name>`, so they cannot clash with it (a trajectory's `extra` is an object of
    /// its own and needs no renaming).
    pub fn with_task(&mut self, mut trajectory: Trajectory, task: TaskDraft) -> Vec<Item> {
        let task = self.finish_task(task);
        trajectory.task_id = Some(task.id.clone());
        for message in &mut trajectory.messages {
            rename_named_keys(&mut message.extra, MESSAGE_FIELDS);
        }
        let mut items = self.admit(task);
        items.push(Item::Trajectory(Box::new(trajectory)));
        items
    }

    /// The task as an item unless this file already handed it out.
    pub fn admit(&mut self, task: Task) -> Vec<Item> {
        if self.tasks_seen.insert(task.id.clone()) {
            vec![Item::Task(Box::new(task))]
        } else {
            Vec::new()
        }
    }

    /// The task a draft describes, with its id `<format>-<12 hex digits>` derived from the
    /// prompt, tools and ground truth (48 bits, so ids stay distinct across millions of tasks).
    pub fn finish_task(&self, mut draft: TaskDraft) -> Task {
        rename_named_keys(&mut draft.extra, TASK_FIELDS);
        let prompt: Vec<Message> = draft
            .prompt
            .into_iter()
            .map(|mut message| {
                message.extra.clear();
                message
            })
            .collect();
        let identity = json!({
            "prompt": prompt.iter().map(message_identity).collect::<Vec<_>>(),
            "tools": draft.tools,
            "ground_truth": draft.ground_truth,
        });
        let digest = Sha256::digest(identity.to_string().as_bytes());
        let mut bytes = [0u8; 8];
        bytes[2..].copy_from_slice(&digest[..6]);
        Task {
            id: format!("{}-{:012x}", self.format.name(), u64::from_be_bytes(bytes)),
            source: draft
                .source
                .unwrap_or_else(|| self.format.name().to_string()),
            prompt,
            ground_truth: draft.ground_truth,
            reference_solution: draft.reference_solution,
            difficulty: None,
            tools: draft.tools,
            extra: draft.extra,
        }
    }
}

/// The fields of `Message` and `Task` as they serialise (their `extra` is flattened beside
/// them, so a kept source field must not take one of these names).
const MESSAGE_FIELDS: &[&str] = &[
    "role",
    "content",
    "reasoning",
    "tool_calls",
    "tool_call_id",
    "name",
    "is_error",
    "latency_ms",
    "spans",
];
const TASK_FIELDS: &[&str] = &[
    "id",
    "source",
    "prompt",
    "ground_truth",
    "reference_solution",
    "difficulty",
    "tools",
];

/// Renames each key of `extra` that the data model names itself to `source_<key>` (with
/// more `source_` while that is taken too).
fn rename_named_keys(extra: &mut Map<String, Value>, named: &[&str]) {
    if !extra.keys().any(|key| named.contains(&key.as_str())) {
        return;
    }
    let mut taken: HashSet<String> = extra.keys().cloned().collect();
    let entries: Vec<(String, Value)> = std::mem::take(extra).into_iter().collect();
    for (key, value) in entries {
        let mut new_key = key.clone();
        while named.contains(&new_key.as_str()) || (new_key != key && taken.contains(&new_key)) {
            new_key = format!("source_{new_key}");
        }
        taken.insert(new_key.clone());
        extra.insert(new_key, value);
    }
}

/// What identifies a prompt message: its role, text and calls, not ids or other metadata.
fn message_identity(message: &Message) -> Value {
    let calls: Vec<Value> = message
        .tool_calls
        .iter()
        .map(|call| json!([call.name, call.arguments]))
        .collect();
    json!([message.role.as_str(), message.content, calls])
}

/// A task before its id is known.
#[derive(Default)]
pub struct TaskDraft {
    /// The prompt messages.
    pub prompt: Vec<Message>,
    /// Tools offered, as OpenAI tool specifications.
    pub tools: Vec<Value>,
    /// The answer a verifier checks against.
    pub ground_truth: Option<String>,
    /// A worked solution.
    pub reference_solution: Option<String>,
    /// The task set it comes from, when the source names one (else the format's name).
    pub source: Option<String>,
    /// Fields the source had for the task that the model does not name.
    pub extra: Map<String, Value>,
}

impl TaskDraft {
    /// A draft whose prompt is everything before the first assistant message.
    pub fn from_trajectory(trajectory: &Trajectory, tools: Vec<Value>) -> Self {
        Self {
            prompt: trajectory.prompt_messages().to_vec(),
            tools,
            ..Self::default()
        }
    }

    /// The same draft with a ground truth.
    pub fn answer(mut self, ground_truth: Option<String>) -> Self {
        self.ground_truth = ground_truth;
        self
    }

    /// The same draft with the task set it comes from.
    pub fn source(mut self, source: Option<String>) -> Self {
        self.source = source;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::{Span, ToolCall};

    fn keys(value: impl serde::Serialize) -> Vec<String> {
        let mut keys: Vec<String> = match serde_json::to_value(value).unwrap() {
            Value::Object(object) => object.keys().cloned().collect(),
            _ => Vec::new(),
        };
        keys.sort();
        keys
    }

    fn sorted(names: &[&str]) -> Vec<String> {
        let mut names: Vec<String> = names.iter().map(|name| name.to_string()).collect();
        names.sort();
        names
    }

    #[test]
    fn the_named_field_lists_match_the_data_model() {
        let mut message = Message::tool("x");
        message.reasoning = Some("r".into());
        message.tool_calls.push(ToolCall::new("f", "{}"));
        message.tool_call_id = Some("c".into());
        message.name = Some("f".into());
        message.is_error = true;
        message.latency_ms = Some(1.0);
        message.spans.push(Span { start: 0, end: 1 });
        assert_eq!(keys(&message), sorted(MESSAGE_FIELDS));
        let mut task = Task::new("t", "s", "q");
        task.ground_truth = Some("1".into());
        task.reference_solution = Some("1".into());
        task.difficulty = Some(1);
        task.tools.push(json!({}));
        assert_eq!(keys(&task), sorted(TASK_FIELDS));
    }

    #[test]
    fn kept_fields_with_model_names_are_renamed() {
        let mut extra = Map::new();
        extra.insert("id".into(), json!(3));
        extra.insert("source_id".into(), json!("taken"));
        extra.insert("epoch".into(), json!(1));
        rename_named_keys(&mut extra, TASK_FIELDS);
        assert_eq!(extra["source_source_id"], json!(3));
        assert_eq!(extra["source_id"], json!("taken"));
        assert_eq!(extra.len(), 3);
        assert_eq!(extra["epoch"], json!(1));
    }
}
