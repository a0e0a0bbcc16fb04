//! Whole listings for a viewer that shows a window at a time: the ids a query selects, in its
//! order, with the places of the unlabelled failures (the badcase queue), and the summaries
//! of the ids a window shows. A million rows travel as ids (≈ 18 bytes each), not summaries.

use super::handle::unexpected;
use super::wire::{Reply, Request};
use super::{LocalStore, Query, Store, StoreResult, Summary};
use crate::trajectory::TrajectoryId;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// The rows of a listing, by id, and which of them are unlabelled failures.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListedIds {
    /// Every row's trajectory, in the query's order (its offset and limit applied).
    pub ids: Vec<TrajectoryId>,
    /// Rows (positions in `ids`) that failed and carry no confirmed label, in order.
    pub unlabelled_failures: Vec<u32>,
}

impl ListedIds {
    /// The listing of these summaries, in their order.
    pub fn of(summaries: &[Summary]) -> Self {
        Self {
            ids: summaries.iter().map(|summary| summary.id).collect(),
            unlabelled_failures: summaries
                .iter()
                .enumerate()
                .filter(|(_, summary)| summary.is_unlabelled_failure())
                .map(|(row, _)| row as u32)
                .collect(),
        }
    }
}

impl LocalStore {
    /// The ids a query selects, in its order, with its unlabelled failures marked.
    pub fn listed_ids(&self, query: &Query) -> StoreResult<ListedIds> {
        Ok(ListedIds::of(&self.query(query)?))
    }

    /// The summaries of these trajectories, in the order given (ids not stored are skipped).
    pub fn summaries_of(&self, ids: &[TrajectoryId]) -> StoreResult<Vec<Summary>> {
        let mut summaries = Vec::with_capacity(ids.len());
        for &id in ids {
            if let Some(summary) = self.summary_of(id)? {
                summaries.push(summary);
            }
        }
        Ok(summaries)
    }
}

impl Store {
    /// The ids a query selects, in its order, with its unlabelled failures marked: a whole
    /// listing, cheap to send and hold at a million rows.
    pub fn listed_ids(&self, query: &Query) -> StoreResult<ListedIds> {
        match self.call(Request::ListedIds(Cow::Borrowed(query)))? {
            Reply::Listed(listed) => Ok(listed),
            other => Err(unexpected(&other)),
        }
    }

    /// The summaries of these trajectories, in the order given (ids not stored are skipped).
    pub fn summaries_of(&self, ids: &[TrajectoryId]) -> StoreResult<Vec<Summary>> {
        match self.call(Request::SummariesOf(Cow::Borrowed(ids)))? {
            Reply::Summaries(summaries) => Ok(summaries),
            other => Err(unexpected(&other)),
        }
    }
}
