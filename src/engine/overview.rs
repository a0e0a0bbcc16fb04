//! Counts over summaries for the Stats and Curate tabs: error kinds, outcomes per policy
//! version, and what a best-of-N selection would keep.

use crate::store::Summary;
use crate::trajectory::ErrorKind;
use std::collections::BTreeMap;

/// Labels of one error kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KindCount {
    /// Trajectories with a confirmed label of the kind.
    pub confirmed: usize,
    /// Trajectories with only a suggested label of the kind.
    pub suggested: usize,
}

/// Outcomes of the trajectories one policy version of a run sampled.
#[derive(Clone, Debug, PartialEq)]
pub struct VersionOutcome {
    /// The run (empty for imported trajectories without one).
    pub run: String,
    /// The policy version, when recorded.
    pub step: Option<u64>,
    /// Trajectories.
    pub total: usize,
    /// Of which passed.
    pub passed: usize,
    /// Mean reward over those with a reward.
    pub mean_reward: Option<f64>,
    /// Trajectories with a confirmed label of each kind (`ErrorKind::index` order).
    pub confirmed: [usize; 4],
}

impl VersionOutcome {
    /// Share that passed, 0 to 1.
    pub fn accuracy(&self) -> f64 {
        self.passed as f64 / self.total.max(1) as f64
    }
}

/// What a best-of-N rejection-sampling selection would keep: per task, the passing sample
/// with no confirmed error label and the highest reward (then PRM min, then fewest turns).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BestOfN {
    /// Tasks with at least one sample.
    pub tasks: usize,
    /// Samples considered.
    pub samples: usize,
    /// Tasks with a sample kept (one per task).
    pub kept: usize,
    /// Tasks with no passing sample.
    pub no_pass: usize,
    /// Tasks whose passing samples all carry a confirmed error label.
    pub excluded_by_labels: usize,
    /// Mean turns of the kept samples.
    pub mean_turns_kept: Option<f64>,
}

/// Everything the Stats and Curate tabs show.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Overview {
    /// Trajectories counted.
    pub trajectories: usize,
    /// Of which passed.
    pub passed: usize,
    /// Of which failed.
    pub failed: usize,
    /// Labels per error kind, in `ErrorKind::ALL` order.
    pub kinds: [KindCount; 4],
    /// Outcomes per run and policy version, in run then version order.
    pub versions: Vec<VersionOutcome>,
    /// The best-of-N preview.
    pub best_of_n: BestOfN,
}

impl Overview {
    /// Counts over a set of summaries.
    pub fn of(summaries: &[Summary]) -> Self {
        let mut overview = Self {
            trajectories: summaries.len(),
            ..Self::default()
        };
        let mut versions: BTreeMap<(String, Option<u64>), (VersionOutcome, f64, usize)> =
            BTreeMap::new();
        for summary in summaries {
            overview.passed += usize::from(summary.passed == Some(true));
            overview.failed += usize::from(summary.passed == Some(false));
            for kind in summary.confirmed_kinds() {
                overview.kinds[kind.index() as usize].confirmed += 1;
            }
            for kind in summary.suggested_kinds() {
                overview.kinds[kind.index() as usize].suggested += 1;
            }
            let (version, reward_sum, rewarded) = versions
                .entry((summary.run.clone(), summary.step))
                .or_insert_with(|| {
                    let outcome = VersionOutcome {
                        run: summary.run.clone(),
                        step: summary.step,
                        total: 0,
                        passed: 0,
                        mean_reward: None,
                        confirmed: [0; 4],
                    };
                    (outcome, 0.0, 0)
                });
            version.total += 1;
            version.passed += usize::from(summary.passed == Some(true));
            for kind in summary.confirmed_kinds() {
                version.confirmed[kind.index() as usize] += 1;
            }
            if let Some(reward) = summary.reward {
                *reward_sum += reward;
                *rewarded += 1;
            }
        }
        overview.versions = versions
            .into_values()
            .map(|(mut version, sum, count)| {
                version.mean_reward = (count > 0).then(|| sum / count as f64);
                version
            })
            .collect();
        overview.best_of_n = best_of_n(summaries);
        overview
    }

    /// The confirmed and suggested counts of one kind.
    pub fn kind(&self, kind: ErrorKind) -> KindCount {
        self.kinds[kind.index() as usize]
    }
}

/// The best-of-N preview over summaries grouped by task.
pub fn best_of_n(summaries: &[Summary]) -> BestOfN {
    let mut by_task: BTreeMap<&str, Vec<&Summary>> = BTreeMap::new();
    for summary in summaries {
        by_task
            .entry(summary.task_id.as_str())
            .or_default()
            .push(summary);
    }
    let mut preview = BestOfN {
        tasks: by_task.len(),
        samples: summaries.len(),
        ..BestOfN::default()
    };
    let mut kept_turns = 0usize;
    for samples in by_task.values() {
        let passing: Vec<&&Summary> = samples
            .iter()
            .filter(|summary| summary.passed == Some(true))
            .collect();
        let best = passing
            .iter()
            .filter(|summary| summary.confirmed == 0)
            .max_by(|a, b| {
                let reward = a.reward.unwrap_or(0.0).total_cmp(&b.reward.unwrap_or(0.0));
                let prm = a
                    .prm_min
                    .unwrap_or(0.0)
                    .total_cmp(&b.prm_min.unwrap_or(0.0));
                reward.then(prm).then(b.turns.cmp(&a.turns))
            });
        match best {
            Some(best) => {
                preview.kept += 1;
                kept_turns += best.turns as usize;
            }
            None if passing.is_empty() => preview.no_pass += 1,
            None => preview.excluded_by_labels += 1,
        }
    }
    preview.mean_turns_kept = (preview.kept > 0).then(|| kept_turns as f64 / preview.kept as f64);
    preview
}
