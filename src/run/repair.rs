//! The badcase loop's repair stage: each labelled failure chosen by `curate::repair` is
//! resampled from the turn of its first wrong step by the policy that wrote it (the fork
//! machinery keeps the correct turns before it), the continuations are verified, labelled
//! by the suggestion rules and selected by the loop's own rules, and the kept ones become
//! SFT data beside best-of-N's, each recorded with the label that placed its repair.

use super::RunContext;
use super::fork_job::{ForkJob, ForkTurns, load_parents, run_fork_job};
use super::rollout_job::JobPolicy;
use crate::curate::repair::{LabelSource, Repair, RepairScope, RepairTarget, repair_targets};
use crate::curate::suggest::write_suggestions;
use crate::curate::{SelectionRules, select};
use crate::store::{Filter, Outcome};
pub use crate::trajectory::RepairConfig;
use crate::trajectory::TrajectoryId;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

impl Default for RepairConfig {
    fn default() -> Self {
        Self {
            samples: 4,
            scope: RepairScope::Unsolved,
        }
    }
}

/// What a repair stage did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RepairOutcome {
    /// The rollout run holding the continuations (none when nothing was repaired).
    pub run: Option<String>,
    /// Failures resampled (one per task at most).
    pub failures: usize,
    /// Failures whose error a person's label placed.
    pub by_hand: usize,
    /// Continuations sampled.
    pub continuations: usize,
    /// Continuations the verifier passed.
    pub passed: usize,
    /// The continuations kept as training data, with the labels behind them.
    pub repairs: Vec<Repair>,
}

impl RepairOutcome {
    /// Tasks with at least one repaired sample kept.
    pub fn tasks(&self) -> usize {
        let tasks: BTreeSet<&str> = self
            .repairs
            .iter()
            .map(|repair| repair.task_id.as_str())
            .collect();
        tasks.len()
    }
}

/// What a repair stage starts from.
pub struct RepairRequest<'a> {
    /// The badcase pass whose labelled failures are repaired.
    pub rollout_run: &'a str,
    /// Tasks the selection already kept a sample of.
    pub solved: &'a BTreeSet<String>,
    /// The repair settings.
    pub config: &'a RepairConfig,
    /// The selection's rules, applied to the continuations too.
    pub rules: &'a SelectionRules,
    /// Seed of the continuations' samplers.
    pub seed: u64,
}

/// Repairs the labelled failures of a badcase pass; `on_progress` hears forks done of all.
pub fn run_repair(
    context: &RunContext,
    request: &RepairRequest,
    policy: JobPolicy<'_>,
    on_progress: &mut dyn FnMut(usize, usize),
) -> anyhow::Result<RepairOutcome> {
    let store = &context.store;
    if request.config.samples == 0 {
        return Ok(RepairOutcome::default());
    }
    let failures = store.ids(&Filter {
        run: Some(request.rollout_run.to_string()),
        outcome: Some(Outcome::Fail),
        ..Filter::default()
    })?;
    let mut labelled = Vec::new();
    for id in failures {
        if let Some(trajectory) = store.get_without_trace(id)?
            && !trajectory.labels.is_empty()
        {
            labelled.push(trajectory);
        }
    }
    let none = BTreeSet::new();
    let skip = match request.config.scope {
        RepairScope::Unsolved => request.solved,
        RepairScope::All => &none,
    };
    let targets = repair_targets(&labelled, skip);
    drop(labelled);
    if targets.is_empty() {
        return Ok(RepairOutcome::default());
    }
    let ids: Vec<TrajectoryId> = targets.iter().map(|target| target.failure).collect();
    let parents = load_parents(store, &ids)?;
    let job = ForkJob {
        policy_version: parents.first().and_then(|parent| parent.policy_version),
        parents,
        turns: ForkTurns::Each(targets.iter().map(|target| target.turn).collect()),
        edits: Vec::new(),
        n: request.config.samples,
        seed: request.seed,
        temperature: None,
    };
    let forked = run_fork_job(context, &job, policy, on_progress)?;
    let children: BTreeMap<TrajectoryId, &RepairTarget> = forked
        .parents
        .iter()
        .zip(&targets)
        .flat_map(|(parent, target)| {
            parent
                .forks
                .iter()
                .flat_map(move |fork| fork.children.iter().map(move |&child| (child, target)))
        })
        .collect();
    let passed = forked
        .parents
        .iter()
        .flat_map(|parent| &parent.forks)
        .map(|fork| fork.success.passed)
        .sum();
    let child_ids: Vec<TrajectoryId> = children.keys().copied().collect();
    write_suggestions(store, &child_ids, false)?;
    let kept = select(
        store,
        &Filter {
            run: Some(forked.run.clone()),
            ..Filter::default()
        },
        request.rules,
    )?;
    let repairs = kept
        .kept
        .iter()
        .filter_map(|summary| {
            let target = children.get(&summary.id)?;
            Some(Repair::of(target, summary.id))
        })
        .collect();
    Ok(RepairOutcome {
        run: Some(forked.run),
        failures: targets.len(),
        by_hand: targets
            .iter()
            .filter(|target| LabelSource::of(&target.label) == LabelSource::Hand)
            .count(),
        continuations: child_ids.len(),
        passed,
        repairs,
    })
}
