//! Figures per policy version (run and training step): accuracy, pass@k over the samples of
//! each task, mean length, format correctness and the answers' numeric error.

use super::facts::{Distance, RecordFacts};
use super::groups::KindCounts;
use super::pass_at_k::{pass_at_k, reported_ks};
use crate::store::Summary;
use serde::Serialize;
use std::collections::BTreeMap;

/// pass@k over the tasks with at least k samples.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PassAtK {
    /// k.
    pub k: usize,
    /// The mean over tasks of the unbiased estimate.
    pub value: f64,
    /// Tasks with at least k samples.
    pub tasks: usize,
}

/// How far answers are from numeric ground truths.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct NumericError {
    /// Trajectories whose task has a numeric truth and whose answer is a number.
    pub answered: usize,
    /// Trajectories whose task has a numeric truth and whose answer is not a number.
    pub unanswered: usize,
    /// Answers exactly right.
    pub exact: usize,
    /// Mean |answer − truth|.
    pub mean_absolute: Option<f64>,
    /// Median |answer − truth|.
    pub median_absolute: Option<f64>,
    /// Mean |answer − truth| / |truth| (truths other than 0).
    pub mean_relative: Option<f64>,
}

impl NumericError {
    /// The figures over a set of distances.
    pub fn of<'a>(distances: impl IntoIterator<Item = &'a Distance>) -> Self {
        let mut error = Self::default();
        let mut absolutes = Vec::new();
        let mut relatives = Vec::new();
        for distance in distances {
            match distance {
                Distance::NotNumeric => {}
                Distance::Unanswered => error.unanswered += 1,
                Distance::Off { absolute, relative } => {
                    error.answered += 1;
                    error.exact += usize::from(*absolute == 0.0);
                    absolutes.push(*absolute);
                    relatives.extend(*relative);
                }
            }
        }
        error.mean_absolute = mean(&absolutes);
        error.mean_relative = mean(&relatives);
        absolutes.sort_by(f64::total_cmp);
        error.median_absolute = median(&absolutes);
        error
    }
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

fn median(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

/// Everything measured for one policy version.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct VersionStats {
    /// The run (empty for trajectories without one).
    pub run: String,
    /// The policy version (training step), when recorded.
    pub step: Option<u64>,
    /// Trajectories.
    pub trajectories: usize,
    /// Of which passed.
    pub passed: usize,
    /// Of which failed.
    pub failed: usize,
    /// Distinct tasks.
    pub tasks: usize,
    /// Labels per kind.
    pub kinds: KindCounts,
    /// pass@k for k = 1, 2, 4, … up to the most samples of a task.
    pub pass_at_k: Vec<PassAtK>,
    /// Mean assistant turns.
    pub mean_turns: f64,
    /// Mean outcome reward over those with one.
    pub mean_reward: Option<f64>,
    /// Mean characters the policy wrote (from records).
    pub mean_chars: Option<f64>,
    /// Share with a marked answer and well-formed tool calls (from records).
    pub format_correct: Option<f64>,
    /// Numeric error of the answers (from records).
    pub numeric: Option<NumericError>,
}

impl VersionStats {
    /// Share passed among those with a verdict.
    pub fn accuracy(&self) -> Option<f64> {
        let judged = self.passed + self.failed;
        (judged > 0).then(|| self.passed as f64 / judged as f64)
    }

    /// `grpo-0007 @ 200`, `(imported)` without a run.
    pub fn name(&self) -> String {
        let run = if self.run.is_empty() {
            "(imported)"
        } else {
            &self.run
        };
        match self.step {
            Some(step) => format!("{run} @ {step}"),
            None => run.to_string(),
        }
    }

    /// pass@k for one k, if measured.
    pub fn pass_at(&self, k: usize) -> Option<f64> {
        self.pass_at_k.iter().find(|p| p.k == k).map(|p| p.value)
    }
}

/// The key of a summary's version.
pub fn version_key(summary: &Summary) -> (String, Option<u64>) {
    (summary.run.clone(), summary.step)
}

/// Figures per version from summaries; `facts`, when given, are the summaries' record facts
/// in the same order.
pub fn versions(summaries: &[Summary], facts: Option<&[RecordFacts]>) -> Vec<VersionStats> {
    let mut members: BTreeMap<(String, Option<u64>), Vec<usize>> = BTreeMap::new();
    for (index, summary) in summaries.iter().enumerate() {
        members.entry(version_key(summary)).or_default().push(index);
    }
    members
        .into_iter()
        .map(|((run, step), indexes)| {
            let rows: Vec<&Summary> = indexes.iter().map(|&i| &summaries[i]).collect();
            let mut stats = of_rows(run, step, &rows);
            if let Some(facts) = facts {
                let facts: Vec<&RecordFacts> = indexes.iter().map(|&i| &facts[i]).collect();
                add_facts(&mut stats, &facts);
            }
            stats
        })
        .collect()
}

fn of_rows(run: String, step: Option<u64>, rows: &[&Summary]) -> VersionStats {
    let mut stats = VersionStats {
        run,
        step,
        trajectories: rows.len(),
        ..VersionStats::default()
    };
    let mut by_task: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut rewards = Vec::new();
    let mut turns = 0usize;
    for summary in rows {
        stats.passed += usize::from(summary.passed == Some(true));
        stats.failed += usize::from(summary.passed == Some(false));
        stats.kinds.add(summary);
        turns += summary.turns as usize;
        rewards.extend(summary.reward);
        if summary.passed.is_some() {
            let entry = by_task.entry(summary.task_id.as_str()).or_default();
            entry.0 += 1;
            entry.1 += usize::from(summary.passed == Some(true));
        }
    }
    stats.tasks = rows
        .iter()
        .map(|summary| summary.task_id.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    stats.mean_turns = turns as f64 / rows.len().max(1) as f64;
    stats.mean_reward = mean(&rewards);
    let most = by_task.values().map(|(n, _)| *n).max().unwrap_or(0);
    stats.pass_at_k = reported_ks(most)
        .into_iter()
        .filter_map(|k| {
            let values: Vec<f64> = by_task
                .values()
                .filter_map(|&(n, c)| pass_at_k(n, c, k))
                .collect();
            Some(PassAtK {
                k,
                value: mean(&values)?,
                tasks: values.len(),
            })
        })
        .collect();
    stats
}

fn add_facts(stats: &mut VersionStats, facts: &[&RecordFacts]) {
    let count = facts.len().max(1) as f64;
    stats.mean_chars = Some(facts.iter().map(|f| f.policy_chars as f64).sum::<f64>() / count);
    let judged: Vec<bool> = facts.iter().filter_map(|f| f.format_ok).collect();
    stats.format_correct = (!judged.is_empty())
        .then(|| judged.iter().filter(|&&ok| ok).count() as f64 / judged.len() as f64);
    stats.numeric = Some(NumericError::of(facts.iter().map(|f| &f.distance)));
}
