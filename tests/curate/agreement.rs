//! Agreement on the blind hand-labelled set: a second author who drops every calculation
//! label agrees by chance only on calculation (κ 0) and fully elsewhere; the disagreements
//! are exactly the steps that lost a label; the rules stand as an author of their own.

use super::precision::blind_set;
use rollscope::curate::agreement::{RULES_AUTHOR, Ratings};
use rollscope::trajectory::{ErrorKind, LabelStatus};
use std::collections::BTreeSet;

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
