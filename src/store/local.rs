//! The store of this process: sled, the record log and the full-text index, held under an
//! exclusive lock. The session server holds one; everything else reaches it through `Store`.

use super::blobs::BlobLog;
use super::changes::ChangeCounters;
use super::index_thread::Indexer;
use super::indexer::TextShared;
use super::lock::{HolderLock, LockFailure};
use super::search::{self, TextIndex};
use super::{RECORD_LOG, StoreError, StoreOptions, StoreResult, keys, lock_path, trace_codec};
use crate::trajectory::{Trajectory, TrajectoryId};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Trajectories written since opening past which closing takes a sled checkpoint. sled
/// records its page table only when it opens, by replaying its log since the last record:
/// after a large import that replay would make the next open slow (1.5 s after a million).
const CHECKPOINT_AFTER_WRITES: u64 = 10_000;

/// An open session store, held exclusively by this process.
pub struct LocalStore {
    pub(super) db: sled::Db,
    pub(super) blobs: Arc<BlobLog>,
    pub(super) path: PathBuf,
    pub(super) options: StoreOptions,
    pub(super) writer: Arc<Mutex<()>>,
    pub(super) text: Option<Indexer>,
    pub(super) changes: ChangeCounters,
    /// Trajectories written (stored, replaced or removed) since this store was opened.
    pub(super) writes_since_open: AtomicU64,
    pub(super) _lock: HolderLock,
}

/// Opens sled in `dir`. Our holder lock already excludes other processes, so a sled file
/// lock that is still held belongs to an instance of this process that was just dropped and
/// whose flusher thread is finishing: wait for it (up to two seconds) instead of failing.
fn open_sled(dir: &Path, options: StoreOptions) -> StoreResult<sled::Db> {
    let config = sled::Config::new()
        .path(dir)
        .cache_capacity(options.cache_bytes);
    let mut attempts = 0;
    loop {
        match config.open() {
            Err(sled::Error::Io(error))
                if attempts < 100 && error.to_string().contains("could not acquire lock") =>
            {
                attempts += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            result => return Ok(result?),
        }
    }
}

impl LocalStore {
    /// Opens (or creates) the store in `dir` with default options.
    pub fn open(dir: &Path) -> StoreResult<Self> {
        Self::open_with(dir, StoreOptions::default())
    }

    /// Opens (or creates) the store in `dir`: takes the lock, checks the schema, migrates.
    pub fn open_with(dir: &Path, options: StoreOptions) -> StoreResult<Self> {
        std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
            context: format!("cannot create the store folder {}", dir.display()),
            source,
        })?;
        let lock = HolderLock::acquire(&lock_path(dir)).map_err(|failure| match failure {
            LockFailure::Held(holder) => StoreError::Locked {
                path: dir.to_path_buf(),
                holder,
            },
            LockFailure::Io(source) => StoreError::Io {
                context: format!("cannot lock the store {}", dir.display()),
                source,
            },
            LockFailure::Unsafe(reason) => StoreError::Refused(reason),
        })?;
        let db = open_sled(dir, options)?;
        let blobs_path = dir.join(RECORD_LOG);
        let blobs = Arc::new(BlobLog::open(&blobs_path).map_err(|source| StoreError::Io {
            context: format!("cannot open {}", blobs_path.display()),
            source,
        })?);
        let mut store = Self {
            db,
            blobs,
            path: dir.to_path_buf(),
            options,
            writer: Arc::new(Mutex::new(())),
            text: None,
            changes: ChangeCounters::new(),
            writes_since_open: AtomicU64::new(0),
            _lock: lock,
        };
        store.check_schema()?;
        if options.text_index {
            store.start_indexer()?;
        }
        Ok(store)
    }

    /// Opens the search index and starts the thread that keeps it in step.
    fn start_indexer(&mut self) -> StoreResult<()> {
        let index = TextIndex::open(&self.path)?;
        let shared = TextShared::new(
            index,
            self.path.join(search::INDEX_FOLDER),
            self.db.clone(),
            Arc::clone(&self.blobs),
            Arc::clone(&self.writer),
        );
        self.adopt_empty_text_index(&shared)?;
        let behind = shared.behind()? > 0;
        self.text = Some(Indexer::start(shared, behind)?);
        Ok(())
    }

    /// Serialises read-modify-write sequences between threads sharing the store.
    pub(super) fn write_guard(&self) -> std::sync::MutexGuard<'_, ()> {
        self.writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The store's folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes everything pending to disk; returns when it is durable.
    pub fn flush(&self) -> StoreResult<()> {
        self.db.flush()?;
        Ok(())
    }

    /// Flushes and closes the store. After many writes it then opens and closes sled once
    /// more, still holding the store's lock, so that sled records a checkpoint now and the
    /// next open does not replay the whole import (what a session server does on exit);
    /// around that replay the process hands its free memory back, so the two do not add up.
    pub fn close(self) -> StoreResult<()> {
        self.db.flush()?;
        let Self {
            db,
            path,
            options,
            text,
            writes_since_open,
            _lock,
            ..
        } = self;
        drop(text);
        drop(db);
        if writes_since_open.load(Ordering::Relaxed) >= CHECKPOINT_AFTER_WRITES {
            crate::allocator::release_free_memory();
            drop(open_sled(&path, options)?);
            crate::allocator::release_free_memory();
        }
        Ok(())
    }

    /// Counts trajectories written, for the checkpoint at close.
    pub(super) fn count_writes(&self, trajectories: usize) {
        self.writes_since_open
            .fetch_add(trajectories as u64, Ordering::Relaxed);
    }

    /// The blob log of records and traces.
    pub(super) fn blob_log(&self) -> &BlobLog {
        &self.blobs
    }

    /// Number of trajectories stored.
    pub fn trajectory_count(&self) -> usize {
        self.stored_count().unwrap_or(0) as usize
    }

    /// A trajectory with its token trace.
    pub fn get(&self, id: TrajectoryId) -> StoreResult<Option<Trajectory>> {
        let Some(entry) = self.entry(id)? else {
            return Ok(None);
        };
        let mut trajectory = self.read_record(id, entry)?;
        if let Some(location) = entry.trace {
            let bytes = self.read_blob(id, location)?;
            trajectory.token_trace =
                Some(
                    trace_codec::decode(&bytes).ok_or_else(|| StoreError::Corrupt {
                        what: format!("token trace of {id}"),
                        reason: "not a packed trace".into(),
                    })?,
                );
        }
        Ok(Some(trajectory))
    }

    /// A trajectory without its token trace (cheaper for views that do not show it).
    pub fn get_without_trace(&self, id: TrajectoryId) -> StoreResult<Option<Trajectory>> {
        match self.entry(id)? {
            Some(entry) => self.read_record(id, entry).map(Some),
            None => Ok(None),
        }
    }

    /// Whether a trajectory has a token trace stored.
    pub fn has_trace(&self, id: TrajectoryId) -> StoreResult<bool> {
        Ok(self.entry(id)?.is_some_and(|entry| entry.trace.is_some()))
    }

    /// The trajectory whose id starts with the hex digits typed.
    pub fn resolve(&self, prefix: &str) -> StoreResult<TrajectoryId> {
        let prefix = prefix.trim().to_ascii_lowercase();
        if let Ok(id) = prefix.parse::<TrajectoryId>()
            && prefix.len() == 16
        {
            return if self.db.contains_key(keys::location_key(id))? {
                Ok(id)
            } else {
                Err(StoreError::NotFound(prefix))
            };
        }
        if prefix.is_empty() || prefix.parse::<TrajectoryId>().is_err() {
            return Err(StoreError::Invalid(format!(
                "`{prefix}` is not a trajectory id (hex digits)"
            )));
        }
        let shift = 64 - 4 * prefix.len() as u32;
        let low = u64::from_str_radix(&prefix, 16).unwrap_or_default() << shift;
        let high = low | ((1u64 << shift) - 1);
        let start = keys::location_key(TrajectoryId(low));
        let end = keys::location_key(TrajectoryId(high));
        let mut matches = self
            .db
            .range(start..=end)
            .keys()
            .take(2)
            .collect::<Result<Vec<_>, _>>()?;
        match matches.len() {
            0 => Err(StoreError::NotFound(prefix)),
            1 => Ok(TrajectoryId::from_bytes(&matches.remove(0)[1..]).unwrap_or(TrajectoryId(low))),
            _ => Err(StoreError::Ambiguous {
                count: self.db.range(start..=end).count(),
                prefix,
            }),
        }
    }

    /// Size of the store's files on disk, in bytes (the search index included).
    pub fn size_on_disk(&self) -> StoreResult<u64> {
        Ok(self.db.size_on_disk()? + self.blobs.len() + self.text_index_size()?)
    }
}
