//! What an index commit records (tantivy's commit payload): the store text generation the
//! index holds, and the newest generation whose entries the catch-up that made it read.
//! Records changed up to that one may already be indexed in their newer form, so a replay
//! of those generations deletes before it adds, in this process or after a restart.

use serde::{Deserialize, Serialize};

/// The generations an index commit records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexCommit {
    /// The store text generation the index holds.
    pub generation: u64,
    /// The newest store generation whose entries were read while indexing it.
    pub read_through: u64,
}

impl IndexCommit {
    /// The payload tantivy stores with the commit.
    pub fn payload(&self) -> String {
        serde_json::json!(self).to_string()
    }

    /// Reads a payload. One written before `read_through` was recorded (a bare generation)
    /// is taken as read through everything, so every replay deletes first: slower once,
    /// never a duplicate.
    pub fn from_payload(payload: &str) -> Option<Self> {
        serde_json::from_str(payload).ok().or_else(|| {
            payload.trim().parse().ok().map(|generation| Self {
                generation,
                read_through: u64::MAX,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_round_trip_and_bare_generations_delete_first() {
        let commit = IndexCommit {
            generation: 12,
            read_through: 15,
        };
        assert_eq!(IndexCommit::from_payload(&commit.payload()), Some(commit));
        assert_eq!(
            IndexCommit::from_payload("12"),
            Some(IndexCommit {
                generation: 12,
                read_through: u64::MAX
            })
        );
        assert_eq!(IndexCommit::from_payload("twelve"), None);
    }
}
