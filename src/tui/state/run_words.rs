//! What the Runs tab says about runs in words: a run's progress in a few words, and the
//! notice when a run changes status.

use super::status::Status;
use crate::trajectory::{Phase, RunInfo, RunStatus};

/// Tells the user a run changed status: started, paused, stopped, done, failed or
/// interrupted.
pub(super) fn announce(run: &RunInfo, before: Option<RunStatus>, status: &mut Status) {
    let id = &run.id;
    let step = run.step;
    match run.status {
        RunStatus::Failed => status.warn(format!(
            "{id} failed at step {step}: {}",
            run.note.as_deref().unwrap_or("see its log")
        )),
        RunStatus::Interrupted => status.warn(format!(
            "{id}'s process ended at step {step} without finishing; `r` resumes it from its \
             checkpoint"
        )),
        RunStatus::Paused => {
            status.notify(format!("{id} paused after step {step}; resume or stop it"));
        }
        RunStatus::Stopped => status.notify(format!(
            "{id} stopped after step {step} (checkpoint written; resume continues it)"
        )),
        RunStatus::Done => status.notify(format!("{id} done after {step} steps")),
        RunStatus::Running if before.is_none() => status.notify(format!("{id} started")),
        RunStatus::Running => {}
    }
}

/// A run's progress in a few words: `step 3/30 · rollouts 37/64`.
pub fn describe(run: &RunInfo) -> String {
    let total = run.total_steps;
    match (run.status, run.activity) {
        (RunStatus::Running, Some(activity)) if activity.phase == Phase::Checkpoint => {
            format!("step {}/{total} · checkpoint", activity.step)
        }
        (RunStatus::Running, Some(activity)) => format!(
            "step {}/{total} · {} {}/{}",
            activity.step,
            activity.phase.name(),
            activity.done,
            activity.total
        ),
        (RunStatus::Running, None) => format!("step {}/{total}", run.step),
        (RunStatus::Paused, _) => format!("paused after step {}/{total}", run.step),
        (status, _) => format!("{} at step {}/{total}", status.as_str(), run.step),
    }
}
