//! Rejection-sampling selection (best of N): per task, from the stored samples, keep the best
//! by verifier → PRM → length, leave out samples with a confirmed error label (optionally
//! keep those a person corrected), drop duplicate completions, cap per task and balance by
//! difficulty; with a preview of the counts before anything is written.

mod rules;

pub use rules::{CORRECTED_BY, Candidate, SelectionRules};

use super::tasks::TaskIndex;
use crate::store::{Filter, Query, Store, StoreError, Summary};
use crate::trajectory::{Role, Trajectory, TrajectoryId};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a selection keeps and leaves out.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SelectionPreview {
    /// Samples considered (the filter's trajectories).
    pub samples: usize,
    /// Tasks they attempt.
    pub tasks: usize,
    /// Tasks with at least one sample kept.
    pub tasks_kept: usize,
    /// Samples kept.
    pub samples_kept: usize,
    /// Tasks with no passing (or corrected) sample.
    pub tasks_no_pass: usize,
    /// Tasks whose passing samples all carry a confirmed error label.
    pub tasks_excluded_by_labels: usize,
    /// Passing samples left out for a confirmed error label.
    pub samples_excluded_by_labels: usize,
    /// Tasks whose passing samples all fall below the PRM threshold.
    pub tasks_below_prm: usize,
    /// Passing samples left out for a process score below the threshold.
    pub samples_below_prm: usize,
    /// Samples left out as duplicates of a kept completion.
    pub duplicates: usize,
    /// Eligible samples beyond the per-task cap.
    pub capped: usize,
    /// Tasks left out to balance difficulty levels.
    pub dropped_by_balance: usize,
    /// Kept samples a person corrected.
    pub corrected: usize,
    /// Kept tasks per difficulty level (`None`: no level).
    pub kept_by_difficulty: Vec<(Option<u32>, usize)>,
    /// Mean assistant turns of the kept samples.
    pub mean_turns_kept: Option<f64>,
}

/// The samples kept, best first within each task, tasks in id order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Selection {
    /// The kept samples' summaries.
    pub kept: Vec<Summary>,
    /// The counts.
    pub preview: SelectionPreview,
}

impl Selection {
    /// The kept trajectories' ids, in order.
    pub fn ids(&self) -> Vec<TrajectoryId> {
        self.kept.iter().map(|summary| summary.id).collect()
    }
}

/// Selects from the trajectories a filter picks in a store.
pub fn select(store: &Store, filter: &Filter, rules: &SelectionRules) -> anyhow::Result<Selection> {
    let summaries = store.query(&Query {
        filter: filter.clone(),
        ..Query::default()
    })?;
    let tasks = TaskIndex::load(store)?;
    select_from(&summaries, &tasks, rules, &mut |id| {
        store
            .get_without_trace(id)?
            .ok_or_else(|| StoreError::NotFound(id.to_string()).into())
    })
}

/// Selects from summaries; `load` reads a record when a rule needs one (corrected samples,
/// duplicates within a task).
pub fn select_from(
    summaries: &[Summary],
    tasks: &TaskIndex,
    rules: &SelectionRules,
    load: &mut dyn FnMut(TrajectoryId) -> anyhow::Result<Trajectory>,
) -> anyhow::Result<Selection> {
    let mut by_task: BTreeMap<String, Vec<&Summary>> = BTreeMap::new();
    for summary in summaries {
        let key = if summary.task_id.is_empty() {
            format!("(no task) {}", summary.id)
        } else {
            summary.task_id.clone()
        };
        by_task.entry(key).or_default().push(summary);
    }
    let mut preview = SelectionPreview {
        samples: summaries.len(),
        tasks: by_task.len(),
        ..SelectionPreview::default()
    };
    let mut kept_tasks: Vec<(Option<u32>, Vec<Candidate<'_>>)> = Vec::new();
    for (task, samples) in &by_task {
        let kept = select_task(samples, rules, load, &mut preview)?;
        if !kept.is_empty() {
            kept_tasks.push((tasks.difficulty(task), kept));
        }
    }
    if rules.balance_difficulty {
        balance(&mut kept_tasks, rules, &mut preview);
    }
    let mut by_level: BTreeMap<Option<u32>, usize> = BTreeMap::new();
    let mut kept = Vec::new();
    for (level, candidates) in kept_tasks {
        *by_level.entry(level).or_default() += 1;
        preview.corrected += candidates.iter().filter(|c| c.corrected).count();
        kept.extend(candidates.into_iter().map(|c| c.summary.clone()));
    }
    preview.tasks_kept = by_level.values().sum();
    preview.samples_kept = kept.len();
    preview.kept_by_difficulty = by_level.into_iter().collect();
    preview.mean_turns_kept = (!kept.is_empty())
        .then(|| kept.iter().map(|s| f64::from(s.turns)).sum::<f64>() / kept.len() as f64);
    Ok(Selection { kept, preview })
}

/// The kept samples of one task, counting what is left out.
fn select_task<'a>(
    samples: &[&'a Summary],
    rules: &SelectionRules,
    load: &mut dyn FnMut(TrajectoryId) -> anyhow::Result<Trajectory>,
    preview: &mut SelectionPreview,
) -> anyhow::Result<Vec<Candidate<'a>>> {
    let mut eligible = Vec::new();
    let mut any_pass = false;
    let mut below_prm = false;
    for &summary in samples {
        let passes = summary.passed == Some(true);
        let labelled = rules.excluded_by_labels(summary);
        let supported = rules
            .min_prm
            .is_none_or(|min| summary.prm_min.is_some_and(|score| score >= min));
        if passes && !supported {
            preview.samples_below_prm += 1;
            below_prm = true;
        }
        let normally = (passes || !rules.require_pass) && supported && !labelled;
        let corrected = rules.include_corrected
            && !normally
            && load(summary.id)?.extra.contains_key(CORRECTED_BY);
        any_pass |= passes || corrected;
        if passes && labelled && !corrected {
            preview.samples_excluded_by_labels += 1;
        }
        if normally || corrected {
            eligible.push(Candidate { summary, corrected });
        }
    }
    if eligible.is_empty() {
        if !any_pass && rules.require_pass {
            preview.tasks_no_pass += 1;
        } else if below_prm {
            preview.tasks_below_prm += 1;
        } else {
            preview.tasks_excluded_by_labels += 1;
        }
        return Ok(Vec::new());
    }
    eligible.sort_by(|a, b| rules.rank(a, b));
    let mut kept: Vec<Candidate<'a>> = Vec::new();
    let mut completions: Vec<String> = Vec::new();
    for candidate in eligible {
        if kept.len() >= rules.per_task {
            preview.capped += 1;
            continue;
        }
        if rules.dedup && rules.per_task > 1 {
            let completion = completion_key(&load(candidate.summary.id)?);
            if completions.contains(&completion) {
                preview.duplicates += 1;
                continue;
            }
            completions.push(completion);
        }
        kept.push(candidate);
    }
    Ok(kept)
}

/// What identifies a completion: everything after the prompt, without ids.
fn completion_key(trajectory: &Trajectory) -> String {
    let start = trajectory.prompt_messages().len();
    let parts: Vec<serde_json::Value> = trajectory.messages[start..]
        .iter()
        .map(|message| {
            let calls: Vec<serde_json::Value> = message
                .tool_calls
                .iter()
                .map(|call| {
                    let arguments = call
                        .parsed_arguments()
                        .unwrap_or_else(|| serde_json::Value::String(call.arguments.clone()));
                    serde_json::json!([call.name, arguments])
                })
                .collect();
            let role = if message.role == Role::Tool {
                "tool"
            } else {
                message.role.as_str()
            };
            serde_json::json!([role, message.content.trim(), message.reasoning, calls])
        })
        .collect();
    serde_json::Value::Array(parts).to_string()
}

/// Keeps as many tasks per difficulty level as the smallest level has, the best ones.
fn balance(
    kept: &mut Vec<(Option<u32>, Vec<Candidate<'_>>)>,
    rules: &SelectionRules,
    preview: &mut SelectionPreview,
) {
    let mut per_level: BTreeMap<Option<u32>, Vec<usize>> = BTreeMap::new();
    for (index, (level, _)) in kept.iter().enumerate() {
        per_level.entry(*level).or_default().push(index);
    }
    let Some(smallest) = per_level.values().map(Vec::len).min() else {
        return;
    };
    let mut keep = vec![false; kept.len()];
    for indexes in per_level.values_mut() {
        indexes.sort_by(|&a, &b| rules.rank(&kept[a].1[0], &kept[b].1[0]));
        for &index in indexes.iter().take(smallest) {
            keep[index] = true;
        }
    }
    let mut index = 0;
    kept.retain(|_| {
        let kept_it = keep[index];
        index += 1;
        if !kept_it {
            preview.dropped_by_balance += 1;
        }
        kept_it
    });
}
