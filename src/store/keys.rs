//! Key layout of the store's sled tree: one prefix byte per kind of entry. Bulky records live
//! in the blob log; sled holds summaries, listing rows, locations, indexes, tasks, runs and
//! metrics, and a trajectory's entries are written in one atomic batch.

use crate::trajectory::{ErrorKind, LabelStatus, TrajectoryId};

/// Schema version, trajectory count and other settings.
pub const META: u8 = b'm';
/// Sequence number → compact summary (list order = insertion order).
pub const SUMMARY: u8 = b's';
/// Block of 256 sequence numbers → their listing rows: id, outcome, whether a person
/// labelled it (`rows`).
pub const ROW: u8 = b'W';
/// Trajectory id → sequence number and blob locations of its record and trace.
pub const LOCATION: u8 = b'i';
/// Index by run and step (posting lists).
pub const BY_RUN: u8 = b'R';
/// Index by task id (posting lists).
pub const BY_TASK: u8 = b'K';
/// Index by label kind and status (posting lists).
pub const BY_LABEL: u8 = b'L';
/// Index by outcome: fail, pass, none (posting lists).
pub const BY_OUTCOME: u8 = b'O';
/// Task id → task JSON.
pub const TASK: u8 = b'T';
/// Run id → run JSON.
pub const RUN: u8 = b'U';
/// Run id, step → metrics row JSON.
pub const METRICS: u8 = b'M';
/// Run id → what a user last asked of it (pause, resume, stop), JSON.
pub const RUN_REQUEST: u8 = b'Q';
/// Text generation → the trajectories that write changed, for the search index to catch up.
pub const TEXT_JOURNAL: u8 = b'J';

/// A meta key by name.
pub fn meta_key(name: &str) -> Vec<u8> {
    let mut key = vec![META];
    key.extend_from_slice(name.as_bytes());
    key
}

/// The meta key holding the schema version.
pub fn schema_key() -> Vec<u8> {
    meta_key("schema")
}

/// The meta key holding the number of trajectories.
pub fn count_key() -> Vec<u8> {
    meta_key("count")
}

/// The location key of a trajectory.
pub fn location_key(id: TrajectoryId) -> [u8; 9] {
    let mut key = [LOCATION; 9];
    key[1..].copy_from_slice(&id.to_bytes());
    key
}

/// The text journal key of a generation.
pub fn journal_key(generation: u64) -> [u8; 9] {
    let mut key = [TEXT_JOURNAL; 9];
    key[1..].copy_from_slice(&generation.to_be_bytes());
    key
}

/// The summary key of a sequence number.
pub fn summary_key(seq: u64) -> [u8; 9] {
    let mut key = [SUMMARY; 9];
    key[1..].copy_from_slice(&seq.to_be_bytes());
    key
}

/// The key of a block of listing rows.
pub fn row_block_key(block: u64) -> [u8; 9] {
    let mut key = [ROW; 9];
    key[1..].copy_from_slice(&block.to_be_bytes());
    key
}

/// `prefix` + text + NUL: the start of every key about that string.
pub fn text_prefix(prefix: u8, text: &str) -> Vec<u8> {
    let mut key = Vec::with_capacity(text.len() + 2);
    key.push(prefix);
    key.extend_from_slice(text.as_bytes());
    key.push(0);
    key
}

/// The run index entry of a run, optionally narrowed to a step.
pub fn run_prefix(run: &str, step: Option<u64>) -> Vec<u8> {
    let mut key = text_prefix(BY_RUN, run);
    if let Some(step) = step {
        key.extend_from_slice(&step.to_be_bytes());
    }
    key
}

/// The label index entry of a kind, optionally narrowed to a status.
pub fn label_prefix(kind: ErrorKind, status: Option<LabelStatus>) -> Vec<u8> {
    let mut key = vec![BY_LABEL, kind.index()];
    if let Some(status) = status {
        key.push(match status {
            LabelStatus::Suggested => 0,
            LabelStatus::Confirmed => 1,
        });
    }
    key
}

/// The outcome index entry: fail, pass, or no verdict.
pub fn outcome_prefix(passed: Option<bool>) -> Vec<u8> {
    let code = match passed {
        Some(false) => 0,
        Some(true) => 1,
        None => 2,
    };
    vec![BY_OUTCOME, code]
}

/// A metrics-row key.
pub fn metrics_key(run: &str, step: u64) -> Vec<u8> {
    let mut key = text_prefix(METRICS, run);
    key.extend_from_slice(&step.to_be_bytes());
    key
}
