//! Suggestions written into the store: the rules run on a set of trajectories and each one's
//! suggested labels replace the suggester's earlier ones (people's labels stay).

use super::{merge_suggestions, suggest};
use crate::curate::{TaskIndex, map_records};
use crate::store::Store;
use crate::store::same_labels;
use crate::trajectory::{ErrorKind, TrajectoryId, now_millis};
use serde::Serialize;

/// What a pass of the suggestion rules found and changed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SuggestionCounts {
    /// Trajectories read.
    pub read: usize,
    /// Suggested labels in all.
    pub suggestions: usize,
    /// Trajectories with at least one suggestion.
    pub trajectories: usize,
    /// Suggestions per kind, in `ErrorKind::ALL` order.
    pub per_kind: [usize; 4],
    /// Trajectories whose labels changed (or would, in a dry run).
    pub changed: usize,
}

impl SuggestionCounts {
    /// Suggestions of one kind.
    pub fn of(&self, kind: ErrorKind) -> usize {
        self.per_kind[kind.index() as usize]
    }

    /// The counts per kind in words: `calculation 0, reasoning 118, understanding 22, format 35`.
    pub fn per_kind_text(&self) -> String {
        ErrorKind::ALL
            .iter()
            .map(|kind| format!("{kind} {}", self.of(*kind)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Runs the suggestion rules on trajectories `ids` and, unless `dry_run`, stores each one's
/// suggestions in place of the suggester's earlier ones.
pub fn write_suggestions(
    store: &Store,
    ids: &[TrajectoryId],
    dry_run: bool,
) -> anyhow::Result<SuggestionCounts> {
    let tasks = TaskIndex::load(store)?;
    let time = now_millis();
    let planned = map_records(store, ids, false, |trajectory| {
        let suggestions = suggest(&trajectory, tasks.of(&trajectory), time);
        let merged = merge_suggestions(&trajectory.labels, suggestions.clone());
        let changed = !same_labels(&merged, &trajectory.labels);
        (trajectory.id, suggestions, changed)
    })?;
    let mut counts = SuggestionCounts {
        read: ids.len(),
        ..SuggestionCounts::default()
    };
    for (id, suggestions, changed) in planned {
        counts.trajectories += usize::from(!suggestions.is_empty());
        counts.suggestions += suggestions.len();
        for label in &suggestions {
            counts.per_kind[label.kind.index() as usize] += 1;
        }
        if changed {
            counts.changed += 1;
            if !dry_run {
                store
                    .rewrite_labels(id, |labels| merge_suggestions(labels, suggestions.clone()))?;
            }
        }
    }
    Ok(counts)
}
