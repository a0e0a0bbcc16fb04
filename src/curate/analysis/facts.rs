//! What the analysis needs from a trajectory's record that its summary does not hold: how
//! much the policy wrote, whether the format is right, how far the answer is from the truth,
//! where the first error label sits, and how the suggestions compare with confirmed labels.

use crate::agent::protocol::check_stored_call;
use crate::agent::reward::{format_score, policy_length};
use crate::curate::numbers::{answer_number, to_f64, truth_number};
use crate::curate::suggest::Precision;
use crate::trajectory::{LabelStatus, Task, Trajectory};
use num_traits::{Signed, Zero};

/// How far an answer is from the ground truth.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Distance {
    /// The task has no numeric ground truth.
    NotNumeric,
    /// The truth is a number; the answer states none.
    Unanswered,
    /// |answer − truth|, and that over |truth| when the truth is not 0.
    Off {
        /// Absolute error.
        absolute: f64,
        /// Relative error.
        relative: Option<f64>,
    },
}

/// Facts read from one record.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordFacts {
    /// Characters the policy wrote (text, reasoning, tool calls).
    pub policy_chars: usize,
    /// Whether the answer is marked and every tool call well formed; none where the task has
    /// no ground truth, its prompt asks for no marked answer and no tools are offered.
    pub format_ok: Option<bool>,
    /// The answer's distance from the truth.
    pub distance: Distance,
    /// The step of the first confirmed label.
    pub first_confirmed: Option<u32>,
    /// The step of the first suggested label.
    pub first_suggested: Option<u32>,
    /// The suggestions compared with the confirmed labels, when it has any.
    pub precision: Option<Precision>,
}

impl RecordFacts {
    /// Reads the facts of a trajectory (`task` is its task, when known).
    pub fn of(trajectory: &Trajectory, task: Option<&Task>) -> Self {
        let empty = Task::new("", "", "");
        let first = |status: LabelStatus| {
            trajectory
                .labels
                .iter()
                .filter(|label| label.status == status)
                .map(|label| label.step)
                .min()
        };
        let first_confirmed = first(LabelStatus::Confirmed);
        Self {
            policy_chars: policy_length(trajectory, 1.0),
            format_ok: format_ok(task.unwrap_or(&empty), trajectory),
            distance: distance(trajectory, task),
            first_confirmed,
            first_suggested: first(LabelStatus::Suggested),
            precision: first_confirmed.map(|_| Precision::of_trajectory(trajectory, task)),
        }
    }
}

/// The ways a prompt asks for a marked answer (what `extract_answer` reads).
const ANSWER_MARKERS: [&str; 3] = ["final answer", "\\boxed", "####"];

/// Whether a trajectory keeps the format its task declares: a task graded against a ground
/// truth, or whose prompt asks for a marked answer (`Final Answer: …`, `\boxed{…}`,
/// `#### …`), asks for a marked answer and well-formed calls (the format reward's checks);
/// tools alone ask for well-formed calls; a task with none of these declares no format.
fn format_ok(task: &Task, trajectory: &Trajectory) -> Option<bool> {
    let asks_for_answer = task.ground_truth.is_some()
        || task
            .prompt
            .iter()
            .chain(trajectory.prompt_messages())
            .any(|message| {
                let text = message.content.to_lowercase();
                ANSWER_MARKERS.iter().any(|marker| text.contains(marker))
            });
    if asks_for_answer {
        return Some(format_score(task, trajectory) >= 1.0 - 1e-9);
    }
    if task.tools.is_empty() {
        return None;
    }
    Some(
        trajectory
            .messages
            .iter()
            .flat_map(|message| &message.tool_calls)
            .all(|call| check_stored_call(call, &task.tools).is_ok()),
    )
}

fn distance(trajectory: &Trajectory, task: Option<&Task>) -> Distance {
    let Some(truth) = task.and_then(truth_number) else {
        return Distance::NotNumeric;
    };
    let Some(answer) = answer_number(trajectory) else {
        return Distance::Unanswered;
    };
    let gap = (&answer - &truth).abs();
    Distance::Off {
        absolute: to_f64(&gap),
        relative: (!truth.is_zero()).then(|| to_f64(&(gap / truth.abs()))),
    }
}
