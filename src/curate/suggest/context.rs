//! What every suggestion rule reads: the trajectory's steps and their text, the task's tools
//! and ground truth, the answer given, and whether the trajectory failed.

use crate::agent::answer::answers_match;
use crate::agent::reward::final_answer;
use crate::curate::numbers::{answer_number, truth_number};
use crate::trajectory::{ScoreSource, StepLocation, Task, Trajectory};
use num_rational::BigRational;
use serde_json::Value;

/// Process scores below this mark a step as wrong.
pub const LOW_SCORE: f64 = 0.5;

/// A trajectory read for the rules.
pub struct Context<'a> {
    /// The trajectory.
    pub trajectory: &'a Trajectory,
    /// Its task, when the store has it.
    pub task: Option<&'a Task>,
    /// Where each step lies.
    pub steps: Vec<StepLocation>,
    /// The answer it gives, as text.
    pub answer: Option<String>,
    /// The answer as a number, when it is one.
    pub answer_value: Option<BigRational>,
    /// The ground truth as a number, when it is one.
    pub truth_value: Option<BigRational>,
}

impl<'a> Context<'a> {
    /// Reads a trajectory and its task.
    pub fn new(trajectory: &'a Trajectory, task: Option<&'a Task>) -> Self {
        Self {
            trajectory,
            task,
            steps: trajectory.steps(),
            answer: final_answer(trajectory),
            answer_value: answer_number(trajectory),
            truth_value: task.and_then(truth_number),
        }
    }

    /// The tools the task offers (none without a task).
    pub fn tools(&self) -> &[Value] {
        self.task.map_or(&[], |task| task.tools.as_slice())
    }

    /// The ground truth, when the task has one.
    pub fn truth(&self) -> Option<&str> {
        self.task.and_then(|task| task.ground_truth.as_deref())
    }

    /// The text of step `index`.
    pub fn step_text(&self, index: usize) -> &str {
        self.steps.get(index).map_or("", |location| {
            self.trajectory.messages[location.message].span_text(location.span)
        })
    }

    /// Whether step `index` is the last of its message (the step a message's tool calls
    /// belong to).
    pub fn last_of_message(&self, index: usize) -> bool {
        self.steps
            .get(index + 1)
            .is_none_or(|next| Some(next.message) != self.steps.get(index).map(|at| at.message))
    }

    /// The index of the last step, as a label's step.
    pub fn last_step(&self) -> u32 {
        u32::try_from(self.steps.len().saturating_sub(1)).unwrap_or(u32::MAX)
    }

    /// Whether the trajectory failed: the verifier's verdict; without one, a process score
    /// below `LOW_SCORE` from a person, Monte-Carlo rollouts or a model; else an answer that
    /// does not match the ground truth (or no answer to a task that has one).
    pub fn failed(&self) -> bool {
        match self.trajectory.passed() {
            Some(passed) => !passed,
            None => self.judged_wrong() || self.answered_wrong(),
        }
    }

    /// Whether it failed on its outcome rather than on a step a judge called wrong: the
    /// verifier's verdict, or (without one and without a low step score) a wrong or missing
    /// answer.
    pub fn failed_on_outcome(&self) -> bool {
        match self.trajectory.passed() {
            Some(passed) => !passed,
            None => !self.judged_wrong() && self.answered_wrong(),
        }
    }

    /// A person, Monte-Carlo rollouts or a model scored a step below `LOW_SCORE`.
    fn judged_wrong(&self) -> bool {
        self.trajectory.step_scores.iter().any(|score| {
            matches!(
                score.source,
                ScoreSource::Human | ScoreSource::MonteCarlo | ScoreSource::Model
            ) && score.value < LOW_SCORE
        })
    }

    /// The answer misses the ground truth (or is missing, on a trajectory nobody scored).
    fn answered_wrong(&self) -> bool {
        match (self.truth(), &self.answer) {
            (Some(truth), Some(answer)) => !answers_match(answer, truth),
            (Some(_), None) => self.trajectory.step_scores.is_empty(),
            (None, _) => false,
        }
    }

    /// The first step whose text states `value`, else the last step.
    pub fn step_stating(&self, value: &BigRational) -> u32 {
        (0..self.steps.len())
            .find(|&index| {
                crate::curate::numbers::numbers_of(self.step_text(index)).contains(value)
            })
            .map_or(self.last_step(), |index| index as u32)
    }
}
