//! Filtering and sorting summaries, through the most selective index available.

use super::entry::Entry;
use super::summary::Summary;
use super::{LocalStore, SortKey, StoreResult, keys, postings};
use crate::trajectory::{ErrorKind, LabelStatus, TrajectoryId};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Ids that are at least this share of the store (one in `SCAN_SHARE`) are looked up by one
/// pass over the location index rather than one by one.
const SCAN_SHARE: usize = 8;

/// Pass or fail, as a filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The verifier accepted the answer.
    Pass,
    /// The verifier rejected the answer.
    Fail,
}

/// Which trajectories to list. Every field narrows; the default matches all.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Filter {
    /// Only these trajectories (a selection's chosen samples).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ids: Option<Vec<TrajectoryId>>,
    /// Produced by this run.
    pub run: Option<String>,
    /// Sampled at this policy version.
    pub step: Option<u64>,
    /// In this GRPO group.
    pub group: Option<u64>,
    /// Attempting this task.
    pub task: Option<String>,
    /// With a label of this kind.
    pub label: Option<ErrorKind>,
    /// With labels of this status only (with `label`, or any kind without it).
    pub label_status: Option<LabelStatus>,
    /// Passed or failed.
    pub outcome: Option<Outcome>,
    /// Failed and not yet confirmed-labelled: the badcase queue.
    pub unlabelled_failures: bool,
    /// Reward at least this.
    pub reward_min: Option<f64>,
    /// Reward at most this.
    pub reward_max: Option<f64>,
    /// Case-insensitive text found in the task id, question, run, stop reason or id.
    pub text: Option<String>,
    /// A full-text query over what was said (messages, tool calls, tool results), answered
    /// by the search index: words, `"a phrase"`, `tool:NAME`, `role:ROLE`, `task:ID`.
    pub full_text: Option<String>,
}

impl Filter {
    /// Whether a summary passes every condition but `full_text` and `ids` (which
    /// `LocalStore::query` answers through the search index and the location index).
    pub fn matches(&self, summary: &Summary) -> bool {
        let run_ok = self.run.as_ref().is_none_or(|run| &summary.run == run);
        let step_ok = self.step.is_none_or(|step| summary.step == Some(step));
        let group_ok = self.group.is_none_or(|group| summary.group == Some(group));
        let task_ok = self
            .task
            .as_ref()
            .is_none_or(|task| &summary.task_id == task);
        let label_ok = self.label_matches(summary);
        let outcome_ok = self.outcome_matches(summary.passed);
        let queue_ok = self.queue_matches(summary.is_unlabelled_failure());
        let min_ok = self
            .reward_min
            .is_none_or(|min| summary.reward.is_some_and(|reward| reward >= min));
        let max_ok = self
            .reward_max
            .is_none_or(|max| summary.reward.is_some_and(|reward| reward <= max));
        let text_ok = self
            .text
            .as_ref()
            .is_none_or(|text| text_matches(summary, text));
        run_ok
            && step_ok
            && group_ok
            && task_ok
            && label_ok
            && outcome_ok
            && queue_ok
            && min_ok
            && max_ok
            && text_ok
    }

    /// Whether a trajectory with this verdict passes the outcome condition.
    pub(super) fn outcome_matches(&self, passed: Option<bool>) -> bool {
        self.outcome
            .is_none_or(|outcome| passed == Some(outcome == Outcome::Pass))
    }

    /// Whether a trajectory that is (or is not) an unlabelled failure passes the badcase
    /// queue condition.
    pub(super) fn queue_matches(&self, unlabelled_failure: bool) -> bool {
        !self.unlabelled_failures || unlabelled_failure
    }

    fn label_matches(&self, summary: &Summary) -> bool {
        let bits = match self.label_status {
            Some(LabelStatus::Confirmed) => summary.confirmed,
            Some(LabelStatus::Suggested) => summary.suggested,
            None => summary.confirmed | summary.suggested,
        };
        match self.label {
            Some(kind) => bits & (1 << kind.index()) != 0,
            None => self.label_status.is_none() || bits != 0,
        }
    }

    /// Whether nothing is filtered.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// A short human description, e.g. `fail & label:calculation & run:grpo-0007`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(ids) = &self.ids {
            parts.push(format!("{} chosen", ids.len()));
        }
        if let Some(outcome) = self.outcome {
            parts.push(match outcome {
                Outcome::Pass => "pass".to_string(),
                Outcome::Fail => "fail".to_string(),
            });
        }
        if self.unlabelled_failures {
            parts.push("unlabelled failures".into());
        }
        if let Some(kind) = self.label {
            parts.push(format!("label:{kind}"));
        }
        if let Some(status) = self.label_status {
            parts.push(format!("{status:?}").to_lowercase());
        }
        if let Some(run) = &self.run {
            parts.push(format!("run:{run}"));
        }
        if let Some(step) = self.step {
            parts.push(format!("step:{step}"));
        }
        if let Some(group) = self.group {
            parts.push(format!("group:{group}"));
        }
        if let Some(task) = &self.task {
            parts.push(format!("task:{task}"));
        }
        if self.reward_min.is_some() || self.reward_max.is_some() {
            let min = self.reward_min.map_or(String::new(), |v| format!("{v}"));
            let max = self.reward_max.map_or(String::new(), |v| format!("{v}"));
            parts.push(format!("reward:{min}..{max}"));
        }
        if let Some(text) = &self.text {
            parts.push(format!("\"{text}\""));
        }
        if let Some(query) = &self.full_text {
            parts.push(format!("text:{query}"));
        }
        if parts.is_empty() {
            "all".into()
        } else {
            parts.join(" & ")
        }
    }
}

fn text_matches(summary: &Summary, text: &str) -> bool {
    let needle = text.to_lowercase();
    [
        &summary.task_id,
        &summary.question,
        &summary.run,
        &summary.stop,
    ]
    .iter()
    .any(|field| field.to_lowercase().contains(&needle))
        || summary.id.to_string().starts_with(&needle)
}

/// A filter, an order and a window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Query {
    /// Which trajectories.
    pub filter: Filter,
    /// In what order.
    pub sort: SortKey,
    /// Largest first.
    pub descending: bool,
    /// How many to skip.
    pub offset: usize,
    /// How many at most (all when `None`).
    pub limit: Option<usize>,
}

impl Query {
    /// How many matches in stored order make its window, when reading may stop there (in
    /// stored order, ascending, with a limit); `None` when every match must be read.
    pub fn enough(&self) -> Option<usize> {
        let stored_ascending = self.sort == SortKey::Stored && !self.descending;
        self.limit
            .filter(|_| stored_ascending)
            .map(|limit| self.offset.saturating_add(limit))
    }

    /// The rows of its window among `len` in order.
    pub fn window(&self, len: usize) -> std::ops::Range<usize> {
        let end = self
            .limit
            .map_or(len, |limit| self.offset.saturating_add(limit).min(len));
        self.offset.min(end)..end
    }
}

impl LocalStore {
    /// The ids of the trajectories a filter matches, in stored order.
    pub fn ids(&self, filter: &Filter) -> StoreResult<Vec<TrajectoryId>> {
        Ok(self
            .query(&Query {
                filter: filter.clone(),
                ..Query::default()
            })?
            .into_iter()
            .map(|summary| summary.id)
            .collect())
    }

    /// The summaries a query selects, in its order and window.
    pub fn query(&self, query: &Query) -> StoreResult<Vec<Summary>> {
        let enough = query.enough();
        let mut summaries = Vec::new();
        self.each_match(&query.filter, |summary| {
            summaries.push(summary);
            enough.is_none_or(|enough| summaries.len() < enough)
        })?;
        query.sort.sort(&mut summaries, query.descending);
        let window = query.window(summaries.len());
        Ok(summaries.drain(window).collect())
    }

    /// Hands `take` each summary the filter matches, in stored order, until it returns
    /// `false`.
    pub(super) fn each_match(
        &self,
        filter: &Filter,
        mut take: impl FnMut(Summary) -> bool,
    ) -> StoreResult<()> {
        let mut offer = |summary: Summary| !filter.matches(&summary) || take(summary);
        match self.candidates(filter)? {
            Some(seqs) => {
                for seq in seqs {
                    if let Some(summary) = self.summary_at(seq)?
                        && !offer(summary)
                    {
                        break;
                    }
                }
            }
            None => {
                for entry in self.db.scan_prefix([keys::SUMMARY]) {
                    let (_, value) = entry?;
                    if let Some(summary) = Summary::from_bytes(&value)
                        && !offer(summary)
                    {
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    /// Number of trajectories a filter selects.
    pub fn count(&self, filter: &Filter) -> StoreResult<usize> {
        if filter.is_empty() {
            return Ok(self.trajectory_count());
        }
        Ok(self
            .listed_ids(&Query {
                filter: filter.clone(),
                ..Query::default()
            })?
            .ids
            .len())
    }

    /// Sequence numbers from the narrowest index the filter can use, in stored order; `None`
    /// when no index applies and every summary must be read.
    pub(super) fn candidates(&self, filter: &Filter) -> StoreResult<Option<BTreeSet<u64>>> {
        let mut indexed = self.indexed_candidates(filter)?;
        if let Some(ids) = &filter.ids {
            indexed = Some(self.seqs_of(ids.clone(), indexed.as_ref())?);
        }
        let Some(query) = filter
            .full_text
            .as_deref()
            .filter(|query| !query.trim().is_empty())
        else {
            return Ok(indexed);
        };
        let found = self.search_text(query)?;
        Ok(Some(self.seqs_of(found, indexed.as_ref())?))
    }

    /// The sequence numbers of the stored trajectories among `ids` (those in `within` only,
    /// when given). The ids are looked up in key order: one by one when they are few, in one
    /// pass over the location index when they are many, so a common word's million hits
    /// cost a scan instead of a million lookups in random order.
    fn seqs_of(
        &self,
        mut ids: Vec<TrajectoryId>,
        within: Option<&BTreeSet<u64>>,
    ) -> StoreResult<BTreeSet<u64>> {
        ids.sort_unstable();
        ids.dedup();
        let wanted = |seq: &u64| within.is_none_or(|seqs| seqs.contains(seq));
        // Gathered in id order, then sorted once: a set built from a sorted run is filled
        // in one pass, where a million inserts in random order each search the tree.
        let mut seqs = Vec::new();
        if ids.len().saturating_mul(SCAN_SHARE) < self.trajectory_count() {
            for id in ids {
                if let Some(entry) = self.entry(id)? {
                    seqs.push(entry.seq);
                }
            }
            return Ok(seqs.into_iter().filter(wanted).collect());
        }
        let mut pending = ids.into_iter().peekable();
        for item in self.db.scan_prefix([keys::LOCATION]) {
            let (key, value) = item?;
            let Some(id) = TrajectoryId::from_bytes(&key[1..]) else {
                continue;
            };
            while pending.next_if(|&next| next < id).is_some() {}
            if pending.next_if_eq(&id).is_some() {
                seqs.push(Entry::stored(&value, id)?.seq);
            }
            if pending.peek().is_none() {
                break;
            }
        }
        Ok(seqs.into_iter().filter(wanted).collect())
    }

    /// Sequence numbers from the narrowest posting-list index the filter can use.
    fn indexed_candidates(&self, filter: &Filter) -> StoreResult<Option<BTreeSet<u64>>> {
        let prefix = if let Some(kind) = filter.label {
            keys::label_prefix(kind, filter.label_status)
        } else if let Some(run) = &filter.run {
            keys::run_prefix(run, filter.step)
        } else if let Some(task) = &filter.task {
            keys::text_prefix(keys::BY_TASK, task)
        } else if let Some(outcome) = filter.outcome {
            keys::outcome_prefix(Some(outcome == Outcome::Pass))
        } else if filter.unlabelled_failures {
            keys::outcome_prefix(Some(false))
        } else {
            return Ok(None);
        };
        self.posting_members(&prefix).map(Some)
    }

    /// The sequence numbers of every posting list under `prefix`, in stored order.
    pub(super) fn posting_members(&self, prefix: &[u8]) -> StoreResult<BTreeSet<u64>> {
        let mut seqs = BTreeSet::new();
        for item in self.db.scan_prefix(prefix) {
            let (key, value) = item?;
            seqs.extend(postings::members(&key, &value));
        }
        Ok(seqs)
    }
}
