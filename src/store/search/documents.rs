//! The search index's schema and the documents of a trajectory: one per message (its text
//! and reasoning), one per tool call (the tool's name and its arguments).

use crate::trajectory::{Message, Role, Trajectory};
use std::collections::HashMap;
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::tokenizer::{
    Language, LowerCaser, RawTokenizer, RemoveLongFilter, SimpleTokenizer, Stemmer, TextAnalyzer,
};
use tantivy::{Index, TantivyDocument, Term};

/// The tokenizer of the keyword fields (`role`, `tool`, `task`): the whole value, lowercased.
const KEYWORD: &str = "keyword";

/// The tokenizer of the text field: runs of letters and digits, lowercased, reduced to their
/// English stem (`segfaults` → `segfault`), words over 40 bytes left out.
const STEMMED: &str = "stemmed";

/// The text field's analyzer (what `STEMMED` names).
pub fn stemmed_analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(Stemmer::new(Language::English))
        .build()
}

/// The index's fields.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fields {
    /// What was said: message text and reasoning, tool names and arguments.
    pub text: Field,
    /// Who said it: system, user, assistant, tool.
    pub role: Field,
    /// The tool called, or the tool whose result this is.
    pub tool: Field,
    /// The trajectory's task id.
    pub task: Field,
    /// The trajectory id (indexed for deletes, fast for collection).
    pub trajectory: Field,
    /// The message's position in the trajectory (fast, for hits within one trajectory).
    pub message: Field,
}

impl Fields {
    /// The fields a query may name, as `NAME:value`.
    pub const QUERYABLE: [&'static str; 4] = ["text", "role", "tool", "task"];

    /// Builds the schema and the handles of its fields.
    pub fn schema() -> (Schema, Self) {
        let mut builder = Schema::builder();
        let keyword = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(KEYWORD)
                .set_index_option(IndexRecordOption::Basic),
        );
        let fields = Self {
            text: builder.add_text_field(
                "text",
                TextOptions::default().set_indexing_options(
                    TextFieldIndexing::default()
                        .set_tokenizer(STEMMED)
                        .set_index_option(IndexRecordOption::WithFreqsAndPositions),
                ),
            ),
            role: builder.add_text_field("role", keyword.clone()),
            tool: builder.add_text_field("tool", keyword.clone()),
            task: builder.add_text_field("task", keyword),
            trajectory: builder.add_u64_field("trajectory", INDEXED | FAST),
            message: builder.add_u64_field("message", FAST),
        };
        (builder.build(), fields)
    }

    /// The queryable field of that name.
    pub fn named(&self, name: &str) -> Option<Field> {
        match name {
            "text" => Some(self.text),
            "role" => Some(self.role),
            "tool" => Some(self.tool),
            "task" => Some(self.task),
            _ => None,
        }
    }

    /// The handles of an opened index's fields; `None` when its schema is not this one.
    pub fn of(index: &Index) -> Option<Self> {
        let (expected, _) = Self::schema();
        let schema = index.schema();
        if schema != expected {
            return None;
        }
        let field = |name| schema.get_field(name).ok();
        Some(Self {
            text: field("text")?,
            role: field("role")?,
            tool: field("tool")?,
            task: field("task")?,
            trajectory: field("trajectory")?,
            message: field("message")?,
        })
    }

    /// The term that names every document of a trajectory.
    pub fn trajectory_term(&self, id: u64) -> Term {
        Term::from_field_u64(self.trajectory, id)
    }

    /// The documents of a trajectory, in message order.
    pub fn documents(&self, trajectory: &Trajectory) -> Vec<TantivyDocument> {
        let task = trajectory.task_id.as_deref().unwrap_or_default();
        let call_names: HashMap<&str, &str> = trajectory
            .messages
            .iter()
            .flat_map(|message| &message.tool_calls)
            .filter_map(|call| Some((call.id.as_deref()?, call.name.as_str())))
            .collect();
        let mut documents = Vec::with_capacity(trajectory.messages.len() * 2);
        for (index, message) in trajectory.messages.iter().enumerate() {
            let base = |role: &str| {
                let mut document = TantivyDocument::default();
                document.add_u64(self.trajectory, trajectory.id.0);
                document.add_u64(self.message, index as u64);
                document.add_text(self.role, role);
                if !task.is_empty() {
                    document.add_text(self.task, task);
                }
                document
            };
            let mut document = base(message.role.as_str());
            document.add_text(self.text, &message.content);
            if let Some(reasoning) = &message.reasoning {
                document.add_text(self.text, reasoning);
            }
            if let Some(tool) = result_tool(message, &call_names) {
                document.add_text(self.tool, tool);
            }
            documents.push(document);
            for call in &message.tool_calls {
                let mut document = base(message.role.as_str());
                document.add_text(self.tool, &call.name);
                document.add_text(self.text, &call.name);
                document.add_text(self.text, &call.arguments);
                documents.push(document);
            }
        }
        documents
    }
}

/// The tool a result message answers: its own name, else the name of the call it answers.
fn result_tool<'a>(
    message: &'a Message,
    call_names: &HashMap<&'a str, &'a str>,
) -> Option<&'a str> {
    if message.role != Role::Tool {
        return None;
    }
    message.name.as_deref().or_else(|| {
        message
            .tool_call_id
            .as_deref()
            .and_then(|id| call_names.get(id).copied())
    })
}

/// Registers the tokenizers the schema names; done on every open.
pub fn register_tokenizers(index: &Index) {
    index.tokenizers().register(STEMMED, stemmed_analyzer());
    index.tokenizers().register(
        KEYWORD,
        TextAnalyzer::builder(RawTokenizer::default())
            .filter(LowerCaser)
            .build(),
    );
}
