//! Writing trajectories: record, trace, summary and index entries in one atomic batch, then a
//! flush; only then is a write reported saved.

use super::summary::Summary;
use super::{Store, StoreError, StoreResult, keys, trace_codec};
use crate::trajectory::{ErrorKind, LabelStatus, Trajectory, TrajectoryId};
use std::collections::HashMap;

/// The index entries a summary implies.
pub(super) fn index_keys(summary: &Summary) -> Vec<Vec<u8>> {
    let mut entries = Vec::with_capacity(6);
    if !summary.run.is_empty() {
        entries.push(keys::run_key(
            &summary.run,
            summary.step.unwrap_or(0),
            summary.group.unwrap_or(0),
            summary.sample.unwrap_or(0),
            summary.seq,
        ));
    }
    if !summary.task_id.is_empty() {
        entries.push(keys::task_key(&summary.task_id, summary.seq));
    }
    for kind in summary.confirmed_kinds() {
        entries.push(keys::label_key(kind, LabelStatus::Confirmed, summary.seq));
    }
    for kind in summary.suggested_kinds() {
        entries.push(keys::label_key(kind, LabelStatus::Suggested, summary.seq));
    }
    entries.push(keys::outcome_key(
        summary.passed,
        summary.reward,
        summary.seq,
    ));
    entries
}

impl Store {
    /// Stores trajectories (replacing any with the same id) in one atomic batch and flushes.
    /// When this returns `Ok`, every one of them is durable.
    pub fn put_trajectories(&self, trajectories: &[Trajectory]) -> StoreResult<()> {
        let _guard = self.write_guard();
        let mut batch = sled::Batch::default();
        let mut assigned: HashMap<TrajectoryId, Summary> = HashMap::new();
        for trajectory in trajectories {
            if let Some(trace) = &trajectory.token_trace {
                trace.validate().map_err(|reason| {
                    StoreError::Invalid(format!("trajectory {}: {reason}", trajectory.id))
                })?;
            }
            let previous = match assigned.remove(&trajectory.id) {
                Some(summary) => Some(summary),
                None => self.summary_of(trajectory.id)?,
            };
            let seq = match &previous {
                Some(summary) => summary.seq,
                None => self.db.generate_id()?,
            };
            let summary = Summary::of(trajectory, seq);
            self.stage(&mut batch, trajectory, previous.as_ref(), &summary, true)?;
            assigned.insert(trajectory.id, summary);
        }
        self.db.apply_batch(batch)?;
        self.db.flush()?;
        Ok(())
    }

    /// Applies a change to a stored trajectory (not its token trace), re-indexes it and
    /// flushes; returns the trajectory as saved.
    pub fn update_trajectory(
        &self,
        id: TrajectoryId,
        change: impl FnOnce(&mut Trajectory),
    ) -> StoreResult<Trajectory> {
        let _guard = self.write_guard();
        let mut trajectory = self
            .get_without_trace(id)?
            .ok_or_else(|| StoreError::NotFound(id.to_string()))?;
        let previous = self
            .summary_of(id)?
            .ok_or_else(|| StoreError::NotFound(id.to_string()))?;
        change(&mut trajectory);
        let mut summary = Summary::of(&trajectory, previous.seq);
        summary.tokens = previous.tokens;
        let mut batch = sled::Batch::default();
        self.stage(&mut batch, &trajectory, Some(&previous), &summary, false)?;
        self.db.apply_batch(batch)?;
        self.db.flush()?;
        Ok(trajectory)
    }

    /// Adds a label to a step; a confirmed label replaces a suggestion of the same kind on
    /// the same step. Durable when it returns.
    pub fn add_label(
        &self,
        id: TrajectoryId,
        label: crate::trajectory::Label,
    ) -> StoreResult<Trajectory> {
        let steps = self
            .get_without_trace(id)?
            .ok_or_else(|| StoreError::NotFound(id.to_string()))?
            .steps()
            .len();
        if label.step as usize >= steps.max(1) {
            return Err(StoreError::Invalid(format!(
                "trajectory {id} has {steps} steps; step {} does not exist",
                label.step + 1
            )));
        }
        self.update_trajectory(id, |trajectory| {
            trajectory.labels.retain(|existing| {
                !(existing.step == label.step
                    && existing.kind == label.kind
                    && (existing.status == LabelStatus::Suggested
                        || label.status == LabelStatus::Confirmed))
            });
            trajectory.labels.push(label);
        })
    }

    /// Removes the labels of a kind (every kind when `None`) from a step.
    pub fn remove_labels(
        &self,
        id: TrajectoryId,
        step: u32,
        kind: Option<ErrorKind>,
    ) -> StoreResult<Trajectory> {
        self.update_trajectory(id, |trajectory| {
            trajectory.labels.retain(|label| {
                !(label.step == step && kind.is_none_or(|kind| label.kind == kind))
            });
        })
    }

    /// The stored summary of a trajectory.
    pub fn summary_of(&self, id: TrajectoryId) -> StoreResult<Option<Summary>> {
        let Some(seq) = self.db.get(keys::by_id(keys::SEQUENCE, id))? else {
            return Ok(None);
        };
        let seq = keys::trailing_seq(&seq).ok_or_else(|| StoreError::Corrupt {
            what: format!("sequence of {id}"),
            reason: "not 8 bytes".into(),
        })?;
        self.summary_at(seq)
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

    /// Adds to `batch` everything that stores `trajectory` under `summary`, after removing the
    /// index entries of its `previous` summary.
    fn stage(
        &self,
        batch: &mut sled::Batch,
        trajectory: &Trajectory,
        previous: Option<&Summary>,
        summary: &Summary,
        with_trace: bool,
    ) -> StoreResult<()> {
        let id = trajectory.id;
        let record = if trajectory.token_trace.is_some() {
            let mut copy = trajectory.clone();
            copy.token_trace = None;
            serde_json::to_vec(&copy)
        } else {
            serde_json::to_vec(trajectory)
        }
        .map_err(|error| StoreError::Invalid(format!("trajectory {id}: {error}")))?;
        if let Some(previous) = previous {
            for key in index_keys(previous) {
                batch.remove(key);
            }
        }
        batch.insert(&keys::by_id(keys::TRAJECTORY, id), record);
        if with_trace {
            match &trajectory.token_trace {
                Some(trace) => {
                    batch.insert(&keys::by_id(keys::TRACE, id), trace_codec::encode(trace))
                }
                None => batch.remove(&keys::by_id(keys::TRACE, id)),
            }
        }
        batch.insert(&keys::by_id(keys::SEQUENCE, id), &summary.seq.to_be_bytes());
        batch.insert(&keys::summary_key(summary.seq), summary.to_bytes());
        for key in index_keys(summary) {
            batch.insert(key, &[]);
        }
        Ok(())
    }

    /// Removes trajectories and everything indexed about them; returns how many existed.
    pub fn delete_trajectories(&self, ids: &[TrajectoryId]) -> StoreResult<usize> {
        let _guard = self.write_guard();
        let mut removed = 0;
        for chunk in ids.chunks(1000) {
            let mut batch = sled::Batch::default();
            for &id in chunk {
                let Some(summary) = self.summary_of(id)? else {
                    continue;
                };
                for key in index_keys(&summary) {
                    batch.remove(key);
                }
                batch.remove(&keys::summary_key(summary.seq));
                for prefix in [keys::TRAJECTORY, keys::TRACE, keys::SEQUENCE] {
                    batch.remove(&keys::by_id(prefix, id));
                }
                removed += 1;
            }
            self.db.apply_batch(batch)?;
        }
        self.db.flush()?;
        Ok(removed)
    }
}
