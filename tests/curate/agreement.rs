//! Agreement on the blind hand-labelled set: a second author who drops every calculation
//! label agrees by chance only on calculation (κ 0) and fully elsewhere; the disagreements
//! are exactly the steps that lost a label; the rules stand as an author of their own; the
//! second blind pass by another annotator differs from the first on the steps where the two
//! label files do, no others.

use super::common::data;
use super::precision::blind_set;
use rollscope::curate::agreement::{RULES_AUTHOR, Ratings};
use rollscope::trajectory::{ErrorKind, LabelStatus, TrajectoryId};
use std::collections::{BTreeMap, BTreeSet};

#[test]
fn a_second_author_without_calculation_labels_agrees_on_everything_else() {
    let (mut trajectories, tasks) = blind_set();
    let first = trajectories[0].labels[0].author.clone().unwrap();
    let mut calculation_steps = BTreeSet::new();
    for trajectory in &mut trajectories {
        let mut second: Vec<_> = trajectory.labels.clone();
        for label in &mut second {
            label.author = Some("second".into());
        }
        for label in &trajectory.labels {
            if label.kind == ErrorKind::Calculation {
                calculation_steps.insert((trajectory.id, label.step));
            }
        }
        second.retain(|label| label.kind != ErrorKind::Calculation);
        if second.is_empty() {
            // Reviewed and found nothing: one confirmed label elsewhere would lie, so the
            // trajectory counts as the first author's only.
            continue;
        }
        trajectory.labels.extend(second);
    }
    let ratings = Ratings::of(
        trajectories
            .iter()
            .map(|t| (t, t.task_id.as_ref().and_then(|id| tasks.get(id)))),
        false,
    );
    let report = ratings.report(&[]);
    assert_eq!(report.authors, vec![first.clone(), "second".to_string()]);
    let row = |kind: &str| report.kinds.iter().find(|row| row.kind == kind).unwrap();
    let calculation = row("calculation");
    assert_eq!(calculation.marked["second"], 0);
    assert_eq!(
        calculation.kappa,
        Some(0.0),
        "one author never marks it: chance agreement only"
    );
    for kind in ["reasoning", "understanding", "format"] {
        let figures = row(kind);
        assert_eq!(figures.marked[&first], figures.marked["second"], "{kind}");
        if figures.marked["second"] > 0 {
            assert_eq!(figures.kappa, Some(1.0), "{kind}");
            assert!((figures.alpha.unwrap() - 1.0).abs() < 1e-12, "{kind}");
        }
    }
    let shared: BTreeSet<_> = trajectories
        .iter()
        .filter(|t| {
            t.labels
                .iter()
                .any(|l| l.author.as_deref() == Some("second"))
        })
        .map(|t| t.id)
        .collect();
    let expected: BTreeSet<_> = calculation_steps
        .iter()
        .filter(|(id, _)| shared.contains(id))
        .copied()
        .collect();
    let found: BTreeSet<_> = ratings
        .disagreements()
        .iter()
        .map(|d| (d.trajectory, d.step))
        .collect();
    assert_eq!(
        found, expected,
        "the steps that lost their calculation label, no others"
    );
    assert!(!expected.is_empty());
}

#[test]
fn the_rules_are_an_author_on_every_reviewed_trajectory() {
    let (trajectories, tasks) = blind_set();
    let ratings = Ratings::of(
        trajectories
            .iter()
            .map(|t| (t, t.task_id.as_ref().and_then(|id| tasks.get(id)))),
        true,
    );
    let report = ratings.report(&[]);
    assert!(report.authors.contains(&RULES_AUTHOR.to_string()));
    let reviewed = trajectories
        .iter()
        .filter(|t| t.labels.iter().any(|l| l.status == LabelStatus::Confirmed))
        .count();
    assert_eq!(
        report.trajectories, reviewed,
        "the rules review every hand-labelled failure"
    );
    let steps: usize = trajectories.iter().map(|t| t.steps().len().max(1)).sum();
    assert_eq!(report.steps, steps);
    for row in &report.kinds {
        assert!(
            row.alpha.is_none_or(|alpha| (-1.0..=1.0).contains(&alpha)),
            "{row:?}"
        );
    }
}

#[test]
fn the_second_blind_pass_differs_from_the_first_exactly_where_the_files_do() {
    let (mut trajectories, tasks) = blind_set();
    let first = trajectories[0].labels[0].author.clone().unwrap();
    let second =
        rollscope::curate::labels::read_labels(&data("blind/labels-second.jsonl")).unwrap();
    let second_author = second[0].author.clone().unwrap();
    for record in &second {
        let trajectory = trajectories
            .iter_mut()
            .find(|trajectory| trajectory.id == record.trajectory)
            .expect("the second pass labels the same failures");
        trajectory.labels.push(record.label());
    }
    // Each author's kinds per step, read straight from the labels.
    let mut marks: BTreeMap<(TrajectoryId, u32), BTreeMap<&str, BTreeSet<ErrorKind>>> =
        BTreeMap::new();
    for trajectory in &trajectories {
        for step in 0..trajectory.steps().len().max(1) as u32 {
            let at = marks.entry((trajectory.id, step)).or_default();
            at.insert(&first, BTreeSet::new());
            at.insert(&second_author, BTreeSet::new());
        }
        for label in &trajectory.labels {
            let author = label.author.as_deref().unwrap();
            let at = marks.get_mut(&(trajectory.id, label.step)).unwrap();
            at.get_mut(author).unwrap().insert(label.kind);
        }
    }
    let differing: BTreeSet<(TrajectoryId, u32)> = marks
        .iter()
        .filter(|(_, by)| by[first.as_str()] != by[second_author.as_str()])
        .map(|(at, _)| *at)
        .collect();
    let ratings = Ratings::of(
        trajectories
            .iter()
            .map(|t| (t, t.task_id.as_ref().and_then(|id| tasks.get(id)))),
        false,
    );
    let found: BTreeSet<_> = ratings
        .disagreements()
        .iter()
        .map(|d| (d.trajectory, d.step))
        .collect();
    assert_eq!(found, differing);
    assert!(!differing.is_empty() && differing.len() < marks.len() / 4);
    let report = ratings.report(&[]);
    assert_eq!(report.steps, marks.len());
    for row in report.kinds.iter().filter(|row| row.kind != "any error") {
        let kind: ErrorKind = row.kind.parse().unwrap();
        let steps_of = |author: &str| -> BTreeSet<_> {
            marks
                .iter()
                .filter(|(_, by)| by[author].contains(&kind))
                .map(|(at, _)| *at)
                .collect()
        };
        let (a, b) = (steps_of(&first), steps_of(&second_author));
        assert_eq!(row.marked[&first], a.len(), "{kind}");
        assert_eq!(row.marked[&second_author], b.len(), "{kind}");
        let kappa = row.kappa.unwrap();
        if a == b {
            assert_eq!(kappa, 1.0, "{kind}: the same steps");
        } else {
            assert!(kappa < 1.0 && kappa > 0.0, "{kind}: {kappa}");
        }
    }
}
