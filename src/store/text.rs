//! The store's side of full-text search: the text generation (bumped by every write that
//! changes what was said), keeping the index in step after each write, and rebuilding it
//! from the records when it is missing or behind.

use super::entry::Entry;
use super::search::{SearchError, TextHits, TextIndex};
use super::{LocalStore, StoreError, StoreResult, keys};
use crate::trajectory::{Trajectory, TrajectoryId};
use std::sync::MutexGuard;

/// Trajectories read per group handed to the indexer during a rebuild.
const REBUILD_BATCH: usize = 256;

/// The meta key holding the text generation.
pub(super) fn generation_key() -> Vec<u8> {
    keys::meta_key("text-generation")
}

impl LocalStore {
    /// The text generation: how many writes have changed stored text.
    pub(super) fn text_generation(&self) -> StoreResult<u64> {
        Ok(self
            .db
            .get(generation_key())?
            .and_then(|bytes| bytes.as_ref().try_into().ok().map(u64::from_be_bytes))
            .unwrap_or(0))
    }

    /// The open index, or the error that says this handle has none.
    fn text_index(&self) -> StoreResult<MutexGuard<'_, TextIndex>> {
        let Some(index) = &self.text else {
            return Err(StoreError::Invalid(
                "this store was opened without its search index (StoreOptions::text_index)".into(),
            ));
        };
        Ok(index
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner))
    }

    /// After a committed write that moved the text generation to `generation`: indexes the
    /// written trajectories (each flagged when it replaced a stored one) and drops the
    /// deleted ones. An index that was already behind is
    /// left for the next search to rebuild. Called with the write guard held.
    pub(super) fn index_written(
        &self,
        written: &[(&Trajectory, bool)],
        deleted: &[TrajectoryId],
        generation: u64,
    ) -> StoreResult<()> {
        if self.text.is_none() {
            return Ok(());
        }
        let mut index = self.text_index()?;
        if index.generation() != generation.checked_sub(1) {
            return Ok(());
        }
        index
            .replace(written, deleted, generation)
            .map_err(|error| {
                StoreError::Invalid(format!("the trajectories are saved, but {error}"))
            })
    }

    /// Makes a new index of an empty store current at once, so writes keep it in step.
    pub(super) fn adopt_empty_text_index(&self) -> StoreResult<()> {
        if self.text.is_none() || self.stored_count()? > 0 {
            return Ok(());
        }
        let generation = self.text_generation()?;
        let mut index = self.text_index()?;
        if index.generation() != Some(generation) {
            index.clear()?;
            index.commit(generation)?;
        }
        Ok(())
    }

    /// Commits what writes added to the search index, or rebuilds it from every stored
    /// record when it is behind the store.
    fn ensure_text_index(&self) -> StoreResult<()> {
        let current = self.text_generation()?;
        {
            let mut index = self.text_index()?;
            if index.generation() == Some(current) {
                return Ok(index.publish()?);
            }
        }
        self.rebuild_text_index()
    }

    /// Rebuilds the search index from every stored record, whatever its state, handing the
    /// indexer `REBUILD_BATCH` trajectories at a time.
    pub fn rebuild_text_index(&self) -> StoreResult<()> {
        let _guard = self.write_guard();
        let generation = self.text_generation()?;
        let mut index = self.text_index()?;
        index.clear()?;
        let mut batch = Vec::with_capacity(REBUILD_BATCH);
        for item in self.db.scan_prefix([keys::LOCATION]) {
            let (key, value) = item?;
            let corrupt = |what: String| StoreError::Corrupt {
                what,
                reason: "malformed entry".into(),
            };
            let id = TrajectoryId::from_bytes(&key[1..])
                .ok_or_else(|| corrupt("a location key".into()))?;
            let entry =
                Entry::decode(&value).ok_or_else(|| corrupt(format!("location of {id}")))?;
            batch.push(self.read_record(id, entry)?);
            if batch.len() == REBUILD_BATCH {
                index.add(&batch)?;
                batch.clear();
            }
        }
        index.add(&batch)?;
        index.commit(generation)?;
        Ok(())
    }

    /// The trajectories with a message, tool call or tool result that matches a query: words
    /// (all in that one message), `"a phrase"`, `tool:NAME`, `role:ROLE`, `task:ID`, `OR`,
    /// `-word`.
    pub fn search_text(&self, query: &str) -> StoreResult<Vec<TrajectoryId>> {
        self.ensure_text_index()?;
        Ok(self.text_index()?.search(query)?)
    }

    /// Which messages of one trajectory a query matches, and the words to highlight.
    pub fn text_hits(&self, query: &str, id: TrajectoryId) -> StoreResult<TextHits> {
        self.ensure_text_index()?;
        Ok(self.text_index()?.hits(query, id)?)
    }

    /// Bytes the search index takes on disk (0 without one).
    pub fn text_index_size(&self) -> StoreResult<u64> {
        match &self.text {
            Some(_) => Ok(self.text_index()?.size_on_disk()),
            None => Ok(0),
        }
    }
}

impl From<SearchError> for StoreError {
    fn from(error: SearchError) -> Self {
        StoreError::Search(error)
    }
}
