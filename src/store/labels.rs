//! The label model: a label is keyed by trajectory, step, kind and author, so two people
//! labelling the same step both keep theirs; every change to a trajectory's labels is one
//! `LabelEdit`, applied under the store's write lock.

use super::{StoreError, StoreResult};
use crate::trajectory::{ErrorKind, Label, LabelStatus};
use serde::{Deserialize, Serialize};

/// A change to one trajectory's labels.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum LabelEdit {
    /// Adds a label in place of its author's label of the same step and kind; a confirmed
    /// label also replaces the suggestions of its kind on its step.
    Add(Label),
    /// Removes an author's labels of a kind (every kind when `None`) from a step, and the
    /// suggestions there: each person acts on their own labels only.
    Remove {
        /// The step, 0-based.
        step: u32,
        /// The kind, or all.
        kind: Option<ErrorKind>,
        /// Whose labels.
        author: Option<String>,
    },
    /// Replaces what one author's keys act on, their own labels and the suggestions (undo,
    /// notes): other people's confirmed labels stay.
    ReplaceOwn {
        /// Whose labels.
        author: Option<String>,
        /// Their labels and the suggestions from now on (confirmed ones are stamped with
        /// `author`).
        labels: Vec<Label>,
    },
    /// Replaces the whole list, only if it still holds `expected` (in any order): a merge or
    /// a suggestion pass computed from what it read; `StoreError::Conflict` when another
    /// writer came first, so the caller reads again.
    Swap {
        /// The labels the change was computed from.
        expected: Vec<Label>,
        /// The labels from now on.
        labels: Vec<Label>,
    },
}

impl LabelEdit {
    /// Applies the change to a trajectory's labels.
    pub fn apply(self, labels: &mut Vec<Label>) -> StoreResult<()> {
        match self {
            Self::Add(label) => add_label(labels, label),
            Self::Remove { step, kind, author } => labels.retain(|label| {
                let here = label.step == step && kind.is_none_or(|kind| label.kind == kind);
                !(here && (label.author == author || label.status == LabelStatus::Suggested))
            }),
            Self::ReplaceOwn {
                author,
                labels: theirs,
            } => {
                labels.retain(|label| !is_own(label, author.as_deref()));
                labels.extend(theirs.into_iter().map(|label| match label.status {
                    LabelStatus::Suggested => label,
                    LabelStatus::Confirmed => Label {
                        author: author.clone(),
                        ..label
                    },
                }));
            }
            Self::Swap {
                expected,
                labels: next,
            } => {
                if !same_labels(labels, &expected) {
                    return Err(StoreError::Conflict(
                        "the labels changed since they were read".into(),
                    ));
                }
                *labels = next;
            }
        }
        Ok(())
    }
}

/// Adds a label in place of its author's label of the same step and kind; a confirmed label
/// also replaces the suggestions of its kind on its step (`LabelEdit::Add`).
pub fn add_label(labels: &mut Vec<Label>, label: Label) {
    labels.retain(|existing| {
        let same_place = existing.step == label.step && existing.kind == label.kind;
        !(same_place
            && (existing.author == label.author
                || (existing.status == LabelStatus::Suggested
                    && label.status == LabelStatus::Confirmed)))
    });
    labels.push(label);
}

/// Whether an author's keys act on a label: their own, or a suggestion.
pub fn is_own(label: &Label, author: Option<&str>) -> bool {
    label.status == LabelStatus::Suggested || label.author.as_deref() == author
}

/// Whether two label lists hold the same labels, in any order.
pub fn same_labels(a: &[Label], b: &[Label]) -> bool {
    a.len() == b.len() && a.iter().all(|label| b.contains(label))
}
