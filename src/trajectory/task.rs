//! Tasks: what a policy is asked to do, with the answer a verifier checks against.

use super::Message;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A task: prompt messages, ground truth and what the policy may use.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// A stable id, e.g. `gsm8k-test-0042` or `arith-3-00412`.
    pub id: String,
    /// The task set it comes from, e.g. `gsm8k`, `arith`, `lookup`, a file name.
    pub source: String,
    /// The prompt: usually a system message and a user message.
    pub prompt: Vec<Message>,
    /// The answer a verifier checks against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ground_truth: Option<String>,
    /// A worked solution (GSM8K's annotated answer), for diffs and understanding checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_solution: Option<String>,
    /// Difficulty level, higher is harder, where the task set defines one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difficulty: Option<u32>,
    /// Tools offered, as OpenAI tool specifications (`{"type": "function", "function": …}`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Value>,
    /// Fields the source had that this model does not name, kept verbatim.
    #[serde(flatten, default, skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
}

impl Task {
    /// A task with one user message and nothing else.
    pub fn new(
        id: impl Into<String>,
        source: impl Into<String>,
        question: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            source: source.into(),
            prompt: vec![Message::user(question)],
            ground_truth: None,
            reference_solution: None,
            difficulty: None,
            tools: Vec::new(),
            extra: Map::new(),
        }
    }

    /// The text of the last user message: the question itself.
    pub fn question(&self) -> &str {
        self.prompt
            .iter()
            .rev()
            .find(|message| message.role == super::Role::User)
            .map_or("", |message| message.content.as_str())
    }
}
