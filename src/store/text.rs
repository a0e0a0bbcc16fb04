//! The store's side of full-text search: the text generation (bumped by every write that
//! changes what was said, with its journal entry), and the searches, which first bring the
//! index up to it (`indexer`).

use super::indexer::TextShared;
use super::search::TextHits;
use super::text_journal::generation_in;
use super::{LocalStore, StoreError, StoreResult};
use crate::trajectory::TrajectoryId;
use std::sync::atomic::AtomicBool;

impl LocalStore {
    /// The index and what catching it up reads, or the error that says this handle has none.
    fn text_shared(&self) -> StoreResult<&TextShared> {
        match &self.text {
            Some(indexer) => Ok(indexer.shared()),
            None => Err(StoreError::Invalid(
                "this store was opened without its search index (StoreOptions::text_index)".into(),
            )),
        }
    }

    /// Makes a new index of an empty store current at once, so it never needs a rebuild.
    pub(super) fn adopt_empty_text_index(&self, shared: &TextShared) -> StoreResult<()> {
        if self.stored_count()? > 0 {
            return Ok(());
        }
        shared.adopt_generation(generation_in(&self.db)?)
    }

    /// Brings the index up to the store before a search.
    fn text_in_step(&self) -> StoreResult<&TextShared> {
        let shared = self.text_shared()?;
        shared.catch_up(&AtomicBool::new(false))?;
        Ok(shared)
    }

    /// Rebuilds the search index from every stored record, whatever its state.
    pub fn rebuild_text_index(&self) -> StoreResult<()> {
        self.text_shared()?.rebuild()
    }

    /// How many writes the search index has yet to take in (0 when in step; searches catch
    /// up first, so this is only how much the next one has to do).
    pub fn text_index_behind(&self) -> StoreResult<u64> {
        self.text_shared()?.behind()
    }

    /// The trajectories with a message, tool call or tool result that matches a query: words
    /// (all in that one message), `"a phrase"`, `tool:NAME`, `role:ROLE`, `task:ID`, `OR`,
    /// `-word`.
    pub fn search_text(&self, query: &str) -> StoreResult<Vec<TrajectoryId>> {
        Ok(self.text_in_step()?.lock().search(query)?)
    }

    /// Which messages of one trajectory a query matches, and the words to highlight.
    pub fn text_hits(&self, query: &str, id: TrajectoryId) -> StoreResult<TextHits> {
        Ok(self.text_in_step()?.lock().hits(query, id)?)
    }

    /// Bytes the search index takes on disk (0 without one).
    pub fn text_index_size(&self) -> StoreResult<u64> {
        match &self.text {
            Some(indexer) => Ok(indexer.shared().size_on_disk()),
            None => Ok(0),
        }
    }
}

impl From<super::search::SearchError> for StoreError {
    fn from(error: super::search::SearchError) -> Self {
        StoreError::Search(error)
    }
}
