//! Reasoning errors: the failures no other rule explains, placed at the step whose
//! Monte-Carlo score (success-from-here) drops most, from the value before the first turn
//! where forks measured it (else from 1), else the first step any process score calls
//! wrong, else the last step.

use super::context::LOW_SCORE;
use super::{Context, Evidence};
use crate::curate::numbers::show;
use crate::trajectory::{ErrorKind, ScoreSource, StepScore};

/// How far a Monte-Carlo score must fall from the step before to count as a drop.
const DROP: f64 = 0.25;

/// One piece of evidence: where the reasoning went wrong.
pub fn evidence(context: &Context<'_>) -> Vec<Evidence> {
    let scores = &context.trajectory.step_scores;
    let (step, note) = monte_carlo_drop(scores, start_value(context.trajectory))
        .or_else(|| first_low(scores))
        .unwrap_or_else(|| (context.last_step(), outcome_note(context)));
    vec![Evidence {
        step,
        kind: ErrorKind::Reasoning,
        note,
    }]
}

/// Success from the start, where an unedited fork from the first turn measured it.
fn start_value(trajectory: &crate::trajectory::Trajectory) -> Option<f64> {
    trajectory
        .branches
        .iter()
        .rev()
        .find(|branch| branch.turn == 1 && !branch.edited && !branch.children.is_empty())
        .map(|branch| f64::from(branch.passed) / branch.children.len() as f64)
}

/// The step whose Monte-Carlo score falls most (by at least `DROP`) from the step before
/// (the first step from `start`, else from 1); the earliest of equal drops.
fn monte_carlo_drop(scores: &[StepScore], start: Option<f64>) -> Option<(u32, String)> {
    let mut by_step: Vec<&StepScore> = scores
        .iter()
        .filter(|score| score.source == ScoreSource::MonteCarlo)
        .collect();
    by_step.sort_by_key(|score| score.step);
    let mut previous = start.unwrap_or(1.0);
    let mut largest: Option<(u32, f64, f64)> = None;
    for score in by_step {
        let drop = previous - score.value;
        if drop >= DROP && largest.is_none_or(|(_, before, after)| drop > before - after) {
            largest = Some((score.step, previous, score.value));
        }
        previous = score.value;
    }
    largest.map(|(step, before, after)| {
        let source = if start.is_some() {
            "success-from-here (forks)"
        } else {
            "the Monte-Carlo score"
        };
        (
            step,
            format!("{source} falls most at this step: from {before:.2} to {after:.2}"),
        )
    })
}

fn first_low(scores: &[StepScore]) -> Option<(u32, String)> {
    let rank = |source: &ScoreSource| match source {
        ScoreSource::Human => 0,
        ScoreSource::Model => 1,
        _ => 2,
    };
    scores
        .iter()
        .filter(|score| score.source != ScoreSource::MonteCarlo && score.value < LOW_SCORE)
        .min_by_key(|score| (rank(&score.source), score.step))
        .map(|score| {
            (
                score.step,
                format!(
                    "the first low {} score ({:.2}) is at this step",
                    score.source, score.value
                ),
            )
        })
}

fn outcome_note(context: &Context<'_>) -> String {
    let stop = &context.trajectory.stop_reason;
    match (&context.answer, context.truth()) {
        (Some(answer), Some(truth)) => format!(
            "no process score points to an earlier step; the answer {} is wrong (ground truth {})",
            context
                .answer_value
                .as_ref()
                .map_or_else(|| crate::text::clip(answer, 40).into_owned(), show),
            truth
        ),
        (None, Some(_)) => format!("the trajectory ends without an answer (stop: {stop})"),
        (_, None) => format!(
            "the trajectory failed (stop: {stop}); no process score points to an earlier step"
        ),
    }
}
