//! Listing rows: beside each summary, the 9 bytes a listing needs of a trajectory (its id, its
//! outcome, whether a person labelled it), so a listing the posting lists can answer (a
//! label, an outcome, the badcase queue, or everything) reads megabytes of rows instead of
//! every summary: at a million trajectories the summaries are hundreds of MiB. Rows are kept
//! 256 to a sled entry (one block of sequence numbers), so a listing reads a few thousand
//! entries, not one per trajectory.

use super::query::{Filter, Query};
use super::summary::Summary;
use super::{LocalStore, SortKey, StoreResult, keys};
use crate::trajectory::TrajectoryId;
use std::collections::BTreeMap;

/// Sequence numbers per block of rows.
const BLOCK_BITS: u32 = 8;

/// Bytes of a row in a block: the low byte of its sequence number, then the row.
const ENTRY_BYTES: usize = 1 + ROW_BYTES;

/// Bytes of an encoded row.
const ROW_BYTES: usize = 9;

/// Summaries read per sled batch when the rows of an older store are built.
const BUILD_BATCH: usize = 50_000;

/// The block of a sequence number.
fn block_of(seq: u64) -> u64 {
    seq >> BLOCK_BITS
}

/// What a listing needs of one trajectory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ListingRow {
    /// The trajectory.
    pub id: TrajectoryId,
    /// Pass, fail, or no verdict.
    pub passed: Option<bool>,
    /// Whether it carries a confirmed label.
    pub confirmed: bool,
}

impl ListingRow {
    /// The row of a summary.
    pub fn of(summary: &Summary) -> Self {
        Self {
            id: summary.id,
            passed: summary.passed,
            confirmed: summary.confirmed != 0,
        }
    }

    /// Encodes for the store: the id, then the outcome (0 none, 1 fail, 2 pass) with the
    /// confirmed flag in bit 2.
    pub fn to_bytes(self) -> [u8; ROW_BYTES] {
        let mut bytes = [0; ROW_BYTES];
        bytes[..8].copy_from_slice(&self.id.to_bytes());
        let outcome = match self.passed {
            None => 0,
            Some(false) => 1,
            Some(true) => 2,
        };
        bytes[8] = outcome | (u8::from(self.confirmed) << 2);
        bytes
    }

    /// Decodes what `to_bytes` wrote; `None` for anything else.
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        let (&flags, id) = bytes.split_last()?;
        let passed = match flags & 0b11 {
            0 => None,
            1 => Some(false),
            2 => Some(true),
            _ => return None,
        };
        Some(Self {
            id: TrajectoryId::from_bytes(id)?,
            passed,
            confirmed: flags & 0b100 != 0,
        })
    }

    /// Failed, and no person has labelled it yet: the badcase queue.
    pub fn is_unlabelled_failure(self) -> bool {
        Summary::unlabelled_failure(self.passed, self.confirmed)
    }
}

/// A block's rows by the low byte of their sequence numbers; `None` for a malformed value.
fn decode_block(value: &[u8]) -> Option<BTreeMap<u8, ListingRow>> {
    if !value.len().is_multiple_of(ENTRY_BYTES) {
        return None;
    }
    value
        .chunks_exact(ENTRY_BYTES)
        .map(|entry| Some((entry[0], ListingRow::from_bytes(&entry[1..])?)))
        .collect()
}

fn encode_block(rows: &BTreeMap<u8, ListingRow>) -> Vec<u8> {
    let mut value = Vec::with_capacity(rows.len() * ENTRY_BYTES);
    for (low, row) in rows {
        value.push(*low);
        value.extend_from_slice(&row.to_bytes());
    }
    value
}

fn low_byte(seq: u64) -> u8 {
    (seq & ((1 << BLOCK_BITS) - 1)) as u8
}

/// Pending row writes and removals, grouped by block.
#[derive(Debug, Default)]
pub(super) struct RowChanges {
    blocks: BTreeMap<u64, BTreeMap<u8, Option<ListingRow>>>,
}

impl RowChanges {
    /// Writes (or replaces) the row of `seq`.
    pub fn put(&mut self, seq: u64, row: ListingRow) {
        self.change(seq, Some(row));
    }

    /// Removes the row of `seq`.
    pub fn remove(&mut self, seq: u64) {
        self.change(seq, None);
    }

    fn change(&mut self, seq: u64, row: Option<ListingRow>) {
        self.blocks
            .entry(block_of(seq))
            .or_default()
            .insert(low_byte(seq), row);
    }

    /// Applies the changes to the current blocks (read through `current`) and stages the new
    /// values (or removals of emptied blocks) in `batch`. A malformed block is rewritten
    /// from the changes alone.
    pub fn stage(
        self,
        batch: &mut sled::Batch,
        mut current: impl FnMut(&[u8]) -> sled::Result<Option<sled::IVec>>,
    ) -> sled::Result<()> {
        for (block, changes) in self.blocks {
            let key = keys::row_block_key(block);
            let mut rows = current(&key)?
                .and_then(|value| decode_block(&value))
                .unwrap_or_default();
            for (low, row) in changes {
                match row {
                    Some(row) => rows.insert(low, row),
                    None => rows.remove(&low),
                };
            }
            if rows.is_empty() {
                batch.remove(&key);
            } else {
                batch.insert(&key, encode_block(&rows));
            }
        }
        Ok(())
    }
}

impl LocalStore {
    /// The rows a stored-order query selects, as (id, unlabelled failure), when its filter
    /// needs nothing of the summaries; `None` otherwise, or when a row is missing.
    pub(super) fn listed_by_rows(
        &self,
        query: &Query,
    ) -> StoreResult<Option<Vec<(TrajectoryId, bool)>>> {
        let filter = &query.filter;
        if query.sort != SortKey::Stored || !filter.answered_by_rows() {
            return Ok(None);
        }
        let enough = query.enough();
        let mut rows = Vec::new();
        let mut offer = |row: ListingRow| {
            let unlabelled_failure = row.is_unlabelled_failure();
            if filter.outcome_matches(row.passed) && filter.queue_matches(unlabelled_failure) {
                rows.push((row.id, unlabelled_failure));
            }
            enough.is_none_or(|enough| rows.len() < enough)
        };
        // A label or a search narrows the rows to read; an outcome or the queue alone reads
        // every block in order.
        let candidates = if filter.label.is_some() || filter.full_text.is_some() {
            self.candidates(filter)?
        } else {
            None
        };
        match candidates {
            Some(seqs) => {
                let mut current: Option<(u64, BTreeMap<u8, ListingRow>)> = None;
                for seq in seqs {
                    let block = block_of(seq);
                    if current.as_ref().map(|(number, _)| *number) != Some(block) {
                        let Some(rows) = self.row_block(block)? else {
                            return Ok(None);
                        };
                        current = Some((block, rows));
                    }
                    let row = current
                        .as_ref()
                        .and_then(|(_, rows)| rows.get(&low_byte(seq)));
                    let Some(row) = row else {
                        return Ok(None);
                    };
                    if !offer(*row) {
                        break;
                    }
                }
            }
            None => {
                'blocks: for entry in self.db.scan_prefix([keys::ROW]) {
                    let (_, value) = entry?;
                    let Some(rows) = decode_block(&value) else {
                        return Ok(None);
                    };
                    for row in rows.into_values() {
                        if !offer(row) {
                            break 'blocks;
                        }
                    }
                }
            }
        }
        Ok(Some(rows))
    }

    /// The rows of a block; `None` when it is missing or malformed.
    fn row_block(&self, block: u64) -> StoreResult<Option<BTreeMap<u8, ListingRow>>> {
        let value = self.db.get(keys::row_block_key(block))?;
        Ok(value.and_then(|value| decode_block(&value)))
    }

    /// Writes the listing row of every summary (a store of schema 1 has none).
    pub(super) fn build_rows(&self) -> StoreResult<()> {
        let _guard = self.write_guard();
        let mut changes = RowChanges::default();
        for (read, entry) in self.db.scan_prefix([keys::SUMMARY]).enumerate() {
            let (_, bytes) = entry?;
            if let Some(summary) = Summary::from_bytes(&bytes) {
                changes.put(summary.seq, ListingRow::of(&summary));
            }
            if (read + 1) % BUILD_BATCH == 0 {
                self.stage_rows(std::mem::take(&mut changes))?;
            }
        }
        self.stage_rows(changes)?;
        self.db.flush()?;
        Ok(())
    }

    fn stage_rows(&self, changes: RowChanges) -> StoreResult<()> {
        let mut batch = sled::Batch::default();
        changes.stage(&mut batch, |key| self.db.get(key))?;
        self.db.apply_batch(batch)?;
        Ok(())
    }
}

impl Filter {
    /// Whether the posting lists, the search index and listing rows alone answer this
    /// filter: a label (with its status, if any), an outcome, the badcase queue, a search of
    /// what was said, or nothing at all.
    pub(super) fn answered_by_rows(&self) -> bool {
        let Filter {
            ids,
            run,
            step,
            group,
            task,
            label,
            label_status,
            outcome: _,
            unlabelled_failures: _,
            reward_min,
            reward_max,
            text,
            full_text: _,
        } = self;
        ids.is_none()
            && run.is_none()
            && step.is_none()
            && group.is_none()
            && task.is_none()
            && (label.is_some() || label_status.is_none())
            && reward_min.is_none()
            && reward_max.is_none()
            && text.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: u64, passed: Option<bool>, confirmed: bool) -> ListingRow {
        ListingRow {
            id: TrajectoryId(id),
            passed,
            confirmed,
        }
    }

    #[test]
    fn rows_round_trip_every_outcome_and_flag() {
        for passed in [None, Some(false), Some(true)] {
            for confirmed in [false, true] {
                let row = row(0x0123_4567_89ab_cdef, passed, confirmed);
                assert_eq!(ListingRow::from_bytes(&row.to_bytes()), Some(row));
            }
        }
        assert_eq!(ListingRow::from_bytes(&[0; 8]), None, "too short");
        assert_eq!(ListingRow::from_bytes(&[0, 0, 0, 0, 0, 0, 0, 0, 3]), None);
    }

    #[test]
    fn rows_land_in_their_blocks_and_emptied_blocks_go() {
        let db = sled::Config::new().temporary(true).open().unwrap();
        let stage = |changes: RowChanges| {
            let mut batch = sled::Batch::default();
            changes.stage(&mut batch, |key| db.get(key)).unwrap();
            db.apply_batch(batch).unwrap();
        };
        let mut changes = RowChanges::default();
        for seq in [1, 5, 255, 256, 70_000] {
            changes.put(seq, row(seq * 10, Some(false), false));
        }
        stage(changes);
        let mut changes = RowChanges::default();
        changes.remove(5);
        changes.remove(70_000);
        changes.put(1, row(10, Some(true), true));
        stage(changes);
        let stored: Vec<(u64, ListingRow)> = db
            .scan_prefix([keys::ROW])
            .flat_map(|entry| {
                let (key, value) = entry.unwrap();
                let block = u64::from_be_bytes(key[1..].try_into().unwrap());
                decode_block(&value)
                    .unwrap()
                    .into_iter()
                    .map(move |(low, row)| ((block << BLOCK_BITS) | u64::from(low), row))
            })
            .collect();
        assert_eq!(
            stored,
            [
                (1, row(10, Some(true), true)),
                (255, row(2550, Some(false), false)),
                (256, row(2560, Some(false), false)),
            ]
        );
        assert_eq!(
            db.scan_prefix([keys::ROW]).count(),
            2,
            "the emptied block is gone"
        );
    }
}
