//! The Runs tab's step cursor: a step among the selected run's metrics rows, moved with
//! `←`/`→`, whose values the footer prints and whose rollouts `enter` opens grouped by GRPO
//! group. Until the user moves it, it stays on the newest step as rows arrive.

use crate::engine::Listing;
use crate::run::step_rollouts;
use crate::store::{Filter, SortKey};
use crate::trajectory::{MetricsRow, RunInfo};

/// Where the cursor is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StepCursor {
    /// On the newest row, following new rows as they arrive (`enter` opens the whole run).
    #[default]
    Latest,
    /// On the row of this step, put there with `←`/`→`.
    At(u64),
}

impl StepCursor {
    /// The row the cursor is on: the newest, or the held row of its step (when that step's
    /// row is gone, the one before it, or the first row).
    pub fn row<'a>(&self, rows: &'a [MetricsRow]) -> Option<&'a MetricsRow> {
        match self {
            Self::Latest => rows.last(),
            Self::At(step) => rows.get(held_index(rows, *step)),
        }
    }

    /// The row the user put the cursor on, once they moved it (charts mark its step).
    pub fn marked<'a>(&self, rows: &'a [MetricsRow]) -> Option<&'a MetricsRow> {
        match self {
            Self::Latest => None,
            Self::At(_) => self.row(rows),
        }
    }

    /// The cursor moved `by` rows (negative: earlier); moving past the newest row goes back
    /// to following it, and the first row holds the cursor.
    pub fn moved(self, rows: &[MetricsRow], by: isize) -> Self {
        let Some(last) = rows.len().checked_sub(1) else {
            return Self::Latest;
        };
        let index = match self {
            Self::Latest => last,
            Self::At(step) => held_index(rows, step),
        };
        let target = index.saturating_add_signed(by);
        if by > 0 && target > last {
            return Self::Latest;
        }
        Self::At(rows[target.min(last)].step)
    }

    /// What `enter` lists for `run`: once the user moved the cursor, the rollouts behind its
    /// step grouped by GRPO group (by run, step, group and sample); else the whole run's,
    /// newest first.
    pub fn listing(&self, run: &RunInfo, rows: &[MetricsRow]) -> Listing {
        match self
            .marked(rows)
            .and_then(|row| step_rollouts(run, row.step))
        {
            Some(filter) => Listing {
                filter,
                sort: SortKey::Step,
                descending: false,
            },
            None => Listing {
                filter: Filter {
                    run: Some(run.id.clone()),
                    ..Filter::default()
                },
                sort: SortKey::Step,
                descending: true,
            },
        }
    }
}

/// The index of a step's row, or of the row before it when it is gone (the first row when
/// none is before it).
fn held_index(rows: &[MetricsRow], step: u64) -> usize {
    match rows.binary_search_by_key(&step, |row| row.step) {
        Ok(index) => index,
        Err(index) => index.saturating_sub(1),
    }
}
