//! Two evaluation runs compared task by task: the greedy verdicts of each on the tasks both
//! attempted, as a paired difference with its 95% interval.

use crate::stats::PairedDifference;
use crate::store::{Filter, Query, Store, Summary};

/// The paired difference of run `second` against run `first` on their greedy attempts
/// (sample 0, or the only one) of the tasks both judged; errors name a run with no verdicts.
pub fn paired_runs(store: &Store, first: &str, second: &str) -> anyhow::Result<PairedDifference> {
    let first = greedy_verdicts(store, first)?;
    let second = greedy_verdicts(store, second)?;
    Ok(PairedDifference::of(
        first.iter().map(|(task, passed)| (task.as_str(), *passed)),
        second.iter().map(|(task, passed)| (task.as_str(), *passed)),
    ))
}

fn greedy_verdicts(store: &Store, run: &str) -> anyhow::Result<Vec<(String, bool)>> {
    let summaries: Vec<Summary> = store.query(&Query {
        filter: Filter {
            run: Some(run.to_string()),
            ..Filter::default()
        },
        ..Query::default()
    })?;
    let verdicts: Vec<(String, bool)> = summaries
        .into_iter()
        .filter(|summary| summary.sample.unwrap_or(0) == 0 && !summary.task_id.is_empty())
        .filter_map(|summary| Some((summary.task_id, summary.passed?)))
        .collect();
    anyhow::ensure!(
        !verdicts.is_empty(),
        "run {run} has no judged attempt with a task: give two evaluation runs (rollscope runs lists them)"
    );
    Ok(verdicts)
}
