//! Merging a teammate's labels into a store. Per trajectory and step: a label equal in kind,
//! status and note to one of ours is skipped; a label of a kind we did not put there is added
//! when we have no label there that they lack; anything else is a conflict (the same kind
//! with another status or note, or another kind where we disagree), listed, and resolved only
//! when asked: `Prefer::Theirs` takes their labels for that step, `Prefer::Ours` keeps ours.

use super::LabelRecord;
use crate::store::{Store, same_labels};
use crate::trajectory::{Label, TrajectoryId};
use serde::Serialize;
use std::collections::BTreeMap;

/// Which side wins a conflict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Prefer {
    /// Keep our labels.
    Ours,
    /// Take theirs.
    Theirs,
}

/// Two sets of labels that disagree on one step.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Conflict {
    /// The trajectory.
    pub trajectory: TrajectoryId,
    /// The step, 0-based.
    pub step: u32,
    /// Our labels on the step.
    pub ours: Vec<LabelRecord>,
    /// Their labels on the step that disagree with ours.
    pub theirs: Vec<LabelRecord>,
    /// How it was resolved: `unresolved`, `kept ours`, `took theirs`.
    pub resolution: &'static str,
}

/// What a merge did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MergeReport {
    /// Labels read.
    pub read: usize,
    /// Labels added.
    pub added: usize,
    /// Labels we already had.
    pub identical: usize,
    /// Steps where the two sides disagree.
    pub conflicts: Vec<Conflict>,
    /// Trajectories whose labels changed.
    pub changed: usize,
    /// Trajectories this store does not hold.
    pub missing: Vec<TrajectoryId>,
    /// Labels on steps the trajectory does not have.
    pub bad_steps: Vec<LabelRecord>,
}

/// The labels of one trajectory after merging `theirs` into `ours`; tallies into `report`.
pub fn plan_merge(
    id: TrajectoryId,
    ours: &[Label],
    theirs: &[Label],
    prefer: Option<Prefer>,
    report: &mut MergeReport,
) -> Vec<Label> {
    let mut steps: BTreeMap<u32, Vec<&Label>> = BTreeMap::new();
    for label in theirs {
        let entry = steps.entry(label.step).or_default();
        if !entry.iter().any(|seen| same_label(seen, label)) {
            entry.push(label);
        }
    }
    let mut result: Vec<Label> = ours
        .iter()
        .filter(|label| !steps.contains_key(&label.step))
        .cloned()
        .collect();
    for (step, their_labels) in steps {
        let our_labels: Vec<&Label> = ours.iter().filter(|label| label.step == step).collect();
        let we_lack_nothing = our_labels
            .iter()
            .all(|ours| their_labels.iter().any(|theirs| theirs.kind == ours.kind));
        let mut added = Vec::new();
        let mut disputed = Vec::new();
        let mut identical = 0;
        for &label in &their_labels {
            match our_labels.iter().find(|ours| ours.kind == label.kind) {
                Some(ours) if same_label(ours, label) => identical += 1,
                Some(_) => disputed.push(label),
                None if we_lack_nothing => added.push(label),
                None => disputed.push(label),
            }
        }
        report.identical += identical;
        let resolution = match (disputed.is_empty(), prefer) {
            (true, _) => None,
            (false, None) => Some("unresolved"),
            (false, Some(Prefer::Ours)) => Some("kept ours"),
            (false, Some(Prefer::Theirs)) => Some("took theirs"),
        };
        if resolution == Some("took theirs") {
            result.extend(their_labels.iter().map(|label| (*label).clone()));
            report.added += their_labels.len() - identical;
        } else {
            result.extend(our_labels.iter().map(|label| (*label).clone()));
            result.extend(added.iter().map(|label| (*label).clone()));
            report.added += added.len();
        }
        if let Some(resolution) = resolution {
            report.conflicts.push(Conflict {
                trajectory: id,
                step,
                ours: our_labels
                    .iter()
                    .map(|label| LabelRecord::of(id, label))
                    .collect(),
                theirs: disputed
                    .iter()
                    .map(|label| LabelRecord::of(id, label))
                    .collect(),
                resolution,
            });
        }
    }
    result.sort_by_key(|label| label.step);
    result
}

/// Equal for merging: step, kind, status and note (author and time may differ).
fn same_label(a: &Label, b: &Label) -> bool {
    a.step == b.step && a.kind == b.kind && a.status == b.status && a.note == b.note
}

/// Merges label records into the store (nothing is written with `dry_run`).
pub fn merge_labels(
    store: &Store,
    records: &[LabelRecord],
    prefer: Option<Prefer>,
    dry_run: bool,
) -> anyhow::Result<MergeReport> {
    let mut report = MergeReport {
        read: records.len(),
        ..MergeReport::default()
    };
    let mut by_trajectory: BTreeMap<TrajectoryId, Vec<&LabelRecord>> = BTreeMap::new();
    for record in records {
        by_trajectory
            .entry(record.trajectory)
            .or_default()
            .push(record);
    }
    for (id, records) in by_trajectory {
        let Some(trajectory) = store.get_without_trace(id)? else {
            report.missing.push(id);
            continue;
        };
        let steps = trajectory.steps().len().max(1) as u32;
        let (good, bad): (Vec<&LabelRecord>, Vec<&LabelRecord>) =
            records.into_iter().partition(|record| record.step < steps);
        report.bad_steps.extend(bad.into_iter().cloned());
        let theirs: Vec<Label> = good.iter().map(|record| record.label()).collect();
        let mut tally = MergeReport::default();
        let mut plan = |ours: &[Label]| {
            tally = MergeReport::default();
            plan_merge(id, ours, &theirs, prefer, &mut tally)
        };
        let merged = plan(&trajectory.labels);
        if !same_labels(&merged, &trajectory.labels) {
            report.changed += 1;
            if !dry_run {
                store.rewrite_labels(id, &mut plan)?;
            }
        }
        report.added += tally.added;
        report.identical += tally.identical;
        report.conflicts.append(&mut tally.conflicts);
    }
    Ok(report)
}
