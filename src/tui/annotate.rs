//! Annotation: the commands behind `1`–`4`, `a`, `n`, `u`, and the badcase queue that `]`
//! and `[` walk.

use crate::engine::{Command, LabelDraft, Tag};
use crate::store::is_own;
use crate::trajectory::{ErrorKind, Label, LabelStatus, Trajectory, TrajectoryId};
use std::collections::HashSet;

/// Label changes `u` can undo.
const UNDO_DEPTH: usize = 100;

/// The step a label applies to, and the labels it has now.
#[derive(Clone, Copy, Debug)]
pub struct Target<'a> {
    /// The trajectory.
    pub id: TrajectoryId,
    /// The step, 0-based.
    pub step: u32,
    /// All the trajectory's labels as last saved.
    pub labels: &'a [Label],
    /// Who is labelling: keys toggle, note and undo this author's labels only.
    pub author: Option<&'a str>,
}

impl<'a> Target<'a> {
    /// A target on a trajectory's step, labelled by `author`.
    pub fn new(trajectory: &'a Trajectory, step: usize, author: Option<&'a str>) -> Self {
        Self {
            id: trajectory.id,
            step: step as u32,
            labels: &trajectory.labels,
            author,
        }
    }

    fn on_step(&self) -> impl Iterator<Item = &'a Label> + '_ {
        self.labels.iter().filter(|label| label.step == self.step)
    }

    /// The author's own confirmed labels on the step.
    fn mine_on_step(&self) -> impl Iterator<Item = &'a Label> + '_ {
        self.on_step().filter(|label| {
            label.status == LabelStatus::Confirmed && label.author.as_deref() == self.author
        })
    }
}

/// A process score below this marks a step as a likely error.
const LOW_SCORE: f64 = 0.5;

/// The step the list labels when no turn is chosen: the first step with a low process
/// score, else the lowest-scored step, else the last step (always the last when `blind`: the
/// process scores are not to be seen).
pub fn focus_step(trajectory: &Trajectory, blind: bool) -> Option<usize> {
    let steps = trajectory.steps().len();
    if steps == 0 {
        return None;
    }
    if blind {
        return Some(steps - 1);
    }
    let scored = || {
        trajectory
            .step_scores
            .iter()
            .filter(|score| (score.step as usize) < steps)
    };
    let first_low = scored()
        .filter(|score| score.value < LOW_SCORE)
        .min_by_key(|score| score.step);
    let lowest = scored().min_by(|a, b| a.value.total_cmp(&b.value).then(a.step.cmp(&b.step)));
    Some(
        first_low
            .or(lowest)
            .map_or(steps - 1, |score| score.step as usize),
    )
}

/// The labels as they were before a change, to put back on undo.
#[derive(Clone, Debug, PartialEq)]
pub struct UndoEntry {
    /// The trajectory.
    pub id: TrajectoryId,
    /// Its labels before the change.
    pub labels: Vec<Label>,
}

impl UndoEntry {
    /// What the author's keys act on, their labels and the suggestions, as they are now.
    pub fn of(target: &Target<'_>) -> Self {
        Self {
            id: target.id,
            labels: target
                .labels
                .iter()
                .filter(|label| is_own(label, target.author))
                .cloned()
                .collect(),
        }
    }
}

/// The undo stack.
#[derive(Clone, Debug, Default)]
pub struct UndoStack {
    entries: Vec<UndoEntry>,
}

impl UndoStack {
    /// Remembers labels before a change.
    pub fn push(&mut self, entry: UndoEntry) {
        if self.entries.len() == UNDO_DEPTH {
            self.entries.remove(0);
        }
        self.entries.push(entry);
    }

    /// The command that puts back the labels before the last change.
    pub fn undo(&mut self) -> Option<Command> {
        let entry = self.entries.pop()?;
        Some(Command::SetLabels {
            id: entry.id,
            labels: entry.labels,
        })
    }

    /// Changes that can be undone.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing can be undone.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// `1`–`4`: confirms a label of `kind` on the step, or removes it when the author already
/// confirmed it there (the keys toggle; a teammate's label of the kind stays).
pub fn toggle(target: &Target<'_>, kind: ErrorKind) -> Command {
    let confirmed = target.mine_on_step().any(|label| label.kind == kind);
    if confirmed {
        Command::RemoveLabels {
            id: target.id,
            step: target.step,
            kind: Some(kind),
        }
    } else {
        Command::SaveLabel {
            id: target.id,
            draft: LabelDraft {
                step: target.step,
                kind,
                status: LabelStatus::Confirmed,
                note: None,
            },
        }
    }
}

/// `a`: confirms the step's suggested labels, keeping their evidence as the note.
pub fn accept(target: &Target<'_>) -> Result<Vec<Command>, String> {
    let commands: Vec<Command> = target
        .on_step()
        .filter(|label| label.status == LabelStatus::Suggested)
        .map(|label| Command::SaveLabel {
            id: target.id,
            draft: LabelDraft {
                step: target.step,
                kind: label.kind,
                status: LabelStatus::Confirmed,
                note: label.note.clone(),
            },
        })
        .collect();
    if commands.is_empty() {
        Err(format!("no suggested label on t{}", target.step + 1))
    } else {
        Ok(commands)
    }
}

/// `n`: sets the note of the author's confirmed labels on the step; an empty note clears
/// it.
pub fn note(target: &Target<'_>, text: &str) -> Result<Command, String> {
    let mut changed = false;
    let labels = UndoEntry::of(target)
        .labels
        .into_iter()
        .map(|mut label| {
            if label.step == target.step && label.status == LabelStatus::Confirmed {
                label.note = (!text.is_empty()).then(|| text.to_string());
                changed = true;
            }
            label
        })
        .collect();
    if changed {
        Ok(Command::SetLabels {
            id: target.id,
            labels,
        })
    } else {
        Err(format!(
            "t{} has no label of yours to note; label it first with 1–4",
            target.step + 1
        ))
    }
}

/// A note written on a turn with no label yet, kept until a label key labels that turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingNote {
    /// The trajectory.
    pub id: TrajectoryId,
    /// The step, 0-based.
    pub step: u32,
    /// The note.
    pub text: String,
}

impl PendingNote {
    /// Whether it was written on this target's turn.
    pub fn is_for(&self, target: &Target<'_>) -> bool {
        self.id == target.id && self.step == target.step
    }
}

/// Whether the target's turn has a label of the author's a note can go on.
pub fn has_label(target: &Target<'_>) -> bool {
    target.mine_on_step().next().is_some()
}

/// The unlabelled failures of the current listing, walked with `]` and `[`.
#[derive(Clone, Debug, Default)]
pub struct BadcaseQueue {
    /// The listing it belongs to.
    pub tag: Tag,
    /// (row in the listing, id) of each unlabelled failure, in listing order.
    pub entries: Vec<(usize, TrajectoryId)>,
    /// The entry open now.
    pub position: Option<usize>,
    /// Entries labelled since the queue was made (skipped by `]` and `[`).
    pub labelled: HashSet<TrajectoryId>,
}

impl BadcaseQueue {
    /// Takes a new queue for a listing.
    pub fn receive(&mut self, tag: Tag, entries: Vec<(usize, TrajectoryId)>) {
        self.tag = tag;
        self.entries = entries;
        self.position = None;
        self.labelled.clear();
    }

    /// Notes that a trajectory got (or lost) its confirmed labels.
    pub fn set_labelled(&mut self, id: TrajectoryId, labelled: bool) {
        if labelled {
            self.labelled.insert(id);
        } else {
            self.labelled.remove(&id);
        }
    }

    /// The next entry not yet labelled, after the open one (or from row `cursor`).
    pub fn next(&mut self, cursor: usize) -> Option<(usize, TrajectoryId)> {
        let start = match self.position {
            Some(position) => position + 1,
            None => self.entries.partition_point(|(row, _)| *row < cursor),
        };
        let found = (start..self.entries.len())
            .find(|&index| !self.labelled.contains(&self.entries[index].1))?;
        self.position = Some(found);
        Some(self.entries[found])
    }

    /// The previous entry not yet labelled, before the open one (or before row `cursor`).
    pub fn previous(&mut self, cursor: usize) -> Option<(usize, TrajectoryId)> {
        let end = match self.position {
            Some(position) => position,
            None => self.entries.partition_point(|(row, _)| *row < cursor),
        };
        let found = (0..end)
            .rev()
            .find(|&index| !self.labelled.contains(&self.entries[index].1))?;
        self.position = Some(found);
        Some(self.entries[found])
    }

    /// `badcase 12 of 340 · 11 labelled`, once the queue has entries.
    pub fn progress(&self) -> Option<String> {
        if self.entries.is_empty() {
            return None;
        }
        let position = self
            .position
            .map_or_else(|| "–".to_string(), |position| (position + 1).to_string());
        Some(format!(
            "badcase {position} of {} · {} labelled",
            self.entries.len(),
            self.labelled.len()
        ))
    }
}
