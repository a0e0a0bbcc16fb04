//! Schema versions and migrations, rebuilding derived data, and compaction.

use super::blobs::BlobLog;
use super::entry::Entry;
use super::postings::PostingChanges;
use super::rows::{ListingRow, RowChanges};
use super::summary::Summary;
use super::write::{index_prefixes, missing_location};
use super::{LocalStore, RECORD_LOG, StoreError, StoreResult, keys, sibling_file, trace_codec};
use crate::trajectory::TrajectoryId;
use std::path::Path;

/// The schema this build writes. Version 1: records and traces in a blob log; summaries,
/// locations and posting-list indexes in one sled tree. Version 2: a listing row beside
/// each summary (`rows`).
pub const SCHEMA_VERSION: u32 = 2;

/// A migration brings a store from the version before it to its version.
type Migration = fn(&LocalStore) -> StoreResult<()>;

/// Migrations by the version they produce. Version 0 is a store written before schema
/// versions were recorded; its records are current but its derived data is rebuilt.
const MIGRATIONS: &[(u32, Migration)] = &[
    (1, LocalStore::rebuild_derived),
    (2, LocalStore::build_rows),
];

/// Sizes before and after a compaction.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct CompactionReport {
    /// Bytes on disk before.
    pub before: u64,
    /// Bytes on disk after.
    pub after: u64,
    /// Bytes of the record log before (live and dead records).
    pub log_before: u64,
    /// Bytes of the record log after (live records only).
    pub log_after: u64,
    /// Trajectories copied.
    pub trajectories: usize,
}

impl LocalStore {
    /// Checks the schema version, writes it on a new store, and migrates an old one.
    pub(super) fn check_schema(&self) -> StoreResult<()> {
        let found = match self.db.get(keys::schema_key())? {
            Some(bytes) => {
                u32::from_be_bytes(bytes.as_ref().try_into().map_err(|_| StoreError::Corrupt {
                    what: "schema version".into(),
                    reason: "not 4 bytes".into(),
                })?)
            }
            None if self.db.is_empty() => SCHEMA_VERSION,
            None => 0,
        };
        if found > SCHEMA_VERSION {
            return Err(StoreError::NewerSchema {
                path: self.path.clone(),
                found,
                supported: SCHEMA_VERSION,
            });
        }
        for &(version, migrate) in MIGRATIONS {
            if version > found {
                migrate(self)?;
                self.set_schema(version)?;
            }
        }
        self.set_schema(SCHEMA_VERSION)
    }

    fn set_schema(&self, version: u32) -> StoreResult<()> {
        if self.schema_version()? != version {
            self.db.insert(keys::schema_key(), &version.to_be_bytes())?;
            self.db.flush()?;
        }
        Ok(())
    }

    /// The schema version on disk.
    pub fn schema_version(&self) -> StoreResult<u32> {
        Ok(self
            .db
            .get(keys::schema_key())?
            .and_then(|bytes| bytes.as_ref().try_into().ok().map(u32::from_be_bytes))
            .unwrap_or(0))
    }

    /// Rebuilds summaries, indexes and the count from the trajectory records, keeping the
    /// stored order.
    pub fn rebuild_derived(&self) -> StoreResult<()> {
        let _guard = self.write_guard();
        let derived = [
            keys::SUMMARY,
            keys::ROW,
            keys::BY_RUN,
            keys::BY_TASK,
            keys::BY_LABEL,
            keys::BY_OUTCOME,
        ];
        let mut batch = sled::Batch::default();
        for prefix in derived {
            for key in self.db.scan_prefix([prefix]).keys() {
                batch.remove(key?);
            }
        }
        self.db.apply_batch(batch)?;
        let mut batch = sled::Batch::default();
        let mut postings = PostingChanges::default();
        let mut rows = RowChanges::default();
        let mut count = 0u64;
        for item in self.db.scan_prefix([keys::LOCATION]) {
            let (key, value) = item?;
            let id =
                TrajectoryId::from_bytes(&key[1..]).ok_or_else(|| corrupt("a location key"))?;
            let entry =
                Entry::decode(&value).ok_or_else(|| corrupt(&format!("location of {id}")))?;
            let trajectory = self.read_record(id, entry)?;
            let mut summary = Summary::of(&trajectory, entry.seq);
            if let Some(location) = entry.trace {
                let trace = trace_codec::decode(&self.read_blob(id, location)?);
                summary.tokens = trace.map_or(0, |trace| trace.len() as u32);
            }
            for prefix in index_prefixes(&summary) {
                postings.add(&prefix, summary.seq);
            }
            batch.insert(&keys::summary_key(summary.seq), summary.to_bytes());
            rows.put(summary.seq, ListingRow::of(&summary));
            count += 1;
        }
        postings.stage(&mut batch, |_| Ok(None))?;
        rows.stage(&mut batch, |_| Ok(None))?;
        batch.insert(keys::count_key(), &count.to_be_bytes());
        self.db.apply_batch(batch)?;
        self.db.flush()?;
        Ok(())
    }

    /// Rewrites the store into fresh files, keeping only live records, and reopens it. The
    /// old files are removed only after the copy is durable.
    pub fn compact(self) -> StoreResult<(LocalStore, CompactionReport)> {
        let before = self.size_on_disk()?;
        let log_before = self.blobs.len();
        let path = self.path.clone();
        let options = self.options;
        let fresh_path = sibling_file(&path, "compacting");
        let old_path = sibling_file(&path, "before-compaction");
        remove_dir(&fresh_path)?;
        std::fs::create_dir_all(&fresh_path).map_err(|source| StoreError::Io {
            context: format!("cannot create {}", fresh_path.display()),
            source,
        })?;
        let trajectories = self.copy_live_into(&fresh_path)?;
        let LocalStore {
            db,
            text,
            _lock: lock,
            ..
        } = self;
        drop(db);
        drop(text);
        let index = path.join(super::search::INDEX_FOLDER);
        if index.is_dir() {
            rename(&index, &fresh_path.join(super::search::INDEX_FOLDER))?;
        }
        remove_dir(&old_path)?;
        rename(&path, &old_path)?;
        rename(&fresh_path, &path)?;
        remove_dir(&old_path)?;
        drop(lock);
        let store = LocalStore::open_with(&path, options)?;
        let after = store.size_on_disk()?;
        let log_after = store.blobs.len();
        let report = CompactionReport {
            before,
            after,
            log_before,
            log_after,
            trajectories,
        };
        Ok((store, report))
    }

    /// Copies every sled entry into a new store folder, moving live blobs into a new log:
    /// `COPY_GROUP` trajectories' blobs (at most `COPY_GROUP_BYTES`) appended and synced at
    /// a time, then their entries and the others read since written in one batch, so memory
    /// stays flat at any size.
    fn copy_live_into(&self, fresh_path: &Path) -> StoreResult<usize> {
        let fresh = sled::Config::new()
            .path(fresh_path)
            .cache_capacity(self.options.cache_bytes)
            .open()?;
        let fresh_blobs = BlobLog::open(&fresh_path.join(RECORD_LOG))?;
        let mut trajectories = 0;
        let mut group = CopyGroup::default();
        for item in self.db.iter() {
            let (key, value) = item?;
            if key.first() == Some(&keys::LOCATION) {
                let id =
                    TrajectoryId::from_bytes(&key[1..]).ok_or_else(|| corrupt("a location key"))?;
                let entry =
                    Entry::decode(&value).ok_or_else(|| corrupt(&format!("location of {id}")))?;
                let record = self.read_blob(id, entry.record)?;
                let trace = match entry.trace {
                    Some(trace) => Some(self.read_blob(id, trace)?),
                    None => None,
                };
                group.bytes += record.len() + trace.as_ref().map_or(0, Vec::len);
                group.moved.push(Moved {
                    key,
                    seq: entry.seq,
                    record,
                    trace,
                });
                trajectories += 1;
            } else {
                group.batch.insert(key, value);
                group.copied += 1;
            }
            if group.moved.len() >= COPY_GROUP
                || group.bytes >= COPY_GROUP_BYTES
                || group.copied >= 10 * COPY_GROUP
            {
                std::mem::take(&mut group).write(&fresh, &fresh_blobs)?;
            }
        }
        group.write(&fresh, &fresh_blobs)?;
        fresh.flush()?;
        Ok(trajectories)
    }
}

/// Trajectories whose blobs a compaction appends (and syncs) at once.
const COPY_GROUP: usize = 1_000;

/// Blob bytes a compaction holds in memory at most before it appends them.
const COPY_GROUP_BYTES: usize = 64 << 20;

/// A trajectory being moved by a compaction: its location key, sequence number and blobs.
struct Moved {
    key: sled::IVec,
    seq: u64,
    record: Vec<u8>,
    trace: Option<Vec<u8>>,
}

/// Part of a compaction's copy: trajectories with their blobs read, other entries batched.
#[derive(Default)]
struct CopyGroup {
    moved: Vec<Moved>,
    bytes: usize,
    batch: sled::Batch,
    copied: usize,
}

impl CopyGroup {
    /// Appends the blobs (synced), then writes their new locations with the other entries.
    fn write(mut self, fresh: &sled::Db, blobs: &BlobLog) -> StoreResult<()> {
        let slices: Vec<&[u8]> = self
            .moved
            .iter()
            .flat_map(|moved| {
                std::iter::once(moved.record.as_slice()).chain(moved.trace.as_deref())
            })
            .collect();
        let mut locations = blobs.append(&slices)?.into_iter();
        for moved in &self.moved {
            let record = locations.next().ok_or_else(missing_location)?;
            let trace = match moved.trace {
                Some(_) => Some(locations.next().ok_or_else(missing_location)?),
                None => None,
            };
            let entry = Entry {
                seq: moved.seq,
                record,
                trace,
            };
            self.batch.insert(&moved.key, entry.encode());
        }
        fresh.apply_batch(self.batch)?;
        Ok(())
    }
}

fn corrupt(what: &str) -> StoreError {
    StoreError::Corrupt {
        what: what.to_string(),
        reason: "malformed entry".into(),
    }
}

fn remove_dir(path: &Path) -> StoreResult<()> {
    match std::fs::remove_dir_all(path) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(StoreError::Io {
            context: format!("cannot remove {}", path.display()),
            source,
        }),
    }
}

fn rename(from: &Path, to: &Path) -> StoreResult<()> {
    std::fs::rename(from, to).map_err(|source| StoreError::Io {
        context: format!("cannot move {} to {}", from.display(), to.display()),
        source,
    })
}
