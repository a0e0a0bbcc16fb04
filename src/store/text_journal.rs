//! The text generation and journal: every write that changes what was said moves the
//! generation and records, under it and in the same atomic batch, which trajectories it
//! stored, replaced or removed. The search index catches up by replaying the generations
//! after the one it holds; entries it holds are pruned.

use super::{StoreResult, keys};
use crate::trajectory::TrajectoryId;
use std::collections::BTreeMap;

/// The meta key holding the text generation.
pub(super) fn generation_key() -> Vec<u8> {
    keys::meta_key("text-generation")
}

/// The text generation recorded in `db`: how many writes have changed stored text.
pub(super) fn generation_in(db: &sled::Db) -> StoreResult<u64> {
    Ok(db
        .get(generation_key())?
        .and_then(|bytes| bytes.as_ref().try_into().ok().map(u64::from_be_bytes))
        .unwrap_or(0))
}

/// What one write did to a trajectory's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TextChange {
    /// Stored for the first time.
    Added,
    /// Stored over an earlier version.
    Replaced,
    /// Removed.
    Deleted,
}

impl TextChange {
    fn code(self) -> u8 {
        match self {
            TextChange::Added => 0,
            TextChange::Replaced => 1,
            TextChange::Deleted => 2,
        }
    }

    fn of_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(TextChange::Added),
            1 => Some(TextChange::Replaced),
            2 => Some(TextChange::Deleted),
            _ => None,
        }
    }
}

/// The bytes of one journal entry: a code and an id per change.
pub(super) fn encode(changes: &[(TrajectoryId, TextChange)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(changes.len() * 9);
    for (id, change) in changes {
        out.push(change.code());
        out.extend_from_slice(&id.to_bytes());
    }
    out
}

fn decode(bytes: &[u8]) -> Option<Vec<(TrajectoryId, TextChange)>> {
    if !bytes.len().is_multiple_of(9) {
        return None;
    }
    bytes
        .chunks_exact(9)
        .map(|chunk| {
            Some((
                TrajectoryId::from_bytes(&chunk[1..])?,
                TextChange::of_code(chunk[0])?,
            ))
        })
        .collect()
}

/// What the index must do to catch up: per trajectory, whether documents it may hold must be
/// deleted first (it was replaced or removed since), in id order.
pub(super) type Replay = BTreeMap<TrajectoryId, bool>;

/// The changes of generations `after + 1 ..= through`, merged per trajectory (every change
/// of a generation up to `delete_through` deletes first); `None` when the journal does not
/// hold every one of them (written before the journal existed, or unreadable), so the index
/// must be rebuilt instead.
pub(super) fn replay(
    db: &sled::Db,
    after: u64,
    through: u64,
    delete_through: u64,
) -> StoreResult<Option<Replay>> {
    let mut merged = Replay::new();
    let mut expected = after + 1;
    for item in db.range(keys::journal_key(expected)..=keys::journal_key(through)) {
        let (key, value) = item?;
        let generation = key
            .get(1..)
            .and_then(|bytes| bytes.try_into().ok())
            .map(u64::from_be_bytes);
        let (Some(generation), Some(changes)) = (generation, decode(&value)) else {
            return Ok(None);
        };
        if generation != expected {
            return Ok(None);
        }
        expected += 1;
        for (id, change) in changes {
            let delete_first = merged.get(&id).copied().unwrap_or(false);
            let stale = change != TextChange::Added || generation <= delete_through;
            merged.insert(id, delete_first || stale);
        }
    }
    Ok((expected == through + 1).then_some(merged))
}

/// Removes the entries of generations up to `through` (the index holds them).
pub(super) fn prune(db: &sled::Db, through: u64) -> StoreResult<()> {
    let mut batch = sled::Batch::default();
    for key in db
        .range(keys::journal_key(0)..=keys::journal_key(through))
        .keys()
    {
        batch.remove(key?);
    }
    db.apply_batch(batch)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_merge_per_trajectory() {
        let changes = [
            (TrajectoryId(7), TextChange::Added),
            (TrajectoryId(3), TextChange::Deleted),
        ];
        assert_eq!(decode(&encode(&changes)).unwrap(), changes);
        assert_eq!(decode(&[9; 9]), None, "an unknown change code");
        let db = sled::Config::new().temporary(true).open().unwrap();
        db.insert(keys::journal_key(1), encode(&changes)).unwrap();
        db.insert(
            keys::journal_key(2),
            encode(&[(TrajectoryId(7), TextChange::Replaced)]),
        )
        .unwrap();
        let merged = replay(&db, 0, 2, 0).unwrap().unwrap();
        assert_eq!(
            merged.into_iter().collect::<Vec<_>>(),
            [(TrajectoryId(3), true), (TrajectoryId(7), true)]
        );
        assert!(replay(&db, 1, 2, 0).unwrap().unwrap()[&TrajectoryId(7)]);
        let first = replay(&db, 0, 1, 0).unwrap().unwrap();
        assert!(!first[&TrajectoryId(7)], "added: nothing to delete");
        let reread = replay(&db, 0, 1, 1).unwrap().unwrap();
        assert!(
            reread[&TrajectoryId(7)],
            "may be indexed already: delete first"
        );
        assert!(
            replay(&db, 0, 3, 0).unwrap().is_none(),
            "generation 3 is missing"
        );
        db.insert(keys::journal_key(4), encode(&changes)).unwrap();
        assert!(replay(&db, 1, 4, 0).unwrap().is_none(), "a gap at 3");
        prune(&db, 2).unwrap();
        assert!(replay(&db, 0, 1, 0).unwrap().is_none(), "pruned");
        assert_eq!(db.len(), 1);
    }
}
