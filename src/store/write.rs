//! Writing trajectories: blobs appended and synced first, then summary, location and index
//! changes in one atomic sled batch, then a flush; only then is a write reported saved.

use super::blobs::{BlobLog, Location};
use super::entry::Entry;
use super::labels::LabelEdit;
use super::postings::PostingChanges;
use super::rows::{ListingRow, RowChanges};
use super::summary::Summary;
use super::text_journal::{self, TextChange};
use super::{LocalStore, StoreError, StoreResult, keys, trace_codec};
use crate::trajectory::{LabelStatus, Trajectory, TrajectoryId};
use std::collections::HashMap;

/// The index entries a summary belongs to.
pub(super) fn index_prefixes(summary: &Summary) -> Vec<Vec<u8>> {
    let mut prefixes = Vec::with_capacity(5);
    if !summary.run.is_empty() {
        prefixes.push(keys::run_prefix(
            &summary.run,
            Some(summary.step.unwrap_or(0)),
        ));
    }
    if !summary.task_id.is_empty() {
        prefixes.push(keys::text_prefix(keys::BY_TASK, &summary.task_id));
    }
    for kind in summary.confirmed_kinds() {
        prefixes.push(keys::label_prefix(kind, Some(LabelStatus::Confirmed)));
    }
    for kind in summary.suggested_kinds() {
        prefixes.push(keys::label_prefix(kind, Some(LabelStatus::Suggested)));
    }
    prefixes.push(keys::outcome_prefix(summary.passed));
    prefixes
}

/// A write being assembled: the sled batch, index changes, the change in count, and the
/// trajectories whose stored text it changes (which move the text generation).
#[derive(Default)]
struct Pending {
    batch: sled::Batch,
    postings: PostingChanges,
    rows: RowChanges,
    count_delta: i64,
    text_changes: Vec<(TrajectoryId, TextChange)>,
}

impl Pending {
    /// Replaces a trajectory's summary, listing row and index entries (`None`: removes them).
    fn replace_summary(&mut self, previous: Option<&Summary>, summary: Option<&Summary>) {
        if let Some(previous) = previous {
            for prefix in index_prefixes(previous) {
                self.postings.remove(&prefix, previous.seq);
            }
            if summary.is_none() {
                self.batch.remove(&keys::summary_key(previous.seq));
                self.rows.remove(previous.seq);
            }
        }
        if let Some(summary) = summary {
            for prefix in index_prefixes(summary) {
                self.postings.add(&prefix, summary.seq);
            }
            self.batch
                .insert(&keys::summary_key(summary.seq), summary.to_bytes());
            self.rows.put(summary.seq, ListingRow::of(summary));
        }
    }
}

fn record_bytes(trajectory: &Trajectory) -> StoreResult<Vec<u8>> {
    let bytes = if trajectory.token_trace.is_some() {
        serde_json::to_vec(&trajectory.without_trace())
    } else {
        serde_json::to_vec(trajectory)
    };
    bytes.map_err(|error| StoreError::Invalid(format!("trajectory {}: {error}", trajectory.id)))
}

/// A write's sled batch, ready to apply, and how many trajectories' text it changes.
struct Staged {
    batch: sled::Batch,
    trajectories: usize,
}

/// Batches at least this large encode and append their blobs on a second thread while the
/// summaries and index changes are prepared on the caller's.
const OVERLAP_FROM: usize = 64;

/// The blobs of `trajectories`, in order: each one's record, then its trace's encoding when
/// it has one (a malformed trace is an error naming its trajectory).
fn encode_blobs(trajectories: &[&Trajectory]) -> StoreResult<Vec<Vec<u8>>> {
    let mut blobs = Vec::with_capacity(trajectories.len() * 2);
    for &trajectory in trajectories {
        if let Some(trace) = &trajectory.token_trace {
            trace.validate().map_err(|reason| {
                StoreError::Invalid(format!("trajectory {}: {reason}", trajectory.id))
            })?;
        }
        blobs.push(record_bytes(trajectory)?);
        if let Some(trace) = &trajectory.token_trace {
            blobs.push(trace_codec::encode(trace));
        }
    }
    Ok(blobs)
}

impl LocalStore {
    /// Stores trajectories (replacing any with the same id) and flushes. When this returns
    /// `Ok`, every one of them is durable. Their blobs are synced before sled learns where
    /// they lie; a large batch writes them while its summaries are prepared.
    pub fn put_trajectories(&self, trajectories: &[Trajectory]) -> StoreResult<()> {
        let _guard = self.write_guard();
        let trajectories: Vec<&Trajectory> = trajectories.iter().collect();
        self.put_locked(&trajectories)
    }

    /// Stores the trajectories whose ids are not stored yet (the first of any repeated id)
    /// and flushes; returns the ids of those it left out, which the store held already (or
    /// the batch held twice). The check and the write happen under the write lock, so two
    /// imports of the same records store them once.
    pub fn add_trajectories(&self, trajectories: &[Trajectory]) -> StoreResult<Vec<TrajectoryId>> {
        let _guard = self.write_guard();
        let mut taken = std::collections::HashSet::new();
        let mut new = Vec::new();
        let mut stored = Vec::new();
        for trajectory in trajectories {
            if taken.insert(trajectory.id) && self.entry(trajectory.id)?.is_none() {
                new.push(trajectory);
            } else {
                stored.push(trajectory.id);
            }
        }
        if !new.is_empty() {
            self.put_locked(&new)?;
        }
        Ok(stored)
    }

    /// `put_trajectories` under a write lock the caller holds.
    fn put_locked(&self, trajectories: &[&Trajectory]) -> StoreResult<()> {
        let (locations, prepared) = if trajectories.len() >= OVERLAP_FROM {
            std::thread::scope(|scope| {
                let appending = scope.spawn(|| self.append_blobs(trajectories));
                let prepared = self.prepare(trajectories);
                let appended = appending
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                (appended, prepared)
            })
        } else {
            (self.append_blobs(trajectories), self.prepare(trajectories))
        };
        let mut locations = locations?.into_iter();
        let (mut staged, seqs) = prepared?;
        for (&trajectory, seq) in trajectories.iter().zip(seqs) {
            let record = locations.next().ok_or_else(missing_location)?;
            let trace = match trajectory.token_trace {
                Some(_) => Some(locations.next().ok_or_else(missing_location)?),
                None => None,
            };
            let entry = Entry { seq, record, trace };
            staged
                .batch
                .insert(&keys::location_key(trajectory.id), entry.encode());
        }
        self.apply(staged)
    }

    /// Encodes trajectories' blobs and appends them to the blob log; their locations, in
    /// order, once they are durable.
    fn append_blobs(&self, trajectories: &[&Trajectory]) -> StoreResult<Vec<Location>> {
        let blobs = encode_blobs(trajectories)?;
        let slices: Vec<&[u8]> = blobs.iter().map(Vec::as_slice).collect();
        Ok(self.blob_log().append(&slices)?)
    }

    /// The staged batch of storing `trajectories` (their location entries still to add),
    /// with the sequence number each is stored under (a new one, or the one it replaces).
    fn prepare(&self, trajectories: &[&Trajectory]) -> StoreResult<(Staged, Vec<u64>)> {
        let mut pending = Pending::default();
        let mut seqs = Vec::with_capacity(trajectories.len());
        let mut written: HashMap<TrajectoryId, Summary> = HashMap::new();
        for &trajectory in trajectories {
            let previous = match written.remove(&trajectory.id) {
                Some(summary) => Some(summary),
                None => self.summary_of(trajectory.id)?,
            };
            let change = match previous {
                Some(_) => TextChange::Replaced,
                None => TextChange::Added,
            };
            pending.text_changes.push((trajectory.id, change));
            let seq = match &previous {
                Some(summary) => summary.seq,
                None => {
                    pending.count_delta += 1;
                    self.db.generate_id()?
                }
            };
            let summary = Summary::of(trajectory, seq);
            pending.replace_summary(previous.as_ref(), Some(&summary));
            seqs.push(seq);
            written.insert(trajectory.id, summary);
        }
        Ok((self.stage(pending)?, seqs))
    }

    /// Changes a trajectory's labels (`LabelEdit` says how) under the write lock, reading
    /// its record once; an edit that fails writes nothing. Durable when it returns. What was
    /// said does not change, so the text generation does not move.
    pub fn edit_labels(&self, id: TrajectoryId, edit: LabelEdit) -> StoreResult<Trajectory> {
        let _guard = self.write_guard();
        let entry = self
            .entry(id)?
            .ok_or_else(|| StoreError::NotFound(id.to_string()))?;
        let mut trajectory = self.read_record(id, entry)?;
        if let LabelEdit::Add(label) = &edit {
            let steps = trajectory.steps().len();
            if label.step as usize >= steps.max(1) {
                return Err(StoreError::Invalid(format!(
                    "trajectory {id} has {steps} steps; step {} does not exist",
                    u64::from(label.step) + 1
                )));
            }
        }
        edit.apply(&mut trajectory.labels)?;
        let previous = self.summary_at(entry.seq)?;
        let record = self.blob_log().append(&[&record_bytes(&trajectory)?])?[0];
        let mut summary = Summary::of(&trajectory, entry.seq);
        summary.tokens = previous.as_ref().map_or(0, |previous| previous.tokens);
        let mut pending = Pending::default();
        pending.replace_summary(previous.as_ref(), Some(&summary));
        let entry = Entry { record, ..entry };
        pending
            .batch
            .insert(&keys::location_key(id), entry.encode());
        self.commit(pending)?;
        Ok(trajectory)
    }

    /// Removes trajectories and everything indexed about them; returns how many existed.
    pub fn delete_trajectories(&self, ids: &[TrajectoryId]) -> StoreResult<usize> {
        let _guard = self.write_guard();
        let mut removed = 0;
        for chunk in ids.chunks(10_000) {
            let mut pending = Pending::default();
            for &id in chunk {
                let Some(summary) = self.summary_of(id)? else {
                    continue;
                };
                pending.replace_summary(Some(&summary), None);
                pending.batch.remove(&keys::location_key(id));
                pending.count_delta -= 1;
                pending.text_changes.push((id, TextChange::Deleted));
            }
            removed += pending.text_changes.len();
            self.commit(pending)?;
        }
        Ok(removed)
    }

    /// Applies a pending write atomically (a text change with its journal entry) and
    /// flushes, then tells the indexer.
    fn commit(&self, pending: Pending) -> StoreResult<()> {
        let staged = self.stage(pending)?;
        self.apply(staged)
    }

    /// Turns a pending write into its sled batch: postings and listing rows merged with the
    /// stored ones, the count moved, a text change journalled under the next generation.
    fn stage(&self, pending: Pending) -> StoreResult<Staged> {
        let Pending {
            mut batch,
            postings,
            rows,
            count_delta,
            text_changes,
        } = pending;
        postings.stage(&mut batch, |key| self.db.get(key))?;
        rows.stage(&mut batch, |key| self.db.get(key))?;
        if count_delta != 0 {
            let count = self.stored_count()? as i64 + count_delta;
            batch.insert(keys::count_key(), &(count.max(0) as u64).to_be_bytes());
        }
        let text_changed = !text_changes.is_empty();
        if text_changed {
            let generation = text_journal::generation_in(&self.db)? + 1;
            batch.insert(text_journal::generation_key(), &generation.to_be_bytes());
            batch.insert(
                &keys::journal_key(generation),
                text_journal::encode(&text_changes),
            );
        }
        Ok(Staged {
            batch,
            trajectories: text_changes.len(),
        })
    }

    /// Applies a staged batch atomically and flushes, then tells the indexer.
    fn apply(&self, staged: Staged) -> StoreResult<()> {
        self.db.apply_batch(staged.batch)?;
        self.db.flush()?;
        self.count_writes(staged.trajectories);
        if staged.trajectories > 0
            && let Some(indexer) = &self.text
        {
            indexer.written();
        }
        Ok(())
    }

    /// The number of trajectories as the meta entry records it.
    pub(super) fn stored_count(&self) -> StoreResult<u64> {
        Ok(self
            .db
            .get(keys::count_key())?
            .and_then(|bytes| bytes.as_ref().try_into().ok().map(u64::from_be_bytes))
            .unwrap_or(0))
    }

    /// The location entry of a trajectory.
    pub(super) fn entry(&self, id: TrajectoryId) -> StoreResult<Option<Entry>> {
        entry_in(&self.db, id)
    }

    /// The stored summary of a trajectory.
    pub fn summary_of(&self, id: TrajectoryId) -> StoreResult<Option<Summary>> {
        match self.entry(id)? {
            Some(entry) => self.summary_at(entry.seq),
            None => Ok(None),
        }
    }

    /// The summary stored under a sequence number.
    pub(super) fn summary_at(&self, seq: u64) -> StoreResult<Option<Summary>> {
        let Some(bytes) = self.db.get(keys::summary_key(seq))? else {
            return Ok(None);
        };
        Summary::from_bytes(&bytes)
            .map(Some)
            .ok_or_else(|| StoreError::Corrupt {
                what: format!("summary #{seq}"),
                reason: "cannot decode".into(),
            })
    }

    /// Reads and decodes a trajectory record (without its trace).
    pub(super) fn read_record(&self, id: TrajectoryId, entry: Entry) -> StoreResult<Trajectory> {
        record_in(&self.blobs, id, entry)
    }

    /// Reads a blob, naming the trajectory when it is damaged.
    pub(super) fn read_blob(&self, id: TrajectoryId, location: Location) -> StoreResult<Vec<u8>> {
        blob_in(&self.blobs, id, location)
    }
}

/// The location entry of a trajectory in `db`.
pub(super) fn entry_in(db: &sled::Db, id: TrajectoryId) -> StoreResult<Option<Entry>> {
    match db.get(keys::location_key(id))? {
        Some(bytes) => Entry::stored(&bytes, id).map(Some),
        None => Ok(None),
    }
}

/// Reads and decodes a trajectory record (without its trace) from the blob log.
pub(super) fn record_in(
    blobs: &BlobLog,
    id: TrajectoryId,
    entry: Entry,
) -> StoreResult<Trajectory> {
    let bytes = blob_in(blobs, id, entry.record)?;
    serde_json::from_slice(&bytes).map_err(|error| StoreError::Corrupt {
        what: format!("trajectory {id}"),
        reason: error.to_string(),
    })
}

fn blob_in(blobs: &BlobLog, id: TrajectoryId, location: Location) -> StoreResult<Vec<u8>> {
    blobs.read(location).map_err(|reason| StoreError::Corrupt {
        what: format!("blob of trajectory {id}"),
        reason,
    })
}

/// The error of a blob log that returned fewer locations than it was given blobs.
pub(super) fn missing_location() -> StoreError {
    StoreError::Invalid("the blob log returned fewer locations than blobs".into())
}
