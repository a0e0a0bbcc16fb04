//! Error analysis: labels per kind per run, policy version and task source (confirmed vs
//! suggested), where the first error occurs, and per policy version accuracy, pass@k, length,
//! format correctness and numeric error. Counts come from summaries; lengths, formats, errors
//! and label steps from one parallel pass over the records (without token traces).

mod facts;
mod groups;
mod paired;
pub mod pass_at_k;
mod versions;

pub use facts::{Distance, RecordFacts};
pub use groups::{GroupCounts, KindCounts, group_by};
pub use paired::paired_runs;
pub use versions::{NumericError, PassAtK, VersionStats, versions};

use super::records::map_records;
use super::suggest::Precision;
use super::tasks::TaskIndex;
use crate::store::{Filter, Query, Store, StoreResult, Summary};
use serde::Serialize;

/// Where the first error label of each trajectory sits: counts by step (0-based).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FirstError {
    /// By the step of the first confirmed label.
    pub confirmed: Vec<usize>,
    /// By the step of the first suggested label.
    pub suggested: Vec<usize>,
}

impl FirstError {
    fn add(histogram: &mut Vec<usize>, step: Option<u32>) {
        if let Some(step) = step {
            let step = step as usize;
            if histogram.len() <= step {
                histogram.resize(step + 1, 0);
            }
            histogram[step] += 1;
        }
    }
}

/// The error analysis of a set of trajectories.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Analysis {
    /// Trajectories analysed.
    pub trajectories: usize,
    /// Of which passed.
    pub passed: usize,
    /// Of which failed.
    pub failed: usize,
    /// Labels per kind over all of them.
    pub kinds: KindCounts,
    /// Per run.
    pub runs: Vec<GroupCounts>,
    /// Per task source (the task set each task comes from).
    pub sources: Vec<GroupCounts>,
    /// Per policy version, in run then version order.
    pub versions: Vec<VersionStats>,
    /// Where the first error occurs (from records).
    pub first_error: FirstError,
    /// The suggestion rules against the confirmed labels, over trajectories with any
    /// (from records).
    pub precision: Option<Precision>,
    /// Whether the record figures were computed.
    pub from_records: bool,
}

impl Analysis {
    /// The figures summaries give (no record is read).
    pub fn of_summaries(summaries: &[Summary], tasks: &TaskIndex) -> Self {
        let mut analysis = Self {
            trajectories: summaries.len(),
            ..Self::default()
        };
        for summary in summaries {
            analysis.passed += usize::from(summary.passed == Some(true));
            analysis.failed += usize::from(summary.passed == Some(false));
            analysis.kinds.add(summary);
        }
        analysis.runs = group_by(summaries, |summary| {
            if summary.run.is_empty() {
                "(no run)"
            } else {
                summary.run.as_str()
            }
        });
        analysis.sources = group_by(summaries, |summary| tasks.source(&summary.task_id));
        analysis.versions = versions(summaries, None);
        analysis
    }

    /// Every figure, with the record facts of `summaries` (same order).
    pub fn of_records(summaries: &[Summary], tasks: &TaskIndex, facts: &[RecordFacts]) -> Self {
        let mut analysis = Self::of_summaries(summaries, tasks);
        analysis.versions = versions(summaries, Some(facts));
        let mut precision: Option<Precision> = None;
        for fact in facts {
            FirstError::add(&mut analysis.first_error.confirmed, fact.first_confirmed);
            FirstError::add(&mut analysis.first_error.suggested, fact.first_suggested);
            if let Some(tally) = &fact.precision {
                precision.get_or_insert_with(Precision::default).add(tally);
            }
        }
        analysis.precision = precision;
        analysis.from_records = true;
        analysis
    }

    /// The figures of one policy version.
    pub fn version(&self, run: &str, step: Option<u64>) -> Option<&VersionStats> {
        self.versions
            .iter()
            .find(|version| version.run == run && version.step == step)
    }
}

/// Analyses the trajectories a filter selects: summaries first, then every record once.
pub fn analyse(store: &Store, filter: &Filter) -> StoreResult<Analysis> {
    let summaries = store.query(&Query {
        filter: filter.clone(),
        ..Query::default()
    })?;
    let tasks = TaskIndex::load(store)?;
    analyse_summaries(store, &summaries, &tasks)
}

/// Analyses the trajectories of `summaries`, reading every record once.
pub fn analyse_summaries(
    store: &Store,
    summaries: &[Summary],
    tasks: &TaskIndex,
) -> StoreResult<Analysis> {
    let ids: Vec<_> = summaries.iter().map(|summary| summary.id).collect();
    let facts = map_records(store, &ids, false, |trajectory| {
        RecordFacts::of(&trajectory, tasks.of(&trajectory))
    })?;
    Ok(Analysis::of_records(summaries, tasks, &facts))
}
