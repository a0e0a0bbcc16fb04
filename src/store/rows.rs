//! Listing rows: beside each summary, the 9 bytes a listing needs of a trajectory (its id, its
//! outcome, whether a person labelled it), so a listing the posting lists can answer (a
//! label, an outcome, the badcase queue, or everything) reads megabytes of rows instead of
//! every summary: at a million trajectories the summaries are hundreds of MiB.

use super::query::{Filter, Query};
use super::summary::Summary;
use super::{LocalStore, SortKey, StoreResult, keys};
use crate::trajectory::TrajectoryId;

/// Rows written per sled batch when the rows of an older store are built.
const BUILD_BATCH: usize = 50_000;

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
    pub fn to_bytes(self) -> [u8; 9] {
        let mut bytes = [0; 9];
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
            if filter.outcome_matches(row.passed)
                && filter.queue_matches(row.is_unlabelled_failure())
            {
                rows.push((row.id, row.is_unlabelled_failure()));
            }
            enough.is_none_or(|enough| rows.len() < enough)
        };
        match filter.label {
            Some(kind) => {
                let prefix = keys::label_prefix(kind, filter.label_status);
                for seq in self.posting_members(&prefix)? {
                    let Some(bytes) = self.db.get(keys::row_key(seq))? else {
                        return Ok(None);
                    };
                    let Some(row) = ListingRow::from_bytes(&bytes) else {
                        return Ok(None);
                    };
                    if !offer(row) {
                        break;
                    }
                }
            }
            None => {
                for entry in self.db.scan_prefix([keys::ROW]) {
                    let (_, bytes) = entry?;
                    let Some(row) = ListingRow::from_bytes(&bytes) else {
                        return Ok(None);
                    };
                    if !offer(row) {
                        break;
                    }
                }
            }
        }
        Ok(Some(rows))
    }

    /// Writes the listing row of every summary (a store of schema 1 has none).
    pub(super) fn build_rows(&self) -> StoreResult<()> {
        let _guard = self.write_guard();
        let mut batch = sled::Batch::default();
        let mut staged = 0;
        for entry in self.db.scan_prefix([keys::SUMMARY]) {
            let (_, bytes) = entry?;
            if let Some(summary) = Summary::from_bytes(&bytes) {
                batch.insert(
                    &keys::row_key(summary.seq),
                    &ListingRow::of(&summary).to_bytes(),
                );
                staged += 1;
            }
            if staged == BUILD_BATCH {
                self.db.apply_batch(std::mem::take(&mut batch))?;
                staged = 0;
            }
        }
        self.db.apply_batch(batch)?;
        self.db.flush()?;
        Ok(())
    }
}

impl Filter {
    /// Whether the posting lists and listing rows alone answer this filter: a label (with
    /// its status, if any), an outcome, the badcase queue, or nothing at all.
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
            full_text,
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
            && full_text.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_every_outcome_and_flag() {
        for passed in [None, Some(false), Some(true)] {
            for confirmed in [false, true] {
                let row = ListingRow {
                    id: TrajectoryId(0x0123_4567_89ab_cdef),
                    passed,
                    confirmed,
                };
                assert_eq!(ListingRow::from_bytes(&row.to_bytes()), Some(row));
            }
        }
        assert_eq!(ListingRow::from_bytes(&[0; 8]), None, "too short");
        assert_eq!(ListingRow::from_bytes(&[0, 0, 0, 0, 0, 0, 0, 0, 3]), None);
    }
}
