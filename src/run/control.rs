//! How a running training run is steered (pause, resume, stop) and what it reports while it
//! works. A run checks its control between steps; pausing lets the current step finish.

use super::eval::EvalFigures;
use crate::trajectory::{MetricsRow, Phase, RunStatus};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

const RUNNING: u8 = 0;
const PAUSED: u8 = 1;
const STOPPING: u8 = 2;

/// A handle that pauses, resumes or stops a run; clones steer the same run.
#[derive(Clone, Debug, Default)]
pub struct RunControl {
    state: Arc<AtomicU8>,
}

impl RunControl {
    /// A control in the running state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks the run to wait after its current step.
    pub fn pause(&self) {
        let _ = self
            .state
            .compare_exchange(RUNNING, PAUSED, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// Lets a paused run go on.
    pub fn resume(&self) {
        let _ = self
            .state
            .compare_exchange(PAUSED, RUNNING, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// Asks the run to checkpoint and end after its current step.
    pub fn stop(&self) {
        self.state.store(STOPPING, Ordering::SeqCst);
    }

    /// Whether a stop was asked for.
    pub fn stopping(&self) -> bool {
        self.state.load(Ordering::SeqCst) == STOPPING
    }

    /// Whether the run is paused.
    pub fn paused(&self) -> bool {
        self.state.load(Ordering::SeqCst) == PAUSED
    }

    /// Blocks while paused (reporting it once through `on_pause`); returns `false` when the
    /// run should stop.
    pub fn wait_while_paused(&self, mut on_pause: impl FnMut()) -> bool {
        let mut reported = false;
        while self.paused() {
            if !reported {
                on_pause();
                reported = true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        !self.stopping()
    }
}

/// What a run reports while it works.
#[derive(Clone, Debug)]
pub enum RunEvent {
    /// The run began (or resumed) at `step` of `total_steps`.
    Started {
        /// The run id.
        run: String,
        /// Steps already done.
        step: u64,
        /// Steps in all.
        total_steps: u64,
    },
    /// Progress inside a step: `done` of `total` units of `phase`.
    Progress {
        /// The step being made (1-based).
        step: u64,
        /// What it is doing.
        phase: Phase,
        /// Units done.
        done: u64,
        /// Units in all.
        total: u64,
    },
    /// A step ended; its metrics row was stored.
    Step(MetricsRow),
    /// An evaluation ended at policy version `step`.
    Eval {
        /// The policy version evaluated.
        step: u64,
        /// Its figures.
        figures: EvalFigures,
    },
    /// The run waits for `resume`.
    Paused,
    /// The run ended with `status`; its final policy is in `model` when it wrote one.
    Finished {
        /// Done, stopped or failed.
        status: RunStatus,
        /// The final policy folder.
        model: Option<PathBuf>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pause_resume_and_stop_move_between_states() {
        let control = RunControl::new();
        assert!(!control.paused() && !control.stopping());
        control.pause();
        assert!(control.paused());
        let clone = control.clone();
        let waiter = std::thread::spawn(move || clone.wait_while_paused(|| {}));
        control.resume();
        assert!(waiter.join().unwrap());
        control.pause();
        control.stop();
        assert!(control.stopping() && !control.paused());
        assert!(!control.wait_while_paused(|| {}));
        control.resume();
        assert!(control.stopping(), "a stop is final");
    }
}
