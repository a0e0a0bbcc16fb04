//! The full-text index of what was said: every message, tool call and tool result of every
//! stored trajectory, in tantivy, in the store folder's `search/`. Each commit records the
//! store's text generation and how far its catch-up read (`IndexCommit`); the store's
//! indexer (`super::indexer`) brings it up to the store's generation from the text journal,
//! or rebuilds it from the records when it is missing, unreadable or further behind than
//! the journal reaches. The index is derived data: work not committed when a process stops
//! is redone, never answered wrongly.

mod collect;
mod commit;
mod documents;
mod query;

pub(super) use commit::IndexCommit;
pub use query::WordMatcher;

use crate::trajectory::{Trajectory, TrajectoryId};
use collect::DistinctValues;
use documents::Fields;
use std::path::{Path, PathBuf};
use tantivy::indexer::{IndexWriterOptions, LogMergePolicy, UserOperation};
use tantivy::query::{BooleanQuery, Occur, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument};

/// The folder, inside the store folder, that holds the index.
pub const INDEX_FOLDER: &str = "search";

/// The indexing memory budget: tantivy's minimum for its one indexing thread, doubled.
const WRITER_BUDGET_BYTES: usize = 32 * 1024 * 1024;

/// Segments with more documents than this are left as they are: a bulk build's segments
/// (about 300k short messages each at the budget above) are never merged again, and the
/// small segments of later commits merge up to this size.
const MERGE_DOCS_AT_MOST: usize = 100_000;

/// What a search can fail on; callers match `BadQuery` to show it as the user's mistake.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The query does not parse.
    #[error(
        "cannot read the search `{query}`: {reason}; write words, \"a phrase\", prefix*, tool:NAME, role:ROLE or task:ID (AND, OR, NOT and -word work too)"
    )]
    BadQuery {
        /// The query as typed.
        query: String,
        /// What the parser said.
        reason: String,
    },
    /// The index could not be opened, written or read.
    #[error(
        "the search index {path}: {reason}; delete that folder and it is rebuilt from the store"
    )]
    Index {
        /// The index folder.
        path: PathBuf,
        /// What tantivy said.
        reason: String,
    },
}

/// The words of a query to highlight, and the messages of one trajectory it matches.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TextHits {
    /// Messages that match, by position, in order.
    pub messages: Vec<usize>,
    /// The query's words (the stems of its text terms), for highlighting.
    pub words: Vec<String>,
    /// The query's prefix words on the text (lowercased), for highlighting.
    #[serde(default)]
    pub prefixes: Vec<String>,
}

/// The open index: reader always, writer once something is written.
pub(super) struct TextIndex {
    path: PathBuf,
    index: Index,
    fields: Fields,
    reader: IndexReader,
    writer: Option<IndexWriter<TantivyDocument>>,
    committed: Option<IndexCommit>,
}

impl TextIndex {
    /// Opens the index in `store_dir`, creating it (empty and stale) when missing; an index
    /// that cannot be opened or has another schema is removed and created anew.
    pub fn open(store_dir: &Path) -> Result<Self, SearchError> {
        let path = store_dir.join(INDEX_FOLDER);
        match Self::open_existing(&path) {
            Ok(Some(index)) => Ok(index),
            Ok(None) | Err(_) => {
                let _ = std::fs::remove_dir_all(&path);
                Self::create(&path)
            }
        }
    }

    fn open_existing(path: &Path) -> Result<Option<Self>, SearchError> {
        if !path.join("meta.json").is_file() {
            return Ok(None);
        }
        let index = Index::open_in_dir(path).map_err(|error| index_error(path, error))?;
        let Some(fields) = Fields::of(&index) else {
            return Ok(None);
        };
        Self::with_index(path, index, fields).map(Some)
    }

    fn create(path: &Path) -> Result<Self, SearchError> {
        std::fs::create_dir_all(path).map_err(|error| index_error(path, error))?;
        let (schema, fields) = Fields::schema();
        let index = Index::create_in_dir(path, schema).map_err(|error| index_error(path, error))?;
        Self::with_index(path, index, fields)
    }

    fn with_index(path: &Path, index: Index, fields: Fields) -> Result<Self, SearchError> {
        documents::register_tokenizers(&index);
        let committed = last_commit(&index).map_err(|error| index_error(path, error))?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|error| index_error(path, error))?;
        Ok(Self {
            path: path.to_path_buf(),
            index,
            fields,
            reader,
            writer: None,
            committed,
        })
    }

    /// The store text generation the last commit holds, if any.
    pub fn generation(&self) -> Option<u64> {
        self.committed.map(|commit| commit.generation)
    }

    /// What the last commit records, if any.
    pub fn last_commit(&self) -> Option<IndexCommit> {
        self.committed
    }

    fn error(&self, error: impl std::fmt::Display) -> SearchError {
        index_error(&self.path, error)
    }

    fn writer(&mut self) -> Result<&mut IndexWriter<TantivyDocument>, SearchError> {
        if self.writer.is_none() {
            // One merge at a time: concurrent merges each hold their segments' buffers.
            let writer = self
                .index
                .writer_with_options(
                    IndexWriterOptions::builder()
                        .num_worker_threads(1)
                        .memory_budget_per_thread(WRITER_BUDGET_BYTES)
                        .num_merge_threads(1)
                        .build(),
                )
                .map_err(|error| index_error(&self.path, error))?;
            let mut policy = LogMergePolicy::default();
            policy.set_max_docs_before_merge(MERGE_DOCS_AT_MOST);
            writer.set_merge_policy(Box::new(policy));
            self.writer = Some(writer);
        }
        Ok(self.writer.as_mut().expect("the writer was just opened"))
    }

    /// Deletes every document of these trajectories (not committed), handed to the indexing
    /// thread as one group.
    pub fn delete(&mut self, ids: &[TrajectoryId]) -> Result<(), SearchError> {
        if ids.is_empty() {
            return Ok(());
        }
        let fields = self.fields;
        let operations: Vec<_> = ids
            .iter()
            .map(|id| UserOperation::Delete(fields.trajectory_term(id.0)))
            .collect();
        let path = self.path.clone();
        self.writer()?
            .run(operations)
            .map_err(|error| index_error(&path, error))?;
        Ok(())
    }

    /// Removes every document, for a rebuild.
    pub fn clear(&mut self) -> Result<(), SearchError> {
        let path = self.path.clone();
        self.writer()?
            .delete_all_documents()
            .map_err(|error| index_error(&path, error))?;
        Ok(())
    }

    /// Throws away everything done since the last commit (the writer is closed; the index
    /// holds the last commit's generation again, or none when that cannot be read, so the
    /// next catch-up rebuilds).
    pub fn discard(&mut self) {
        self.writer = None;
        self.committed = last_commit(&self.index).ok().flatten();
    }

    /// Adds trajectories' documents (not committed), one message to the indexing thread per
    /// document: its queue holds at most 10,000 messages, so this bounds what waits there
    /// while it writes a segment out.
    pub fn add(&mut self, trajectories: &[Trajectory]) -> Result<(), SearchError> {
        let fields = self.fields;
        let path = self.path.clone();
        let writer = self.writer()?;
        for document in trajectories
            .iter()
            .flat_map(|trajectory| fields.documents(trajectory))
        {
            writer
                .add_document(document)
                .map_err(|error| index_error(&path, error))?;
        }
        Ok(())
    }

    /// Commits what was added, recording `commit`, and makes it visible to searches.
    pub fn commit(&mut self, commit: IndexCommit) -> Result<(), SearchError> {
        let path = self.path.clone();
        let writer = self.writer()?;
        let mut prepared = writer
            .prepare_commit()
            .map_err(|error| index_error(&path, error))?;
        prepared.set_payload(&commit.payload());
        prepared
            .commit()
            .map_err(|error| index_error(&path, error))?;
        self.reader.reload().map_err(|error| self.error(error))?;
        self.committed = Some(commit);
        Ok(())
    }

    /// Parses a query against the index's fields (words AND-ed, phrases, `field:value`,
    /// prefixes).
    fn parse(&self, query: &str) -> Result<query::ParsedQuery, SearchError> {
        query::parse(&self.index, self.fields, query)
    }

    /// The trajectories with at least one matching document, in id order.
    pub fn search(&self, query: &str) -> Result<Vec<TrajectoryId>, SearchError> {
        let query = self.parse(query)?.query;
        let searcher = self.reader.searcher();
        let ids = searcher
            .search(&query, &DistinctValues("trajectory"))
            .map_err(|error| self.error(error))?;
        Ok(ids.into_iter().map(TrajectoryId).collect())
    }

    /// The messages of one trajectory a query matches, and its words.
    pub fn hits(&self, query: &str, id: TrajectoryId) -> Result<TextHits, SearchError> {
        let query::ParsedQuery {
            query: parsed,
            text_prefixes,
        } = self.parse(query)?;
        let mut words = Vec::new();
        parsed.query_terms(&mut |term, _| {
            if term.field() == self.fields.text
                && let Some(word) = term.value().as_str()
                && !words.iter().any(|known| known == word)
            {
                words.push(word.to_string());
            }
        });
        let only = TermQuery::new(self.fields.trajectory_term(id.0), IndexRecordOption::Basic);
        let both = BooleanQuery::new(vec![(Occur::Must, parsed), (Occur::Must, Box::new(only))]);
        let messages = self
            .reader
            .searcher()
            .search(&both, &DistinctValues("message"))
            .map_err(|error| self.error(error))?
            .into_iter()
            .map(|position| position as usize)
            .collect();
        Ok(TextHits {
            messages,
            words,
            prefixes: text_prefixes,
        })
    }
}

/// Checks that a query parses, without any index on disk: what the TUI asks before it
/// relists, so a typo leaves the list as it was.
pub fn check_query(query: &str) -> Result<(), SearchError> {
    let (schema, fields) = Fields::schema();
    let index = Index::create_in_ram(schema);
    documents::register_tokenizers(&index);
    query::parse(&index, fields, query).map(drop)
}

/// What the index's last commit records.
fn last_commit(index: &Index) -> tantivy::Result<Option<IndexCommit>> {
    Ok(index
        .load_metas()?
        .payload
        .and_then(|payload| IndexCommit::from_payload(&payload)))
}

fn index_error(path: &Path, error: impl std::fmt::Display) -> SearchError {
    SearchError::Index {
        path: path.to_path_buf(),
        reason: error.to_string(),
    }
}

/// Bytes of the files in a folder.
pub(super) fn folder_size(path: &Path) -> u64 {
    std::fs::read_dir(path)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.metadata().ok())
        .filter(std::fs::Metadata::is_file)
        .map(|metadata| metadata.len())
        .sum()
}
