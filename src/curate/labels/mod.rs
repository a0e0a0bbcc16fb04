//! Labels that travel: written as JSONL (`{trajectory, step, kind, status, note, author,
//! time}` per line) and merged into another session's store without overwriting anything
//! silently.

mod kinds;
mod merge;

pub use kinds::{LabelKinds, SessionLabelKind};
pub use merge::{Conflict, MergeReport, Prefer, merge_labels, plan_merge};

use crate::store::{Filter, Query, Store, StoreResult};
use crate::trajectory::{ErrorKind, Label, LabelStatus, TrajectoryId};
use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::Path;

/// One label, with the trajectory it belongs to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelRecord {
    /// The trajectory.
    pub trajectory: TrajectoryId,
    /// The step, 0-based.
    pub step: u32,
    /// The kind of error.
    pub kind: ErrorKind,
    /// Suggested or confirmed.
    pub status: LabelStatus,
    /// The note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Who set it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// When, in milliseconds since the Unix epoch.
    pub time: i64,
}

impl LabelRecord {
    /// A label of a trajectory as a record.
    pub fn of(trajectory: TrajectoryId, label: &Label) -> Self {
        Self {
            trajectory,
            step: label.step,
            kind: label.kind,
            status: label.status,
            note: label.note.clone(),
            author: label.author.clone(),
            time: label.time,
        }
    }

    /// The label it carries.
    pub fn label(&self) -> Label {
        Label {
            step: self.step,
            kind: self.kind,
            status: self.status,
            note: self.note.clone(),
            author: self.author.clone(),
            time: self.time,
        }
    }
}

/// The labels of the trajectories a filter selects (only those with labels are read), in
/// stored order.
pub fn collect_labels(store: &Store, filter: &Filter) -> StoreResult<Vec<LabelRecord>> {
    let labelled: Vec<TrajectoryId> = store
        .query(&Query {
            filter: filter.clone(),
            ..Query::default()
        })?
        .into_iter()
        .filter(|summary| summary.confirmed | summary.suggested != 0)
        .map(|summary| summary.id)
        .collect();
    let per_trajectory = super::records::map_records(store, &labelled, false, |trajectory| {
        trajectory
            .labels
            .iter()
            .map(|label| LabelRecord::of(trajectory.id, label))
            .collect::<Vec<_>>()
    })?;
    Ok(per_trajectory.into_iter().flatten().collect())
}

/// Writes label records as JSONL.
pub fn write_labels(records: &[LabelRecord], out: &mut dyn Write) -> anyhow::Result<()> {
    for record in records {
        serde_json::to_writer(&mut *out, record)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// Reads a label file; a bad line is an error naming the file and the line.
pub fn read_labels(path: &Path) -> anyhow::Result<Vec<LabelRecord>> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot read the label file {}", path.display()))?;
    let mut records = Vec::new();
    for (index, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line =
            line.with_context(|| format!("{}:{}: cannot read", path.display(), index + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        let record: LabelRecord = serde_json::from_str(&line).with_context(|| {
            format!(
                "{}:{}: not a label record {{trajectory, step, kind, status, note, author, time}}",
                path.display(),
                index + 1
            )
        })?;
        records.push(record);
    }
    Ok(records)
}
