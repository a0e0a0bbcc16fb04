//! Secondary indexes as chunked posting lists: one sled entry per (index value, block of
//! 4,096 sequence numbers) holding the sorted low bits of its members. A batch of writes
//! touches a handful of entries instead of one per trajectory and index.

use std::collections::BTreeMap;

/// Sequence numbers per block.
const BLOCK_BITS: u32 = 12;

/// The block of a sequence number, as a key suffix.
pub fn block_of(seq: u64) -> u64 {
    seq >> BLOCK_BITS
}

/// The key of `seq`'s block under an index prefix.
pub fn block_key(prefix: &[u8], seq: u64) -> Vec<u8> {
    let mut key = Vec::with_capacity(prefix.len() + 8);
    key.extend_from_slice(prefix);
    key.extend_from_slice(&block_of(seq).to_be_bytes());
    key
}

/// Decodes a block's members into full sequence numbers.
pub fn members(key: &[u8], value: &[u8]) -> impl Iterator<Item = u64> {
    let block = key
        .len()
        .checked_sub(8)
        .and_then(|at| key[at..].try_into().ok())
        .map_or(0, u64::from_be_bytes);
    value
        .chunks_exact(2)
        .map(move |pair| (block << BLOCK_BITS) | u64::from(u16::from_le_bytes([pair[0], pair[1]])))
}

/// Pending additions and removals, grouped by block key.
#[derive(Debug, Default)]
pub struct PostingChanges {
    changes: BTreeMap<Vec<u8>, (Vec<u16>, Vec<u16>)>,
}

impl PostingChanges {
    /// Adds `seq` under the index entry `prefix`.
    pub fn add(&mut self, prefix: &[u8], seq: u64) {
        self.changes
            .entry(block_key(prefix, seq))
            .or_default()
            .0
            .push(low_bits(seq));
    }

    /// Removes `seq` from the index entry `prefix`.
    pub fn remove(&mut self, prefix: &[u8], seq: u64) {
        self.changes
            .entry(block_key(prefix, seq))
            .or_default()
            .1
            .push(low_bits(seq));
    }

    /// Applies the changes to the current block values (read through `current`) and stages
    /// the new values (or removals of emptied blocks) in `batch`.
    pub fn stage(
        self,
        batch: &mut sled::Batch,
        mut current: impl FnMut(&[u8]) -> sled::Result<Option<sled::IVec>>,
    ) -> sled::Result<()> {
        for (key, (mut added, mut removed)) in self.changes {
            added.sort_unstable();
            removed.sort_unstable();
            let mut set: Vec<u16> = current(&key)?
                .map(|value| {
                    value
                        .chunks_exact(2)
                        .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
                        .collect()
                })
                .unwrap_or_default();
            set.retain(|member| {
                removed.binary_search(member).is_err() || added.binary_search(member).is_ok()
            });
            set.extend(added);
            set.sort_unstable();
            set.dedup();
            if set.is_empty() {
                batch.remove(key);
            } else {
                let bytes: Vec<u8> = set.iter().flat_map(|member| member.to_le_bytes()).collect();
                batch.insert(key, bytes);
            }
        }
        Ok(())
    }
}

fn low_bits(seq: u64) -> u16 {
    (seq & ((1 << BLOCK_BITS) - 1)) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn additions_and_removals_land_in_their_blocks() {
        let db = sled::Config::new().temporary(true).open().unwrap();
        let mut changes = PostingChanges::default();
        for seq in [1, 5, 4095, 4096, 70_000] {
            changes.add(b"Lx", seq);
        }
        let mut batch = sled::Batch::default();
        changes.stage(&mut batch, |key| db.get(key)).unwrap();
        db.apply_batch(batch).unwrap();
        let mut changes = PostingChanges::default();
        changes.remove(b"Lx", 5);
        changes.remove(b"Lx", 70_000);
        let mut batch = sled::Batch::default();
        changes.stage(&mut batch, |key| db.get(key)).unwrap();
        db.apply_batch(batch).unwrap();
        let seqs: Vec<u64> = db
            .scan_prefix(b"Lx")
            .flat_map(|entry| {
                let (key, value) = entry.unwrap();
                members(&key, &value).collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(seqs, vec![1, 4095, 4096]);
        assert_eq!(
            db.scan_prefix(b"Lx").count(),
            2,
            "the emptied block is removed"
        );
    }
}
