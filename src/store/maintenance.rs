//! Schema versions and migrations, rebuilding derived data, and compaction.

use super::summary::Summary;
use super::write::index_keys;
use super::{Store, StoreError, StoreResult, keys};
use crate::trajectory::{Trajectory, TrajectoryId};
use std::path::Path;

/// The schema this build writes. Version 1: one tree, prefix-byte keys, postcard summaries.
pub const SCHEMA_VERSION: u32 = 1;

/// A migration brings a store from the version before it to its version.
type Migration = fn(&Store) -> StoreResult<()>;

/// Migrations by the version they produce. Version 0 is a store written before schema
/// versions were recorded; its records are current but its derived data is rebuilt.
const MIGRATIONS: &[(u32, Migration)] = &[(1, Store::rebuild_derived)];

/// Sizes before and after a compaction.
#[derive(Clone, Copy, Debug)]
pub struct CompactionReport {
    /// Bytes on disk before.
    pub before: u64,
    /// Bytes on disk after.
    pub after: u64,
    /// Records copied.
    pub records: usize,
}

impl Store {
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
        self.db.insert(keys::schema_key(), &version.to_be_bytes())?;
        self.db.flush()?;
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

    /// Rebuilds summaries and indexes from the trajectory records, keeping stored order.
    pub fn rebuild_derived(&self) -> StoreResult<()> {
        let derived = [
            keys::SUMMARY,
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
        for entry in self.db.scan_prefix([keys::TRAJECTORY]) {
            let (key, value) = entry?;
            let id = TrajectoryId::from_bytes(&key[1..]).ok_or_else(|| StoreError::Corrupt {
                what: "a trajectory key".into(),
                reason: "not 8 bytes".into(),
            })?;
            let trajectory: Trajectory =
                serde_json::from_slice(&value).map_err(|error| StoreError::Corrupt {
                    what: format!("trajectory {id}"),
                    reason: error.to_string(),
                })?;
            let seq = match self.db.get(keys::by_id(keys::SEQUENCE, id))? {
                Some(bytes) => keys::trailing_seq(&bytes).unwrap_or_default(),
                None => self.db.generate_id()?,
            };
            let mut summary = Summary::of(&trajectory, seq);
            if let Some(trace) = self.db.get(keys::by_id(keys::TRACE, id))? {
                summary.tokens = super::trace_codec::decode(&trace).map_or(0, |t| t.len() as u32);
            }
            batch.insert(&keys::by_id(keys::SEQUENCE, id), &seq.to_be_bytes());
            batch.insert(&keys::summary_key(seq), summary.to_bytes());
            for key in index_keys(&summary) {
                batch.insert(key, &[]);
            }
        }
        self.db.apply_batch(batch)?;
        self.db.flush()?;
        Ok(())
    }

    /// Rewrites the store into fresh files, reclaiming the space of deleted and replaced
    /// records, and reopens it. The old files are removed only after the copy is durable.
    pub fn compact(self) -> StoreResult<(Store, CompactionReport)> {
        let before = self.size_on_disk()?;
        let path = self.path.clone();
        let options = self.options;
        let fresh_path = sibling(&path, "compacting");
        let old_path = sibling(&path, "before-compaction");
        remove_dir(&fresh_path)?;
        let records = {
            let fresh = sled::Config::new()
                .path(&fresh_path)
                .cache_capacity(options.cache_bytes)
                .open()?;
            let mut records = 0;
            let mut batch = sled::Batch::default();
            for entry in self.db.iter() {
                let (key, value) = entry?;
                batch.insert(key, value);
                records += 1;
                if records % 10_000 == 0 {
                    fresh.apply_batch(std::mem::take(&mut batch))?;
                }
            }
            fresh.apply_batch(batch)?;
            fresh.flush()?;
            records
        };
        let Store {
            db, _lock: lock, ..
        } = self;
        drop(db);
        remove_dir(&old_path)?;
        rename(&path, &old_path)?;
        rename(&fresh_path, &path)?;
        remove_dir(&old_path)?;
        drop(lock);
        let store = Store::open_with(&path, options)?;
        let after = store.size_on_disk()?;
        Ok((
            store,
            CompactionReport {
                before,
                after,
                records,
            },
        ))
    }
}

fn sibling(path: &Path, suffix: &str) -> std::path::PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{suffix}"));
    path.with_file_name(name)
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
