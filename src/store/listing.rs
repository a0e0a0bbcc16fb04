//! Whole listings for a viewer that shows a window at a time: the ids a query selects, in its
//! order, with the places of the unlabelled failures (the badcase queue), and the summaries
//! of the ids a window shows. A million rows travel as ids (≈ 18 bytes each), not summaries.

use super::handle::unexpected;
use super::wire::{Reply, Request};
use super::{ListedIds, LocalStore, Query, SortKey, Store, StoreResult, Summary};
use crate::trajectory::TrajectoryId;
use std::borrow::Cow;

impl LocalStore {
    /// The ids a query selects, in its order, with its unlabelled failures marked. In stored
    /// order only each row's id and failure are held while reading (a million summaries
    /// would take hundreds of MiB), and the listing rows answer it when the filter needs
    /// nothing else (`rows`); another order sorts the summaries.
    pub fn listed_ids(&self, query: &Query) -> StoreResult<ListedIds> {
        if query.sort != SortKey::Stored {
            return Ok(ListedIds::of(&self.query(query)?));
        }
        let mut rows = match self.listed_by_rows(query)? {
            Some(rows) => rows,
            None => {
                let enough = query.enough();
                let mut rows = Vec::new();
                self.each_match(&query.filter, |summary| {
                    rows.push((summary.id, summary.is_unlabelled_failure()));
                    enough.is_none_or(|enough| rows.len() < enough)
                })?;
                rows
            }
        };
        if query.descending {
            rows.reverse();
        }
        let window = query.window(rows.len());
        Ok(ListedIds::from_rows(rows.drain(window)))
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
