//! How often the suggestions agree with what people confirmed: per kind, the share of
//! suggestions whose trajectory carries a confirmed label of that kind (and on the same step),
//! and the share of confirmed labels a suggestion of their kind found.

use super::suggest;
use crate::trajectory::{ErrorKind, Label, LabelStatus, Task, Trajectory};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

/// Agreement for one kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct KindPrecision {
    /// Suggestions of the kind.
    pub suggested: usize,
    /// Of which the trajectory has a confirmed label of the kind.
    pub correct: usize,
    /// Of which the confirmed label is on the same step.
    pub correct_step: usize,
    /// Confirmed labels of the kind.
    pub confirmed: usize,
    /// Of which the trajectory got a suggestion of the kind.
    pub found: usize,
}

impl KindPrecision {
    /// Correct suggestions over suggestions (`None` when nothing was suggested).
    pub fn precision(&self) -> Option<f64> {
        ratio(self.correct, self.suggested)
    }

    /// Suggestions on the confirmed step over suggestions.
    pub fn step_precision(&self) -> Option<f64> {
        ratio(self.correct_step, self.suggested)
    }

    /// Confirmed labels found over confirmed labels.
    pub fn recall(&self) -> Option<f64> {
        ratio(self.found, self.confirmed)
    }

    fn add(&mut self, other: &Self) {
        self.suggested += other.suggested;
        self.correct += other.correct;
        self.correct_step += other.correct_step;
        self.confirmed += other.confirmed;
        self.found += other.found;
    }
}

fn ratio(part: usize, whole: usize) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// Agreement per kind over the trajectories people reviewed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Precision {
    /// Trajectories compared.
    pub reviewed: usize,
    /// Per built-in kind (the rules suggest no session kinds), in `ErrorKind::ALL` order.
    pub kinds: [KindPrecision; 4],
    /// Trajectories with both a confirmed error and a suggestion, whose first errors are
    /// compared.
    pub first_error_compared: usize,
    /// Of which the first suggestion is on the step of the first confirmed label.
    pub first_error_right: usize,
}

impl Precision {
    /// The figures of one kind.
    pub fn kind(&self, kind: ErrorKind) -> &KindPrecision {
        &self.kinds[kind.index() as usize]
    }

    /// First suggested errors on the first confirmed error's step, over the trajectories
    /// that have both (`None` when none has).
    pub fn first_error_share(&self) -> Option<f64> {
        ratio(self.first_error_right, self.first_error_compared)
    }

    /// Adds another tally to this one.
    pub fn add(&mut self, other: &Self) {
        self.reviewed += other.reviewed;
        self.first_error_compared += other.first_error_compared;
        self.first_error_right += other.first_error_right;
        for (mine, theirs) in self.kinds.iter_mut().zip(&other.kinds) {
            mine.add(theirs);
        }
    }

    /// Compares the suggestions for one trajectory with its confirmed labels (its stored
    /// suggestions are not used: the rules run afresh).
    pub fn of_trajectory(trajectory: &Trajectory, task: Option<&Task>) -> Self {
        let confirmed: Vec<&Label> = trajectory
            .labels
            .iter()
            .filter(|label| label.status == LabelStatus::Confirmed)
            .collect();
        Self::compare(&suggest(trajectory, task, 0), &confirmed)
    }

    /// Compares suggestions with confirmed labels of one trajectory.
    pub fn compare(suggestions: &[Label], confirmed: &[&Label]) -> Self {
        let mut tally = Self {
            reviewed: 1,
            ..Self::default()
        };
        for suggestion in suggestions {
            let kind = &mut tally.kinds[suggestion.kind.index() as usize];
            kind.suggested += 1;
            kind.correct +=
                usize::from(confirmed.iter().any(|label| label.kind == suggestion.kind));
            kind.correct_step += usize::from(
                confirmed
                    .iter()
                    .any(|label| label.kind == suggestion.kind && label.step == suggestion.step),
            );
        }
        let first_suggested = suggestions.iter().map(|label| label.step).min();
        let first_confirmed = confirmed.iter().map(|label| label.step).min();
        if let (Some(suggested), Some(confirmed)) = (first_suggested, first_confirmed) {
            tally.first_error_compared = 1;
            tally.first_error_right = usize::from(suggested == confirmed);
        }
        for label in confirmed.iter().filter(|label| label.kind.is_builtin()) {
            let kind = &mut tally.kinds[label.kind.index() as usize];
            kind.confirmed += 1;
            kind.found += usize::from(suggestions.iter().any(|s| s.kind == label.kind));
        }
        tally
    }
}

impl Serialize for Precision {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let kinds: serde_json::Map<String, serde_json::Value> = ErrorKind::ALL
            .iter()
            .map(|&kind| {
                let figures = self.kind(kind);
                let value = serde_json::json!({
                    "suggested": figures.suggested,
                    "correct": figures.correct,
                    "correct_step": figures.correct_step,
                    "confirmed": figures.confirmed,
                    "found": figures.found,
                    "precision": figures.precision(),
                    "step_precision": figures.step_precision(),
                    "recall": figures.recall(),
                });
                (kind.as_str().to_string(), value)
            })
            .collect();
        let mut map = serializer.serialize_map(Some(4))?;
        map.serialize_entry("reviewed", &self.reviewed)?;
        map.serialize_entry("first_error_compared", &self.first_error_compared)?;
        map.serialize_entry("first_error_right", &self.first_error_right)?;
        map.serialize_entry("kinds", &kinds)?;
        map.end()
    }
}

/// Measures the rules on trajectories people reviewed: each trajectory with its task, all
/// of them counted (a trajectory without confirmed labels counts as reviewed and error-free).
pub fn measure<'a>(
    reviewed: impl IntoIterator<Item = (&'a Trajectory, Option<&'a Task>)>,
) -> Precision {
    let mut total = Precision::default();
    for (trajectory, task) in reviewed {
        total.add(&Precision::of_trajectory(trajectory, task));
    }
    total
}
