//! The worker's listing: read whole by id, windows of it sent with their summaries, and
//! where a trajectory sits in it.

use super::Worker;
use crate::engine::command::{Listing, Tag};
use crate::engine::update::{Update, Window};
use crate::store::Query;
use crate::trajectory::TrajectoryId;
use anyhow::Context;
use std::ops::Range;

/// The listing the worker holds: every row of the last `List`, in order, by id (a window's
/// summaries are read when it is asked for, so a million rows cost megabytes, not hundreds).
pub(super) struct Held {
    /// The listing.
    pub(super) tag: Tag,
    /// Its rows, in order.
    pub(super) ids: Vec<TrajectoryId>,
}

impl Worker {
    /// Sends the first window fast when the order is the stored one (the store stops reading
    /// once it has enough), then reads the whole listing by id, counts it and sends the
    /// window again.
    pub(super) fn list(
        &mut self,
        tag: Tag,
        listing: &Listing,
        window: Range<usize>,
    ) -> anyhow::Result<()> {
        let query = |offset, limit| Query {
            filter: listing.filter.clone(),
            sort: listing.sort,
            descending: listing.descending,
            offset,
            limit,
        };
        self.held = None;
        let stored_order = listing.sort == crate::store::SortKey::Stored && !listing.descending;
        if stored_order && !window.is_empty() {
            let rows = self.store.query(&query(window.start, Some(window.len())))?;
            self.send(Update::Window(Window {
                tag,
                start: window.start,
                rows,
                matching: None,
                stored: self.stored,
            }));
        }
        let listed = self.store.listed_ids(&query(0, None))?;
        self.stored = Some(if listing.filter.is_empty() {
            listed.ids.len()
        } else {
            self.store.trajectory_count()?
        });
        let entries = listed
            .unlabelled_failures
            .iter()
            .filter_map(|&row| Some((row as usize, *listed.ids.get(row as usize)?)))
            .collect();
        self.held = Some(Held {
            tag,
            ids: listed.ids,
        });
        self.page(tag, window)?;
        self.send(Update::Queue { tag, entries });
        Ok(())
    }

    fn held(&self, tag: Tag) -> anyhow::Result<&Held> {
        self.held
            .as_ref()
            .filter(|held| held.tag == tag)
            .context("that listing is no longer held; it was replaced by a newer one")
    }

    /// Sends a window of the held listing; it ends before a row deleted since the listing
    /// was read, so every row stays at its place until the listing is read again.
    pub(super) fn page(&self, tag: Tag, window: Range<usize>) -> anyhow::Result<()> {
        let held = self.held(tag)?;
        let end = window.end.min(held.ids.len());
        let start = window.start.min(end);
        let ids = &held.ids[start..end];
        let mut rows = self.store.summaries_of(ids)?;
        let aligned = rows
            .iter()
            .zip(ids)
            .take_while(|(row, id)| row.id == **id)
            .count();
        rows.truncate(aligned);
        self.send(Update::Window(Window {
            tag,
            start,
            rows,
            matching: Some(held.ids.len()),
            stored: self.stored,
        }));
        Ok(())
    }

    pub(super) fn locate(&self, tag: Tag, listing: Tag, prefix: &str) -> anyhow::Result<()> {
        let id = self.store.resolve(prefix)?;
        let index = self
            .held
            .as_ref()
            .filter(|held| held.tag == listing)
            .and_then(|held| held.ids.iter().position(|&held_id| held_id == id));
        self.send(Update::Located { tag, id, index });
        Ok(())
    }
}
