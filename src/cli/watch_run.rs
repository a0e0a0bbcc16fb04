//! `rollscope watch RUN` for a run of the session: its metrics rows from the store (no file
//! needed, whichever process writes them), the rollouts each step stored, and the run's
//! status as it changes, until the run ends.

use super::Cli;
use crate::run::{observed, step_rollouts};
use crate::store::{Filter, Outcome, Store};
use crate::trajectory::{MetricsRow, RunInfo, RunStatus};
use std::time::Duration;

/// Follows session run `run` in `store`, printing rows with `print` (and `once`: what is
/// there, then returns).
pub fn follow_session_run(
    cli: &Cli,
    store: &Store,
    run: &str,
    every: Duration,
    once: bool,
    print: &mut dyn FnMut(&[MetricsRow]),
) -> anyhow::Result<()> {
    let mut shown = None;
    let mut status = None;
    loop {
        let info = observed(
            store
                .get_run(run)?
                .ok_or_else(|| anyhow::anyhow!("no run `{run}` in session `{}`", cli.session))?,
        );
        let rows: Vec<MetricsRow> = store
            .metrics(run)?
            .into_iter()
            .filter(|row| shown.is_none_or(|last| row.step > last))
            .collect();
        for row in &rows {
            print(std::slice::from_ref(row));
            if !cli.json
                && let Some(line) = rollouts_of(store, &info, row.step)?
            {
                println!("       {line}");
            }
            shown = Some(row.step);
        }
        if status != Some(info.status) {
            status = Some(info.status);
            if !cli.json {
                eprintln!(
                    "{run} {} at step {}/{}",
                    info.status.as_str(),
                    info.step,
                    info.total_steps
                );
            }
        }
        let ended = !matches!(info.status, RunStatus::Running | RunStatus::Paused);
        if once || ended {
            return Ok(());
        }
        std::thread::sleep(every);
    }
}

/// The rollouts behind row `step` of a run (`run::step_rollouts`), in
/// words: `16 rollouts by policy version 2, 9 pass`; `None` when it has none (an SFT run,
/// the evaluation before the first step).
fn rollouts_of(store: &Store, info: &RunInfo, step: u64) -> anyhow::Result<Option<String>> {
    let run = &info.id;
    let Some(behind) = step_rollouts(info, step) else {
        return Ok(None);
    };
    let version = behind.step.unwrap_or_default();
    let filter = |outcome| Filter {
        outcome,
        ..behind.clone()
    };
    let all = store.count(&filter(None))?;
    if all == 0 {
        return Ok(None);
    }
    let passed = store.count(&filter(Some(Outcome::Pass)))?;
    Ok(Some(format!(
        "{all} rollouts by policy version {version}, {passed} pass (rollscope list --run {run} \
         --step {version})"
    )))
}
