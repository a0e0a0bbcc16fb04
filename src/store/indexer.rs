//! Keeping the search index in step off the write path. A write only records which
//! trajectories it changed (the text journal); the index catches up by replaying the journal
//! (on `index_thread`'s background thread once writes pause, and before any search, which so
//! always answers for everything stored). An index that is missing, unreadable or behind
//! what the journal holds is rebuilt from the records instead. Location entries are read in
//! chunks with writes held off, so only flushed writes are indexed, and writes wait at most
//! one chunk for a catch-up or a rebuild.

use super::blobs::BlobLog;
use super::entry::Entry;
use super::search::{self, IndexCommit, TextIndex};
use super::text_journal::{self, Replay};
use super::write::{entry_in, record_in};
use super::{StoreError, StoreResult, keys};
use crate::allocator::PeriodicRelease;
use crate::trajectory::{Trajectory, TrajectoryId};
use std::ops::Bound;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// Trajectories read per chunk (entries under the write lock, then records without it).
const CHUNK: usize = 256;

/// How often a long catch-up or rebuild hands the memory its threads freed back.
const RELEASE_EVERY: Duration = Duration::from_secs(1);

/// `TextShared::committed` when the index holds no commit of a generation.
const NO_GENERATION: u64 = u64::MAX;

/// What catching up needs: the index, and the store's tree, record log and write lock.
pub(super) struct TextShared {
    index: Mutex<TextIndex>,
    folder: PathBuf,
    db: sled::Db,
    blobs: Arc<BlobLog>,
    writes: Arc<Mutex<()>>,
    /// The generation of the index's last commit, readable while a catch-up runs.
    committed: AtomicU64,
}

impl TextShared {
    /// Shares an opened index with the store parts it reads.
    pub fn new(
        index: TextIndex,
        folder: PathBuf,
        db: sled::Db,
        blobs: Arc<BlobLog>,
        writes: Arc<Mutex<()>>,
    ) -> Self {
        let committed = index.generation().unwrap_or(NO_GENERATION);
        Self {
            index: Mutex::new(index),
            folder,
            db,
            blobs,
            writes,
            committed: AtomicU64::new(committed),
        }
    }

    /// The index, locked.
    pub fn lock(&self) -> MutexGuard<'_, TextIndex> {
        self.index.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn write_lock(&self) -> MutexGuard<'_, ()> {
        self.writes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many text generations the index is behind the store (without waiting for a
    /// catch-up in progress).
    pub fn behind(&self) -> StoreResult<u64> {
        let current = text_journal::generation_in(&self.db)?;
        Ok(match self.committed.load(Ordering::Relaxed) {
            NO_GENERATION => current.max(1),
            held => current.abs_diff(held),
        })
    }

    /// Bytes the index takes on disk (without waiting for a catch-up in progress).
    pub fn size_on_disk(&self) -> u64 {
        search::folder_size(&self.folder)
    }

    /// Makes an empty index hold `generation` (for a store with nothing stored).
    pub fn adopt_generation(&self, generation: u64) -> StoreResult<()> {
        let mut index = self.lock();
        if index.generation() != Some(generation) {
            index.clear()?;
            index.commit(IndexCommit {
                generation,
                read_through: generation,
            })?;
            text_journal::prune(&self.db, generation)?;
        }
        self.committed.store(generation, Ordering::Relaxed);
        Ok(())
    }

    /// Brings the index up to the store's text generation: replays the journal, or rebuilds
    /// when the journal does not reach back to what the index holds. Stops early, committing
    /// nothing, when `stop` is set.
    pub fn catch_up(&self, stop: &AtomicBool) -> StoreResult<()> {
        let mut index = self.lock();
        let current = {
            let _writes = self.write_lock();
            text_journal::generation_in(&self.db)?
        };
        // Trajectories changed up to the generation the last catch-up's reads saw may be
        // indexed in their newer form already: replaying those deletes before it adds.
        let replay = match index.last_commit() {
            Some(held) if held.generation == current => return Ok(()),
            Some(held) if held.generation < current => {
                text_journal::replay(&self.db, held.generation, current, held.read_through)?
            }
            _ => None,
        };
        let outcome = match replay {
            Some(replay) => self.replay_into(&mut index, replay, current, stop),
            None => self.rebuild_locked(&mut index, stop),
        };
        self.settle(&mut index, outcome)
    }

    /// Rebuilds the index from every stored record, whatever its state.
    pub fn rebuild(&self) -> StoreResult<()> {
        let mut index = self.lock();
        let outcome = self.rebuild_locked(&mut index, &AtomicBool::new(false));
        self.settle(&mut index, outcome)
    }

    /// After a catch-up or rebuild: drops uncommitted work when it failed or stopped, and
    /// publishes the generation the index now holds.
    fn settle(&self, index: &mut TextIndex, outcome: StoreResult<Progress>) -> StoreResult<()> {
        if !matches!(outcome, Ok(Progress::Committed)) {
            index.discard();
        }
        let committed = index.generation().unwrap_or(NO_GENERATION);
        self.committed.store(committed, Ordering::Relaxed);
        outcome.map(drop)
    }

    fn replay_into(
        &self,
        index: &mut TextIndex,
        replay: Replay,
        generation: u64,
        stop: &AtomicBool,
    ) -> StoreResult<Progress> {
        let stale: Vec<TrajectoryId> = replay
            .iter()
            .filter(|(_, delete_first)| **delete_first)
            .map(|(id, _)| *id)
            .collect();
        index.delete(&stale)?;
        let ids: Vec<TrajectoryId> = replay.into_keys().collect();
        let mut read_through = generation;
        let mut release = PeriodicRelease::every(RELEASE_EVERY);
        for chunk in ids.chunks(CHUNK) {
            if stop.load(Ordering::Relaxed) {
                return Ok(Progress::Stopped);
            }
            let (entries, seen) = {
                let _writes = self.write_lock();
                let mut entries = Vec::with_capacity(chunk.len());
                for &id in chunk {
                    if let Some(entry) = entry_in(&self.db, id)? {
                        entries.push((id, entry));
                    }
                }
                (entries, text_journal::generation_in(&self.db)?)
            };
            read_through = read_through.max(seen);
            index.add(&self.records(&entries)?)?;
            release.tick();
        }
        self.commit(index, generation, read_through)
    }

    fn rebuild_locked(&self, index: &mut TextIndex, stop: &AtomicBool) -> StoreResult<Progress> {
        let generation = {
            let _writes = self.write_lock();
            text_journal::generation_in(&self.db)?
        };
        index.clear()?;
        let mut read_through = generation;
        let mut after = None;
        let mut release = PeriodicRelease::every(RELEASE_EVERY);
        loop {
            if stop.load(Ordering::Relaxed) {
                return Ok(Progress::Stopped);
            }
            let (entries, seen) = self.flushed_locations(after)?;
            let Some(&(last, _)) = entries.last() else {
                break;
            };
            read_through = read_through.max(seen);
            index.add(&self.records(&entries)?)?;
            release.tick();
            after = Some(last);
        }
        self.commit(index, generation, read_through)
    }

    /// The next `CHUNK` location entries after `after`, read with writes held off, and the
    /// store's text generation then.
    fn flushed_locations(
        &self,
        after: Option<TrajectoryId>,
    ) -> StoreResult<(Vec<(TrajectoryId, Entry)>, u64)> {
        let _writes = self.write_lock();
        let start = match after {
            Some(id) => Bound::Excluded(keys::location_key(id).to_vec()),
            None => Bound::Included(vec![keys::LOCATION]),
        };
        let mut entries = Vec::with_capacity(CHUNK);
        for item in self.db.range((start, Bound::Unbounded)).take(CHUNK) {
            let (key, value) = item?;
            if key.first() != Some(&keys::LOCATION) {
                break;
            }
            let corrupt = |what: String| StoreError::Corrupt {
                what,
                reason: "malformed entry".into(),
            };
            let id = TrajectoryId::from_bytes(&key[1..])
                .ok_or_else(|| corrupt("a location key".into()))?;
            let entry =
                Entry::decode(&value).ok_or_else(|| corrupt(format!("location of {id}")))?;
            entries.push((id, entry));
        }
        Ok((entries, text_journal::generation_in(&self.db)?))
    }

    /// The records of these entries (blobs never change once written: no lock needed).
    fn records(&self, entries: &[(TrajectoryId, Entry)]) -> StoreResult<Vec<Trajectory>> {
        entries
            .iter()
            .map(|&(id, entry)| record_in(&self.blobs, id, entry))
            .collect()
    }

    fn commit(
        &self,
        index: &mut TextIndex,
        generation: u64,
        read_through: u64,
    ) -> StoreResult<Progress> {
        index.commit(IndexCommit {
            generation,
            read_through,
        })?;
        text_journal::prune(&self.db, generation)?;
        Ok(Progress::Committed)
    }
}

/// How a catch-up ended when nothing failed.
enum Progress {
    /// Committed (the commit records how far its reads went).
    Committed,
    /// Stopped early (the store is closing); nothing committed.
    Stopped,
}
