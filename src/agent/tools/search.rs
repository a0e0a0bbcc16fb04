//! The `search` tool: BM25 over a local collection (by default the one shipped in
//! `examples/search/`, compiled into the binary).

use super::bm25::Bm25Index;
use super::{Tool, ToolFuture, ToolOutput};
use serde_json::{Map, Value, json};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// The shipped collection: fictional encyclopedia entries (see `examples/search/README.md`).
pub const SHIPPED_COLLECTION: &str = include_str!("../../../examples/search/documents.jsonl");
/// Passages returned when `k` is not given.
const DEFAULT_K: u64 = 3;
/// The most passages one call may ask for.
const MAX_K: u64 = 10;

/// Searches a collection and returns the best passages.
pub struct SearchTool {
    index: Arc<Bm25Index>,
    parameters: Value,
}

impl SearchTool {
    /// The tool's name.
    pub const NAME: &'static str = "search";

    /// Search over the shipped collection.
    pub fn shipped() -> anyhow::Result<Self> {
        Ok(Self::new(Arc::new(Bm25Index::from_jsonl(
            SHIPPED_COLLECTION,
            "examples/search/documents.jsonl",
        )?)))
    }

    /// Search over a collection file of `{id, title, text}` JSON lines.
    pub fn from_file(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|error| anyhow::anyhow!("cannot read {}: {error}", path.display()))?;
        Ok(Self::new(Arc::new(Bm25Index::from_jsonl(
            &text,
            &path.display().to_string(),
        )?)))
    }

    /// Search over an index.
    pub fn new(index: Arc<Bm25Index>) -> Self {
        Self {
            index,
            parameters: json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to look for, e.g. a name and the fact wanted."},
                    "k": {"type": "integer", "description": "How many passages to return (1 to 10, default 3)."}
                },
                "required": ["query"]
            }),
        }
    }

    /// The index searched.
    pub fn index(&self) -> &Bm25Index {
        &self.index
    }

    /// The observation for a query: numbered passages with their titles, best first.
    pub fn answer(&self, query: &str, k: u64) -> ToolOutput {
        if query.trim().is_empty() {
            return ToolOutput::error("error: the query is empty");
        }
        let k = usize::try_from(k.clamp(1, MAX_K)).unwrap_or(1);
        let hits = self.index.search(query, k);
        if hits.is_empty() {
            return ToolOutput::ok(format!("no passage matches `{query}`"));
        }
        let blocks: Vec<String> = hits
            .iter()
            .enumerate()
            .filter_map(|(rank, hit)| {
                let passage = self.index.passage(hit.index)?;
                Some(format!(
                    "[{}] {}\n{}",
                    rank + 1,
                    passage.title,
                    passage.text
                ))
            })
            .collect();
        ToolOutput::ok(blocks.join("\n\n"))
    }
}

impl Tool for SearchTool {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Searches a local encyclopedia and returns the best-matching passages."
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn call(&self, arguments: Map<String, Value>, _deadline: Instant) -> ToolFuture<'_> {
        let query = arguments
            .get("query")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let k = arguments
            .get("k")
            .and_then(Value::as_f64)
            .map_or(DEFAULT_K, |k| k.max(1.0) as u64);
        Box::pin(async move { self.answer(&query, k) })
    }
}
