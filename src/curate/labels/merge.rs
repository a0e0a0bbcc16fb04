//! Merging a teammate's labels into a store, per author: a label is keyed by trajectory,
//! step, kind and author (`store::LabelEdit`), so a teammate's label is added beside ours,
//! never in place of it (a confirmed one replaces the rules' suggestion of its kind, as a
//! label typed in the TUI does). One equal in status and note to the stored label of its key
//! is skipped; one that differs (the same author's label edited since) is a conflict, listed,
//! and resolved only when asked: `Prefer::Theirs` takes theirs, `Prefer::Ours` keeps ours.
//! How far two authors agree is the analysis's business, not the merge's.

use super::LabelRecord;
use crate::store::{Store, add_label, same_labels};
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

/// Two versions of one author's label of a kind on a step.
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
    let same_key =
        |a: &Label, b: &Label| a.step == b.step && a.kind == b.kind && a.author == b.author;
    let mut result = ours.to_vec();
    let mut seen: Vec<&Label> = Vec::new();
    for label in theirs {
        if seen.iter().any(|earlier| same_key(earlier, label)) {
            continue;
        }
        seen.push(label);
        let Some(stored) = ours.iter().find(|stored| same_key(stored, label)) else {
            add_label(&mut result, label.clone());
            report.added += 1;
            continue;
        };
        if same_label(stored, label) {
            report.identical += 1;
            continue;
        }
        let resolution = match prefer {
            None => "unresolved",
            Some(Prefer::Ours) => "kept ours",
            Some(Prefer::Theirs) => "took theirs",
        };
        if prefer == Some(Prefer::Theirs) {
            result.retain(|kept| !same_key(kept, label));
            result.push(label.clone());
            report.added += 1;
        }
        report.conflicts.push(Conflict {
            trajectory: id,
            step: label.step,
            ours: vec![LabelRecord::of(id, stored)],
            theirs: vec![LabelRecord::of(id, label)],
            resolution,
        });
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
