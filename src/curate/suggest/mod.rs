//! Suggested error labels: rules that read a trajectory (and its task) and propose a label
//! with the evidence as its note. A suggestion is always `LabelStatus::Suggested` until a
//! person accepts it (`a` in the TUI).
//!
//! | kind | evidence |
//! |---|---|
//! | calculation | a false arithmetic claim, or a tool result restated wrongly (rule PRM) |
//! | format | a malformed tool call; a failed answer that is right but unmarked, or unreadable |
//! | understanding | a wrong answer equal to an intermediate quantity of the reference, the truth in another unit, or a part of it (or a total instead of a part) |
//! | reasoning | any other failure: at the first step whose Monte-Carlo score drops, else the first low-scoring step, else the last step |
//!
//! A failure on a task that offers tools and carries an annotated worked solution (the
//! generated families, GSM8K in the agent loop) is also diagnosed against that solution
//! (`solution`: each wrong step and its kind, from which numbers and operations each
//! calculation takes, and how the answer relates to the last result); the understanding
//! rules run where neither it nor the calculation rule found an error, the reasoning rule
//! where nothing but format errors was found and an answer was given.

mod calculation;
mod context;
mod format;
pub mod precision;
mod reasoning;
mod solution;
mod understanding;
mod write;

pub use context::Context;
pub use precision::{KindPrecision, Precision};
pub use write::{SuggestionCounts, write_suggestions};

use crate::trajectory::{ErrorKind, Label, LabelStatus, Task, Trajectory};

/// The author of suggested labels.
pub const SUGGESTER: &str = "rollscope-suggest";

/// One piece of evidence for a label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evidence {
    /// The step (0-based) the label goes on.
    pub step: u32,
    /// The kind of error.
    pub kind: ErrorKind,
    /// What was found, in a sentence.
    pub note: String,
}

/// The labels the rules suggest for a trajectory, stamped with `time` (milliseconds since the
/// epoch); at most one per step and kind, in step order.
pub fn suggest(trajectory: &Trajectory, task: Option<&Task>, time: i64) -> Vec<Label> {
    let context = Context::new(trajectory, task);
    let mut found = calculation::evidence(&context);
    found.extend(format::evidence(&context));
    if context.failed() {
        let only_format = |found: &[Evidence]| {
            found
                .iter()
                .all(|evidence| evidence.kind == ErrorKind::Format)
        };
        let agentic = task.filter(|task| !task.tools.is_empty());
        let needs_reasoning = match agentic.and_then(solution::Solution::of) {
            Some(solution) => {
                found.extend(solution::evidence(&context, &solution));
                if only_format(&found) {
                    found.extend(understanding::evidence(&context));
                }
                only_format(&found) && (found.is_empty() || context.answer_value.is_some())
            }
            None => {
                found.extend(understanding::evidence(&context));
                found.is_empty()
            }
        };
        if needs_reasoning {
            found.extend(reasoning::evidence(&context));
        }
    }
    let mut labels: Vec<Label> = Vec::new();
    for evidence in found {
        if labels
            .iter()
            .any(|label| label.step == evidence.step && label.kind == evidence.kind)
        {
            continue;
        }
        labels.push(Label {
            step: evidence.step,
            kind: evidence.kind,
            status: LabelStatus::Suggested,
            note: Some(evidence.note),
            author: Some(SUGGESTER.to_string()),
            time,
        });
    }
    labels.sort_by_key(|label| (label.step, label.kind));
    labels
}

/// A trajectory's labels with `suggestions` in place of the suggester's earlier ones (an earlier
/// suggestion with the same step, kind and note is kept as it was). People's labels stay; a
/// suggestion is left out where another label of its kind is on its step.
pub fn merge_suggestions(existing: &[Label], suggestions: Vec<Label>) -> Vec<Label> {
    let is_ours = |label: &Label| {
        label.status == LabelStatus::Suggested && label.author.as_deref() == Some(SUGGESTER)
    };
    let earlier: Vec<&Label> = existing.iter().filter(|label| is_ours(label)).collect();
    let mut labels: Vec<Label> = existing
        .iter()
        .filter(|label| !is_ours(label))
        .cloned()
        .collect();
    for suggestion in suggestions {
        let present = labels
            .iter()
            .any(|label| label.step == suggestion.step && label.kind == suggestion.kind);
        if present {
            continue;
        }
        let same = earlier.iter().find(|old| {
            old.step == suggestion.step
                && old.kind == suggestion.kind
                && old.note == suggestion.note
        });
        labels.push(same.map_or(suggestion, |old| (*old).clone()));
    }
    labels
}
