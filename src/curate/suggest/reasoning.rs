//! Reasoning errors: the failures no other rule explains, placed at the first step whose
//! Monte-Carlo score drops, else the first step any process score calls wrong, else the last
//! step.

use super::context::LOW_SCORE;
use super::{Context, Evidence};
use crate::curate::numbers::show;
use crate::trajectory::{ErrorKind, ScoreSource, StepScore};

/// How far a Monte-Carlo score must fall from the step before to count as a drop.
const DROP: f64 = 0.25;

/// One piece of evidence: where the reasoning went wrong.
pub fn evidence(context: &Context<'_>) -> Vec<Evidence> {
    let scores = &context.trajectory.step_scores;
    let (step, note) = monte_carlo_drop(scores)
        .or_else(|| first_low(scores))
        .unwrap_or_else(|| (context.last_step(), outcome_note(context)));
    vec![Evidence {
        step,
        kind: ErrorKind::Reasoning,
        note,
    }]
}

fn monte_carlo_drop(scores: &[StepScore]) -> Option<(u32, String)> {
    let mut by_step: Vec<&StepScore> = scores
        .iter()
        .filter(|score| score.source == ScoreSource::MonteCarlo)
        .collect();
    by_step.sort_by_key(|score| score.step);
    let mut previous = 1.0;
    for score in by_step {
        if score.value < previous - DROP {
            return Some((
                score.step,
                format!(
                    "the Monte-Carlo score falls from {previous:.2} to {:.2} at this step",
                    score.value
                ),
            ));
        }
        previous = score.value;
    }
    None
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
        (None, _) => format!("the trajectory ends without an answer (stop: {stop})"),
        (Some(_), None) => format!(
            "the trajectory failed (stop: {stop}); no process score points to an earlier step"
        ),
    }
}
