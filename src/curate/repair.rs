//! Labels that repair: a labelled failure is resampled from just before its first wrong step
//! (its correct prefix kept), and the continuations the verifier passes become training data
//! beside best-of-N's successes. This module decides which failures to repair and from which
//! turn, and records what a repair made; the resampling is the fork machinery's
//! (`run::repair`).

pub use crate::trajectory::RepairScope;
use crate::trajectory::{ErrorKind, Label, LabelStatus, Trajectory, TrajectoryId};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Where a label came from: a person's label wins over a suggestion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LabelSource {
    /// Set or accepted by a person (a confirmed label).
    Hand,
    /// Suggested by a diagnosis, not confirmed.
    Suggested,
}

impl LabelSource {
    /// The source of a label.
    pub fn of(label: &Label) -> Self {
        match label.status {
            LabelStatus::Confirmed => Self::Hand,
            LabelStatus::Suggested => Self::Suggested,
        }
    }
}

/// A labelled failure to resample, and from where.
#[derive(Clone, Debug, PartialEq)]
pub struct RepairTarget {
    /// The failed trajectory.
    pub failure: TrajectoryId,
    /// Its task.
    pub task_id: String,
    /// The turn (1-based) its first wrong step is in: continuations start there, the turns
    /// before it kept.
    pub turn: usize,
    /// The label that places the error.
    pub label: Label,
}

/// One repaired sample: a passing continuation of a labelled failure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Repair {
    /// The continuation kept as training data.
    pub sample: TrajectoryId,
    /// The failure it continues.
    pub failure: TrajectoryId,
    /// Their task.
    pub task_id: String,
    /// The turn (1-based) it was resampled from.
    pub turn: usize,
    /// The kind of the label that placed the error.
    pub kind: ErrorKind,
    /// The labelled step, 0-based.
    pub step: u32,
    /// Whether a person or a diagnosis set that label.
    pub source: LabelSource,
    /// Who set it: the annotator or the suggesting rule.
    pub author: Option<String>,
}

impl Repair {
    /// The record of `sample`, a passing continuation of `target`.
    pub fn of(target: &RepairTarget, sample: TrajectoryId) -> Self {
        Self {
            sample,
            failure: target.failure,
            task_id: target.task_id.clone(),
            turn: target.turn,
            kind: target.label.kind,
            step: target.label.step,
            source: LabelSource::of(&target.label),
            author: target.label.author.clone(),
        }
    }
}

/// The label that places a failure's first error: a person's labels when it has any, else
/// the suggestions; of those, the earliest step (the first of equals).
pub fn first_error_label(labels: &[Label]) -> Option<&Label> {
    let hand = labels
        .iter()
        .any(|label| label.status == LabelStatus::Confirmed);
    labels
        .iter()
        .filter(|label| !hand || label.status == LabelStatus::Confirmed)
        .min_by_key(|label| label.step)
}

/// The failure of each task worth resampling, tasks in id order: of a task's failed,
/// labelled trajectories, the one whose first error comes latest (the longest correct prefix
/// kept), a person's label before a suggestion's at equal turns. Tasks in `skip` (solved by
/// the selection, when the scope is `Unsolved`) are left out.
pub fn repair_targets<'a>(
    trajectories: impl IntoIterator<Item = &'a Trajectory>,
    skip: &BTreeSet<String>,
) -> Vec<RepairTarget> {
    let mut best: BTreeMap<String, RepairTarget> = BTreeMap::new();
    for trajectory in trajectories {
        let Some(task_id) = trajectory.task_id.clone() else {
            continue;
        };
        if trajectory.passed() != Some(false) || skip.contains(&task_id) {
            continue;
        }
        let Some(label) = first_error_label(&trajectory.labels) else {
            continue;
        };
        let Some(turn) = trajectory.turn_of_step(label.step as usize) else {
            continue;
        };
        let target = RepairTarget {
            failure: trajectory.id,
            task_id: task_id.clone(),
            turn,
            label: label.clone(),
        };
        let better = |old: &RepairTarget| {
            (target.turn, LabelSource::of(&old.label)) > (old.turn, LabelSource::of(label))
        };
        if best.get(&task_id).is_none_or(better) {
            best.insert(task_id, target);
        }
    }
    best.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::{Message, Reward};

    fn label(step: u32, kind: ErrorKind, status: LabelStatus) -> Label {
        Label {
            step,
            kind,
            status,
            note: None,
            author: Some("someone".into()),
            time: 0,
        }
    }

    fn failure(task: &str, sample: u32, turns: usize, labels: Vec<Label>) -> Trajectory {
        let mut messages = vec![Message::user("question")];
        for turn in 0..turns {
            messages.push(Message::assistant(format!("turn {turn}")));
            messages.push(Message::tool("result"));
        }
        let mut trajectory = Trajectory::new(TrajectoryId::derived(task, 0, 0, sample), messages);
        trajectory.task_id = Some(task.into());
        trajectory.reward = Some(Reward::scalar(0.0));
        trajectory.labels = labels;
        trajectory
    }

    #[test]
    fn a_persons_label_places_the_error_before_an_earlier_suggestion() {
        let labels = vec![
            label(0, ErrorKind::Format, LabelStatus::Suggested),
            label(2, ErrorKind::Calculation, LabelStatus::Confirmed),
            label(1, ErrorKind::Reasoning, LabelStatus::Confirmed),
        ];
        let first = first_error_label(&labels).unwrap();
        assert_eq!((first.step, first.kind), (1, ErrorKind::Reasoning));
        let suggested = [label(3, ErrorKind::Format, LabelStatus::Suggested)];
        assert_eq!(first_error_label(&suggested).unwrap().step, 3);
        assert!(first_error_label(&[]).is_none());
    }

    #[test]
    fn each_task_repairs_its_failure_with_the_longest_correct_prefix() {
        let early = failure(
            "t1",
            1,
            3,
            vec![label(0, ErrorKind::Calculation, LabelStatus::Suggested)],
        );
        let late = failure(
            "t1",
            2,
            3,
            vec![label(2, ErrorKind::Calculation, LabelStatus::Suggested)],
        );
        let unlabelled = failure("t2", 3, 2, Vec::new());
        let mut passed = failure(
            "t3",
            4,
            2,
            vec![label(1, ErrorKind::Format, LabelStatus::Confirmed)],
        );
        passed.reward = Some(Reward::scalar(1.0));
        let solved = failure(
            "t4",
            5,
            2,
            vec![label(1, ErrorKind::Format, LabelStatus::Confirmed)],
        );
        let skip = BTreeSet::from(["t4".to_string()]);
        let targets = repair_targets([&early, &late, &unlabelled, &passed, &solved], &skip);
        assert_eq!(targets.len(), 1);
        assert_eq!(targets[0].failure, late.id);
        assert_eq!(targets[0].turn, 3);
        let repair = Repair::of(&targets[0], early.id);
        assert_eq!(repair.source, LabelSource::Suggested);
        assert_eq!((repair.step, repair.turn), (2, 3));
    }

    #[test]
    fn a_label_on_a_step_the_trajectory_lacks_repairs_nothing() {
        let stray = failure(
            "t1",
            6,
            1,
            vec![label(5, ErrorKind::Reasoning, LabelStatus::Confirmed)],
        );
        assert!(repair_targets([&stray], &BTreeSet::new()).is_empty());
    }
}
