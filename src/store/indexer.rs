//! Keeping the search index in step off the write path. A write only records which
//! trajectories it changed (the text journal); the index catches up by replaying the journal
//! on a background thread once writes pause for `QUIET`, and before any search (which so
//! always answers for everything stored). An index that is missing, unreadable or behind
//! what the journal holds is rebuilt from the records instead.

use super::blobs::BlobLog;
use super::search::TextIndex;
use super::text_journal::{self, Replay};
use super::write::{entry_in, record_in};
use super::{StoreError, StoreResult, keys, text};
use crate::trajectory::{Trajectory, TrajectoryId};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long writes must pause before the background thread indexes them, so a long import
/// runs at full speed and is indexed when it ends.
const QUIET: Duration = Duration::from_millis(500);

/// Trajectories read per group handed to the index.
const CHUNK: usize = 256;

/// What catching up needs: the index, and the store's tree, record log and write lock.
pub(super) struct TextShared {
    index: Mutex<TextIndex>,
    db: sled::Db,
    blobs: Arc<BlobLog>,
    writes: Arc<Mutex<()>>,
}

impl TextShared {
    /// Shares an opened index with the store parts it reads.
    pub fn new(
        index: TextIndex,
        db: sled::Db,
        blobs: Arc<BlobLog>,
        writes: Arc<Mutex<()>>,
    ) -> Self {
        Self {
            index: Mutex::new(index),
            db,
            blobs,
            writes,
        }
    }

    /// The index, locked.
    pub fn lock(&self) -> MutexGuard<'_, TextIndex> {
        self.index.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many text generations the index is behind the store.
    pub fn behind(&self) -> StoreResult<u64> {
        let current = text::generation_in(&self.db)?;
        Ok(match self.lock().generation() {
            Some(held) => current.saturating_sub(held),
            None => current.max(1),
        })
    }

    /// Brings the index up to the store's text generation: replays the journal, or rebuilds
    /// when the journal does not reach back to what the index holds. Stops early, committing
    /// nothing, when `stop` is set.
    pub fn catch_up(&self, stop: &AtomicBool) -> StoreResult<()> {
        let mut index = self.lock();
        let current = text::generation_in(&self.db)?;
        let replay = match index.generation() {
            Some(held) if held == current => return Ok(()),
            Some(held) if held < current => text_journal::replay(&self.db, held, current)?,
            _ => None,
        };
        let outcome = match replay {
            Some(replay) => self.replay_into(&mut index, replay, current, stop),
            None => self.rebuild_locked(&mut index, stop),
        };
        if outcome.is_err() {
            index.discard()?;
        }
        outcome
    }

    /// Rebuilds the index from every stored record, whatever its state.
    pub fn rebuild(&self) -> StoreResult<()> {
        let mut index = self.lock();
        let outcome = self.rebuild_locked(&mut index, &AtomicBool::new(false));
        if outcome.is_err() {
            index.discard()?;
        }
        outcome
    }

    fn replay_into(
        &self,
        index: &mut TextIndex,
        replay: Replay,
        generation: u64,
        stop: &AtomicBool,
    ) -> StoreResult<()> {
        let stale: Vec<TrajectoryId> = replay
            .iter()
            .filter(|(_, delete_first)| **delete_first)
            .map(|(id, _)| *id)
            .collect();
        index.delete(&stale)?;
        let mut chunk = Chunk::default();
        for id in replay.into_keys() {
            if let Some(entry) = entry_in(&self.db, id)? {
                chunk.push(index, record_in(&self.blobs, id, entry)?)?;
            }
            if stop.load(Ordering::Relaxed) {
                return Ok(index.discard()?);
            }
        }
        chunk.finish(index)?;
        index.commit(generation)?;
        text_journal::prune(&self.db, generation)
    }

    /// Rebuilds with writes held off, so the generation read is the one indexed.
    fn rebuild_locked(&self, index: &mut TextIndex, stop: &AtomicBool) -> StoreResult<()> {
        let _writes = self.writes.lock().unwrap_or_else(PoisonError::into_inner);
        let generation = text::generation_in(&self.db)?;
        index.clear()?;
        let mut chunk = Chunk::default();
        for item in self.db.scan_prefix([keys::LOCATION]) {
            let (key, value) = item?;
            let corrupt = |what: String| StoreError::Corrupt {
                what,
                reason: "malformed entry".into(),
            };
            let id = TrajectoryId::from_bytes(&key[1..])
                .ok_or_else(|| corrupt("a location key".into()))?;
            let entry = super::entry::Entry::decode(&value)
                .ok_or_else(|| corrupt(format!("location of {id}")))?;
            chunk.push(index, record_in(&self.blobs, id, entry)?)?;
            if stop.load(Ordering::Relaxed) {
                return Ok(index.discard()?);
            }
        }
        chunk.finish(index)?;
        index.commit(generation)?;
        text_journal::prune(&self.db, generation)
    }
}

/// Records gathered to hand the index `CHUNK` at a time.
#[derive(Default)]
struct Chunk(Vec<Trajectory>);

impl Chunk {
    fn push(&mut self, index: &mut TextIndex, trajectory: Trajectory) -> StoreResult<()> {
        self.0.push(trajectory);
        if self.0.len() == CHUNK {
            index.add(&self.0)?;
            self.0.clear();
        }
        Ok(())
    }

    fn finish(self, index: &mut TextIndex) -> StoreResult<()> {
        Ok(index.add(&self.0)?)
    }
}

/// When writes last happened, and whether the thread must stop.
struct Signal {
    written_at: Mutex<Option<Instant>>,
    wake: Condvar,
    stop: AtomicBool,
}

/// The background thread that catches the index up when writes pause; stopped (its
/// uncommitted work dropped) when the store closes.
pub(super) struct Indexer {
    shared: Arc<TextShared>,
    signal: Arc<Signal>,
    thread: Option<JoinHandle<()>>,
}

impl Indexer {
    /// Starts the thread; it catches up at once (after `QUIET`) when `behind`.
    pub fn start(shared: TextShared, behind: bool) -> StoreResult<Self> {
        let shared = Arc::new(shared);
        let signal = Arc::new(Signal {
            written_at: Mutex::new(behind.then(Instant::now)),
            wake: Condvar::new(),
            stop: AtomicBool::new(false),
        });
        let thread = std::thread::Builder::new()
            .name("rollscope-indexer".into())
            .spawn({
                let shared = Arc::clone(&shared);
                let signal = Arc::clone(&signal);
                move || run(&shared, &signal)
            })
            .map_err(|source| StoreError::Io {
                context: "cannot start the search indexer thread".into(),
                source,
            })?;
        Ok(Self {
            shared,
            signal,
            thread: Some(thread),
        })
    }

    /// The index and what catching up reads.
    pub fn shared(&self) -> &TextShared {
        &self.shared
    }

    /// Says a write changed stored text: the thread catches up once writes pause.
    pub fn written(&self) {
        *self
            .signal
            .written_at
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
        self.signal.wake.notify_one();
    }
}

impl Drop for Indexer {
    fn drop(&mut self) {
        self.signal.stop.store(true, Ordering::Relaxed);
        drop(
            self.signal
                .written_at
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        self.signal.wake.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The thread: waits for a write, then for `QUIET` without one, then catches up. A failure
/// is left for the next search, which catches up itself and reports it.
fn run(shared: &TextShared, signal: &Signal) {
    let mut written_at = signal
        .written_at
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    while !signal.stop.load(Ordering::Relaxed) {
        let Some(at) = *written_at else {
            written_at = signal
                .wake
                .wait(written_at)
                .unwrap_or_else(PoisonError::into_inner);
            continue;
        };
        let wait = (at + QUIET).saturating_duration_since(Instant::now());
        if !wait.is_zero() {
            written_at = signal
                .wake
                .wait_timeout(written_at, wait)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            continue;
        }
        *written_at = None;
        drop(written_at);
        let _ = shared.catch_up(&signal.stop);
        written_at = signal
            .written_at
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
    }
}
