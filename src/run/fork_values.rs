//! Success-from-here: the value of the state before each turn of a trajectory, estimated
//! by forks from it (the Monte-Carlo convention of Math-Shepherd and OmegaPRM), and stored on
//! the trajectory as Monte-Carlo step scores.

use super::RunContext;
use crate::stats::SuccessRate;
use crate::trajectory::{ForkBranch, PrefixKind, ScoreSource, StepScore, Trajectory, TrajectoryId};
use serde::Serialize;

/// Success from one turn of one trajectory.
#[derive(Clone, Debug, Serialize)]
pub struct TurnFork {
    /// The turn, 1-based.
    pub turn: usize,
    /// Continuations that passed, of all.
    pub success: SuccessRate,
    /// The children stored.
    pub children: Vec<TrajectoryId>,
    /// How the prefix reached the policy.
    pub prefix: PrefixKind,
}

/// The forks of one trajectory.
#[derive(Clone, Debug, Serialize)]
pub struct ParentForks {
    /// The trajectory.
    pub parent: TrajectoryId,
    /// Whether it passed.
    pub passed: Option<bool>,
    /// Its outcome reward.
    pub reward: Option<f64>,
    /// Its turns.
    pub turns: usize,
    /// Whether every turn was forked.
    pub every_turn: bool,
    /// Success from each turn forked.
    pub forks: Vec<TurnFork>,
}

impl ParentForks {
    /// Success-from-here along the trajectory, when every turn was forked: the value of the
    /// state before each turn (success of the forks from it), then after the last turn its
    /// own verdict; T + 1 values for T turns.
    pub fn values(&self) -> Option<Vec<f64>> {
        if !self.every_turn || self.forks.len() != self.turns || self.turns == 0 {
            return None;
        }
        let mut values: Vec<f64> = self.forks.iter().map(|fork| fork.success.rate()).collect();
        values.push(f64::from(u8::from(self.passed.unwrap_or(false))));
        Some(values)
    }

    /// The turn (1-based) whose step lowers success-from-here the most, with the drop; none
    /// when no turn lowers it.
    pub fn largest_drop(&self) -> Option<(usize, f64)> {
        let values = self.values()?;
        values
            .windows(2)
            .enumerate()
            .map(|(index, pair)| (index + 1, pair[0] - pair[1]))
            .filter(|&(_, drop)| drop > 0.0)
            .fold(
                None,
                |best: Option<(usize, f64)>, (turn, drop)| match best {
                    Some((_, most)) if most >= drop => best,
                    _ => Some((turn, drop)),
                },
            )
    }
}

/// Records the forks on the parent as branches (run, turn, children, passes) and, when
/// every turn was forked (`values` gives N and the policy), its success-from-here values;
/// the parent is read again just before it is written, so labels set meanwhile are kept.
pub(super) fn record_forks(
    context: &RunContext,
    id: TrajectoryId,
    run: &str,
    forks: &[TurnFork],
    edited: bool,
    values: Option<(usize, &str)>,
) -> anyhow::Result<()> {
    let Some(mut parent) = context.store.get(id)? else {
        return Ok(());
    };
    parent.branches.extend(forks.iter().map(|fork| ForkBranch {
        run: run.to_string(),
        turn: fork.turn as u32,
        children: fork.children.clone(),
        passed: fork.success.passed as u32,
        edited,
    }));
    if let Some((n, policy)) = values {
        set_values(&mut parent, forks, n, policy);
    }
    context.store.put_trajectories(&[parent])?;
    Ok(())
}

/// Success-from-here on the parent as Monte-Carlo step scores: the value of the state after
/// turn t is the success of forks from turn t + 1; after the last turn, its own verdict.
/// Earlier Monte-Carlo scores are replaced; labels and other scores are kept.
fn set_values(parent: &mut Trajectory, forks: &[TurnFork], n: usize, policy: &str) {
    let steps = parent.steps();
    let turns = parent.turn_messages();
    let last_step_of_turn = |turn: usize| -> Option<u32> {
        let message = *turns.get(turn)?;
        steps
            .iter()
            .rposition(|step| step.message == message)
            .map(|step| step as u32)
    };
    let mut scores = Vec::new();
    for fork in forks.iter().filter(|fork| fork.turn >= 2) {
        if let Some(step) = last_step_of_turn(fork.turn - 2) {
            scores.push(StepScore {
                step,
                value: fork.success.rate(),
                source: ScoreSource::MonteCarlo,
                note: Some(format!(
                    "{} of {} continuations from turn {} pass ({policy})",
                    fork.success.passed, n, fork.turn
                )),
            });
        }
    }
    if let Some(step) = parent
        .turn_count()
        .checked_sub(1)
        .and_then(last_step_of_turn)
    {
        scores.push(StepScore {
            step,
            value: f64::from(u8::from(parent.passed().unwrap_or(false))),
            source: ScoreSource::MonteCarlo,
            note: Some("the final answer's own verdict".into()),
        });
    }
    parent
        .step_scores
        .retain(|score| score.source != ScoreSource::MonteCarlo);
    parent.step_scores.extend(scores);
}
