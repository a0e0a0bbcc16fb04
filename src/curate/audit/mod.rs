//! The reward-hacking audit: a queue of high-reward trajectories with suspicious traits (an
//! answer without any supporting step, the answer copied from the prompt, tool output quoted
//! without a call, repeated text, an anomalous length), most suspicious first.

mod traits;

pub use traits::{Sign, Trait, length_sign, signs};

use super::records::map_records;
use super::tasks::TaskIndex;
use crate::agent::reward::policy_length;
use crate::store::{Filter, Query, Store, StoreResult, Summary};
use crate::trajectory::TrajectoryId;
use serde::{Deserialize, Serialize};

/// What counts as high reward, and how far from typical a length must be.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuditOptions {
    /// Audit rewards at least this; `None`: trajectories the verifier passed.
    pub min_reward: Option<f64>,
    /// A length this many times the median (or that fraction of it) is anomalous.
    pub length_ratio: f64,
}

impl Default for AuditOptions {
    fn default() -> Self {
        Self {
            min_reward: None,
            length_ratio: 3.0,
        }
    }
}

impl AuditOptions {
    /// Whether a summary is a high-reward one.
    pub fn audits(&self, summary: &Summary) -> bool {
        match self.min_reward {
            Some(min) => summary.reward.is_some_and(|reward| reward >= min),
            None => summary.passed == Some(true),
        }
    }
}

/// A suspicious trajectory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// The trajectory.
    pub id: TrajectoryId,
    /// Its task.
    pub task_id: String,
    /// Its reward.
    pub reward: Option<f64>,
    /// What is suspicious about it.
    pub signs: Vec<Sign>,
}

/// The audit queue of the trajectories a filter selects: high-reward ones with at least one
/// trait, most traits first, then highest reward, then stored order. Also returns how many
/// were audited.
pub fn audit(
    store: &Store,
    filter: &Filter,
    options: &AuditOptions,
) -> StoreResult<(Vec<Finding>, usize)> {
    let summaries: Vec<Summary> = store
        .query(&Query {
            filter: filter.clone(),
            ..Query::default()
        })?
        .into_iter()
        .filter(|summary| options.audits(summary))
        .collect();
    let tasks = TaskIndex::load(store)?;
    let ids: Vec<TrajectoryId> = summaries.iter().map(|summary| summary.id).collect();
    let read = map_records(store, &ids, false, |trajectory| {
        (
            policy_length(&trajectory, 1.0),
            signs(&trajectory, tasks.of(&trajectory)),
        )
    })?;
    let mut lengths: Vec<usize> = read.iter().map(|(chars, _)| *chars).collect();
    lengths.sort_unstable();
    let median = median(&lengths);
    let mut queue: Vec<(u64, Finding)> = summaries
        .iter()
        .zip(read)
        .filter_map(|(summary, (chars, mut found))| {
            found.extend(length_sign(
                chars,
                median,
                options.length_ratio,
                lengths.len(),
            ));
            (!found.is_empty()).then(|| {
                let finding = Finding {
                    id: summary.id,
                    task_id: summary.task_id.clone(),
                    reward: summary.reward,
                    signs: found,
                };
                (summary.seq, finding)
            })
        })
        .collect();
    queue.sort_by(|(seq_a, a), (seq_b, b)| {
        b.signs
            .len()
            .cmp(&a.signs.len())
            .then(b.reward.unwrap_or(0.0).total_cmp(&a.reward.unwrap_or(0.0)))
            .then(seq_a.cmp(seq_b))
    });
    Ok((
        queue.into_iter().map(|(_, finding)| finding).collect(),
        ids.len(),
    ))
}

fn median(sorted: &[usize]) -> f64 {
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2] as f64,
        n => (sorted[n / 2 - 1] + sorted[n / 2]) as f64 / 2.0,
    }
}
