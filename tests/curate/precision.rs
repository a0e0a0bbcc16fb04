//! Precision of the suggestions: the computation on constructed labels, and the figures on
//! the hand-labelled real failures of `tests/data/curate/labelled_failures.jsonl` and on the
//! blind hand-labelled set of `tests/data/blind`.

use crate::common::data;
use rollscope::curate::suggest::precision::{Precision, measure};
use rollscope::formats::{ImportOptions, Item, import_file};
use rollscope::trajectory::{ErrorKind, Label, LabelStatus, Task, Trajectory};
use std::collections::HashMap;

fn label(step: u32, kind: ErrorKind, status: LabelStatus) -> Label {
    Label {
        step,
        kind,
        status,
        note: None,
        author: None,
        time: 0,
    }
}

#[test]
fn precision_counts_kind_and_step_agreement_and_recall() {
    use ErrorKind::*;
    use LabelStatus::*;
    let suggestions = [
        label(0, Calculation, Suggested),
        label(2, Calculation, Suggested),
        label(1, Reasoning, Suggested),
    ];
    let confirmed = [
        label(0, Calculation, Confirmed),
        label(3, Understanding, Confirmed),
    ];
    let refs: Vec<&Label> = confirmed.iter().collect();
    let tally = Precision::compare(&suggestions, &refs);
    let calculation = tally.kind(Calculation);
    assert_eq!(
        (
            calculation.suggested,
            calculation.correct,
            calculation.correct_step
        ),
        (2, 2, 1)
    );
    assert_eq!((calculation.confirmed, calculation.found), (1, 1));
    assert_eq!(calculation.precision(), Some(1.0));
    assert_eq!(calculation.step_precision(), Some(0.5));
    assert_eq!(tally.kind(Reasoning).precision(), Some(0.0));
    assert_eq!(tally.kind(Understanding).recall(), Some(0.0));
    assert_eq!(tally.kind(Format).precision(), None);
    let mut total = tally.clone();
    total.add(&tally);
    assert_eq!(total.reviewed, 2);
    assert_eq!(total.kind(Calculation).suggested, 4);
}

/// The labelled set: 7 Math-Shepherd GSM8K solutions (all wrong), the 6 PRM800K rows and 5
/// of their steps rated −1 by PRM800K's labelers, each kept on the path it ended; the
/// confirmed labels and their reasons were written by hand (see the file's README).
fn labelled_set() -> (Vec<Trajectory>, HashMap<String, Task>) {
    import_set("curate/labelled_failures.jsonl")
}

/// The trajectories and tasks of a file under tests/data, every record read.
fn import_set(path: &str) -> (Vec<Trajectory>, HashMap<String, Task>) {
    let mut trajectories = Vec::new();
    let mut tasks = HashMap::new();
    let report = import_file(&data(path), ImportOptions::default(), &mut |item| {
        match item {
            Item::Trajectory(trajectory) => trajectories.push(*trajectory),
            Item::Task(task) => {
                tasks.insert(task.id.clone(), *task);
            }
        }
        Ok(())
    })
    .unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    (trajectories, tasks)
}

#[test]
fn precision_on_hand_labelled_real_failures() {
    let (trajectories, tasks) = labelled_set();
    assert_eq!(trajectories.len(), 18);
    let labelled = trajectories.iter().filter(|t| !t.labels.is_empty()).count();
    assert_eq!(
        labelled, 13,
        "13 failures labelled, 5 correct solutions without labels"
    );
    assert!(
        trajectories
            .iter()
            .flat_map(|t| &t.labels)
            .all(|l| l.status == LabelStatus::Confirmed)
    );
    let precision = measure(trajectories.iter().map(|trajectory| {
        (
            trajectory,
            trajectory.task_id.as_ref().and_then(|id| tasks.get(id)),
        )
    }));
    println!(
        "suggested-label precision on {} hand-labelled real trajectories",
        precision.reviewed
    );
    println!(
        "{:<14} {:>9} {:>9} {:>9} {:>9} {:>7}",
        "kind", "suggested", "precision", "same step", "confirmed", "recall"
    );
    for kind in ErrorKind::ALL {
        let figures = precision.kind(kind);
        let show = |value: Option<f64>| value.map_or("–".to_string(), |v| format!("{v:.2}"));
        println!(
            "{:<14} {:>9} {:>9} {:>9} {:>9} {:>7}",
            kind.as_str(),
            figures.suggested,
            show(figures.precision()),
            show(figures.step_precision()),
            figures.confirmed,
            show(figures.recall())
        );
    }
    assert_eq!(precision.reviewed, 18);
    let figures = |kind| {
        let k = precision.kind(kind);
        (k.suggested, k.correct, k.correct_step, k.confirmed, k.found)
    };
    // Calculation: the five false annotations (20×40=8000 twice, 13×8/13=6, 10+8+4=220,
    // 2+1095=1100), each found on its step.
    assert_eq!(figures(ErrorKind::Calculation), (5, 5, 5, 5, 5));
    // Understanding: Janet's sum where the reference takes a difference (step 4, as labelled)
    // and Sue's answer that misses a leg the reference computes (right kind, a step late).
    assert_eq!(figures(ErrorKind::Understanding), (2, 2, 1, 5, 2));
    // Reasoning: the PRM800K steps rated −1 (5, on their step), Jonah's first Monte-Carlo drop
    // (right kind, a step early); the pencil equations in cents are an understanding error.
    assert_eq!(figures(ErrorKind::Reasoning), (7, 6, 5, 10, 6));
    assert_eq!(figures(ErrorKind::Format), (0, 0, 0, 0, 0));
}

/// The blind hand-labelled set (`tests/data/blind`, see its README): failures of two GRPO
/// policies and an RS-SFT one, labelled without runs, scores or suggestions.
pub fn blind_set() -> (Vec<Trajectory>, HashMap<String, Task>) {
    let (mut trajectories, tasks) = import_set("blind/trajectories.jsonl");
    let labels = rollscope::curate::labels::read_labels(&data("blind/labels.jsonl")).unwrap();
    for record in labels {
        let trajectory = trajectories
            .iter_mut()
            .find(|trajectory| trajectory.id == record.trajectory)
            .expect("every label's trajectory is in the set");
        trajectory.labels.push(record.label());
    }
    (trajectories, tasks)
}

#[test]
fn the_blind_set_is_failures_labelled_by_a_person_and_measures_the_rules() {
    let (trajectories, tasks) = blind_set();
    assert!(!trajectories.is_empty());
    for trajectory in &trajectories {
        assert_eq!(trajectory.reward.as_ref().map(|r| r.is_pass()), Some(false));
        assert!(!trajectory.labels.is_empty(), "{}", trajectory.id);
        assert!(trajectory.labels.iter().all(|label| {
            label.status == LabelStatus::Confirmed
                && label.author.as_deref() == Some("rollscope-dev")
        }));
        let task = trajectory.task_id.as_ref().and_then(|id| tasks.get(id));
        assert!(task.is_some(), "{}: its task ships too", trajectory.id);
    }
    let runs: std::collections::BTreeSet<_> =
        trajectories.iter().filter_map(|t| t.run.clone()).collect();
    assert_eq!(runs.len(), 3, "three policies' failures: {runs:?}");
    let precision = measure(trajectories.iter().map(|trajectory| {
        (
            trajectory,
            trajectory.task_id.as_ref().and_then(|id| tasks.get(id)),
        )
    }));
    assert_eq!(precision.reviewed, trajectories.len());
    let confirmed: usize = trajectories.iter().map(|t| t.labels.len()).sum();
    let counted: usize = ErrorKind::ALL
        .iter()
        .map(|kind| precision.kind(*kind).confirmed)
        .sum();
    assert_eq!(counted, confirmed);
    // The loop preset trusts suggested format labels: on this set every one is right.
    let format = precision.kind(ErrorKind::Format);
    assert!(format.suggested > 0);
    assert_eq!(format.precision(), Some(1.0));
    // Every task here carries its worked solution, so each failure is diagnosed against it:
    // the goals of the suggestions that know the task.
    for kind in ErrorKind::ALL {
        let figures = precision.kind(kind);
        let (precision, recall) = (figures.precision(), figures.recall());
        assert!(precision >= Some(0.9), "{kind:?}: precision {precision:?}");
        assert!(recall >= Some(0.8), "{kind:?}: recall {recall:?}");
    }
    assert_eq!(precision.first_error_compared, trajectories.len());
    assert!(
        precision.first_error_share() >= Some(0.9),
        "the first error's step: {} of {}",
        precision.first_error_right,
        precision.first_error_compared
    );
}
