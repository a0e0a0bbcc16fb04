//! Key layout of the store's single sled tree: one prefix byte per kind of record, so that a
//! trajectory and all its index entries are written in one atomic batch.

use crate::trajectory::{ErrorKind, LabelStatus, TrajectoryId};

/// Schema version and other settings.
pub const META: u8 = b'm';
/// Trajectory id → trajectory JSON without its token trace.
pub const TRAJECTORY: u8 = b't';
/// Trajectory id → packed token trace.
pub const TRACE: u8 = b'r';
/// Sequence number → compact summary (list order = insertion order).
pub const SUMMARY: u8 = b's';
/// Trajectory id → sequence number.
pub const SEQUENCE: u8 = b'i';
/// Index by run, step, group, sample.
pub const BY_RUN: u8 = b'R';
/// Index by task id.
pub const BY_TASK: u8 = b'K';
/// Index by label kind and status.
pub const BY_LABEL: u8 = b'L';
/// Index by outcome (pass, fail, none) and reward bucket.
pub const BY_OUTCOME: u8 = b'O';
/// Task id → task JSON.
pub const TASK: u8 = b'T';
/// Run id → run JSON.
pub const RUN: u8 = b'U';
/// Run id, step → metrics row JSON.
pub const METRICS: u8 = b'M';

/// The meta key holding the schema version.
pub fn schema_key() -> Vec<u8> {
    meta_key("schema")
}

/// A meta key by name.
pub fn meta_key(name: &str) -> Vec<u8> {
    let mut key = vec![META];
    key.extend_from_slice(name.as_bytes());
    key
}

/// `prefix` followed by a trajectory id.
pub fn by_id(prefix: u8, id: TrajectoryId) -> [u8; 9] {
    let mut key = [prefix; 9];
    key[1..].copy_from_slice(&id.to_bytes());
    key
}

/// The summary key of a sequence number.
pub fn summary_key(seq: u64) -> [u8; 9] {
    let mut key = [SUMMARY; 9];
    key[1..].copy_from_slice(&seq.to_be_bytes());
    key
}

/// Reads the trailing 8-byte sequence number of an index key.
pub fn trailing_seq(key: &[u8]) -> Option<u64> {
    let tail = key.len().checked_sub(8)?;
    Some(u64::from_be_bytes(key[tail..].try_into().ok()?))
}

/// `prefix` + text + NUL: the start of every key about that string.
pub fn text_prefix(prefix: u8, text: &str) -> Vec<u8> {
    let mut key = Vec::with_capacity(text.len() + 2);
    key.push(prefix);
    key.extend_from_slice(text.as_bytes());
    key.push(0);
    key
}

/// The run-index prefix of a run, optionally narrowed to a step.
pub fn run_prefix(run: &str, step: Option<u64>) -> Vec<u8> {
    let mut key = text_prefix(BY_RUN, run);
    if let Some(step) = step {
        key.extend_from_slice(&step.to_be_bytes());
    }
    key
}

/// A run-index entry.
pub fn run_key(run: &str, step: u64, group: u64, sample: u32, seq: u64) -> Vec<u8> {
    let mut key = run_prefix(run, Some(step));
    key.extend_from_slice(&group.to_be_bytes());
    key.extend_from_slice(&sample.to_be_bytes());
    key.extend_from_slice(&seq.to_be_bytes());
    key
}

/// A task-index entry.
pub fn task_key(task: &str, seq: u64) -> Vec<u8> {
    let mut key = text_prefix(BY_TASK, task);
    key.extend_from_slice(&seq.to_be_bytes());
    key
}

/// The label-index prefix of a kind, optionally narrowed to a status.
pub fn label_prefix(kind: ErrorKind, status: Option<LabelStatus>) -> Vec<u8> {
    let mut key = vec![BY_LABEL, kind.index()];
    if let Some(status) = status {
        key.push(status_byte(status));
    }
    key
}

/// A label-index entry.
pub fn label_key(kind: ErrorKind, status: LabelStatus, seq: u64) -> Vec<u8> {
    let mut key = label_prefix(kind, Some(status));
    key.extend_from_slice(&seq.to_be_bytes());
    key
}

fn status_byte(status: LabelStatus) -> u8 {
    match status {
        LabelStatus::Suggested => 0,
        LabelStatus::Confirmed => 1,
    }
}

/// Outcome codes in the outcome index.
pub fn outcome_byte(passed: Option<bool>) -> u8 {
    match passed {
        Some(false) => 0,
        Some(true) => 1,
        None => 2,
    }
}

/// The reward bucket of the outcome index: tenths of [0, 1], clamped; 255 without reward.
pub fn reward_bucket(reward: Option<f64>) -> u8 {
    reward.map_or(255, |reward| (reward.clamp(0.0, 1.0) * 10.0).floor() as u8)
}

/// An outcome-index entry.
pub fn outcome_key(passed: Option<bool>, reward: Option<f64>, seq: u64) -> Vec<u8> {
    let mut key = vec![BY_OUTCOME, outcome_byte(passed), reward_bucket(reward)];
    key.extend_from_slice(&seq.to_be_bytes());
    key
}

/// A metrics-row key.
pub fn metrics_key(run: &str, step: u64) -> Vec<u8> {
    let mut key = text_prefix(METRICS, run);
    key.extend_from_slice(&step.to_be_bytes());
    key
}
