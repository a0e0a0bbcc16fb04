//! The Rollouts tab's list: a window of rows over a listing the engine holds (100k rows never
//! cross the channel), a cursor, and the preview of the selected trajectory.

use crate::curate::{AuditOptions, Finding};
use crate::engine::{Command, Listing, LoadedTrajectory, Tag, Window};
use crate::store::{Outcome as Verdict, SortKey, Summary};
use crate::trajectory::TrajectoryId;
use crate::tui::cycle::cycled;
use crate::tui::outcome::Outcome;
use crate::tui::tags::Tags;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

/// Rows fetched beyond each edge of the visible ones.
const MARGIN: usize = 100;

/// Most rows of a step listing loaded whole, so its groups can be counted.
const WHOLE_STEP_ROWS: usize = 4096;

/// The list's state.
#[derive(Clone, Debug, Default)]
pub struct ListState {
    /// Filter and order.
    pub listing: Listing,
    /// The listing's tag; windows of older listings are dropped.
    pub tag: Tag,
    /// Rows the listing selects; `None` while the engine is still counting.
    pub matching: Option<usize>,
    /// Index of the first loaded row.
    pub start: usize,
    /// The loaded rows.
    pub rows: Vec<Summary>,
    /// The selected row.
    pub cursor: usize,
    /// The first visible row.
    pub top: usize,
    /// Visible rows.
    pub height: usize,
    /// The window asked for and not yet answered.
    pub requested: Option<Range<usize>>,
    /// The previewed trajectory.
    pub preview: Option<Box<LoadedTrajectory>>,
    /// The preview request in flight.
    pub preview_tag: Tag,
    /// The trajectory the preview request is for.
    pub preview_id: Option<TrajectoryId>,
    /// Set while the list shows the reward-hacking audit queue of its filter.
    pub audit: Option<AuditView>,
    /// A trajectory the cursor moves to when the next window holds it (a remembered view
    /// whose rows moved).
    pub seek: Option<TrajectoryId>,
}

/// The audit queue the list shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AuditView {
    /// The findings, in queue order (empty until the engine answers).
    pub findings: Vec<Finding>,
    /// High-reward trajectories audited, once known.
    pub audited: Option<usize>,
}

impl AuditView {
    /// The finding of a trajectory.
    pub fn finding(&self, id: TrajectoryId) -> Option<&Finding> {
        self.findings.iter().find(|finding| finding.id == id)
    }
}

/// The groups of one step's rollouts, as the list shows them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepGroups {
    /// How many groups the step has.
    pub groups: usize,
    /// The groups whose samples all got the same reward.
    pub flat: BTreeSet<u64>,
}

impl ListState {
    /// Rows known to exist: the count, or the loaded ones while counting.
    pub fn known_rows(&self) -> usize {
        self.matching.unwrap_or(self.start + self.rows.len())
    }

    /// The summary at a row, if loaded.
    pub fn row(&self, index: usize) -> Option<&Summary> {
        self.rows.get(index.checked_sub(self.start)?)
    }

    /// The selected summary, if loaded.
    pub fn selected(&self) -> Option<&Summary> {
        self.row(self.cursor)
    }

    /// Whether the listing is one step of one run, nothing else filtered.
    fn is_step_listing(&self) -> bool {
        let filter = &self.listing.filter;
        let step_only = crate::store::Filter {
            run: filter.run.clone(),
            step: filter.step,
            ..crate::store::Filter::default()
        };
        filter.run.is_some() && filter.step.is_some() && *filter == step_only
    }

    /// A step's groups, when the listing is one step of one run (nothing else filtered) and
    /// every row is loaded (`receive` asks for a whole step of up to `WHOLE_STEP_ROWS`): how
    /// many, and which gave all their samples the same reward, so that GRPO learns nothing
    /// from them.
    pub fn step_groups(&self) -> Option<StepGroups> {
        let whole = self.start == 0 && self.matching == Some(self.rows.len());
        if !self.is_step_listing() || !whole {
            return None;
        }
        let mut rewards: BTreeMap<u64, Vec<Option<f64>>> = BTreeMap::new();
        for row in &self.rows {
            if let Some(group) = row.group {
                rewards.entry(group).or_default().push(row.reward);
            }
        }
        let flat = rewards
            .iter()
            .filter(|(_, rewards)| rewards.len() > 1 && rewards.iter().all(|r| *r == rewards[0]))
            .map(|(group, _)| *group)
            .collect();
        Some(StepGroups {
            groups: rewards.len(),
            flat,
        })
    }

    /// Starts a new listing: forgets the rows and asks for the first window (of the audit
    /// queue while auditing).
    pub fn relist(&mut self, listing: Listing, tags: &mut Tags) -> Command {
        self.relist_at(listing, 0, tags)
    }

    /// Starts a new listing with the cursor on row `cursor` (clamped to the rows the listing
    /// has once counted), asking for the window around it.
    pub fn relist_at(&mut self, listing: Listing, cursor: usize, tags: &mut Tags) -> Command {
        self.listing = listing;
        self.tag = tags.fresh();
        self.matching = None;
        self.start = 0;
        self.rows.clear();
        self.cursor = cursor;
        self.seek = None;
        self.top = cursor.saturating_sub(self.height / 2);
        self.preview = None;
        self.preview_id = None;
        let window = self.top.saturating_sub(MARGIN)..self.top + self.height + MARGIN;
        self.requested = Some(window.clone());
        match &mut self.audit {
            Some(audit) => {
                *audit = AuditView::default();
                Command::ListAudit {
                    tag: self.tag,
                    filter: self.listing.filter.clone(),
                    options: AuditOptions::default(),
                    window,
                }
            }
            None => Command::List {
                tag: self.tag,
                listing: self.listing.clone(),
                window,
            },
        }
    }

    /// Asks the engine to list the same listing again under the same tag, so its counts and
    /// rows catch up with the store (a run wrote rollouts) while the cursor stays; none
    /// while the audit queue is shown.
    pub fn recount(&mut self) -> Option<Command> {
        if self.audit.is_some() {
            return None;
        }
        let start = self.top.saturating_sub(MARGIN);
        let window = start..self.top + self.height + MARGIN;
        self.requested = Some(window.clone());
        Some(Command::List {
            tag: self.tag,
            listing: self.listing.clone(),
            window,
        })
    }

    /// Takes a window from the engine; returns the preview request it makes necessary.
    pub fn receive(&mut self, window: Window, tags: &mut Tags) -> Vec<Command> {
        if window.tag != self.tag {
            return Vec::new();
        }
        if window.matching.is_some() || self.matching.is_none() {
            self.matching = window.matching;
        }
        self.start = window.start;
        self.rows = window.rows;
        self.requested = None;
        if let Some(id) = self.seek.take()
            && let Some(position) = self.rows.iter().position(|row| row.id == id)
        {
            self.cursor = self.start + position;
        }
        let known = self.known_rows();
        self.cursor = self.cursor.min(known.saturating_sub(1));
        self.keep_cursor_visible();
        let mut commands = self.follow(tags);
        if let Some(window) = self.whole_step_window() {
            self.requested = Some(window.clone());
            commands.push(Command::Page {
                tag: self.tag,
                window,
            });
        }
        commands
    }

    /// The window of a whole step listing once it is counted, when not all of it is loaded
    /// yet and it has at most `WHOLE_STEP_ROWS` rows (its groups are counted on all of them).
    fn whole_step_window(&self) -> Option<Range<usize>> {
        let matching = self.matching?;
        let loaded = self.start == 0 && self.rows.len() == matching;
        let asked = self
            .requested
            .as_ref()
            .is_some_and(|asked| asked.start == 0 && asked.end >= matching);
        (self.is_step_listing() && !loaded && !asked && matching <= WHOLE_STEP_ROWS)
            .then_some(0..matching)
    }

    /// Replaces a row's summary (after its labels were saved).
    pub fn refresh_row(&mut self, summary: &Summary) {
        if let Some(row) = self.rows.iter_mut().find(|row| row.id == summary.id) {
            *row = summary.clone();
        }
    }

    /// Moves the cursor to a row (clamped), scrolling and fetching as needed.
    pub fn select(&mut self, index: usize, tags: &mut Tags) -> Vec<Command> {
        let known = self.known_rows();
        if known == 0 {
            return Vec::new();
        }
        self.cursor = index.min(known - 1);
        self.keep_cursor_visible();
        self.follow(tags)
    }

    /// Moves the cursor by `delta` rows.
    pub fn step(&mut self, delta: isize, tags: &mut Tags) -> Vec<Command> {
        let target = self.cursor.saturating_add_signed(delta);
        self.select(target, tags)
    }

    /// Sets the visible height (after a resize).
    pub fn set_height(&mut self, height: usize, tags: &mut Tags) -> Vec<Command> {
        self.height = height.max(1);
        self.keep_cursor_visible();
        self.follow(tags)
    }

    fn keep_cursor_visible(&mut self) {
        if self.cursor < self.top {
            self.top = self.cursor;
        } else if self.cursor >= self.top + self.height {
            self.top = self.cursor + 1 - self.height;
        }
        let known = self.known_rows();
        self.top = self.top.min(known.saturating_sub(self.height));
    }

    /// Asks for the rows in view when they are not loaded, and for the selected
    /// trajectory's preview when it changed.
    fn follow(&mut self, tags: &mut Tags) -> Vec<Command> {
        let mut commands = Vec::new();
        let visible = self.top..(self.top + self.height).min(self.known_rows());
        let loaded = self.start..self.start + self.rows.len();
        let covered = visible.start >= loaded.start && visible.end <= loaded.end;
        let asked = self
            .requested
            .as_ref()
            .is_some_and(|asked| visible.start >= asked.start && visible.end <= asked.end);
        if !covered && !asked && self.matching.is_some() {
            let window = self.top.saturating_sub(MARGIN)..self.top + self.height + MARGIN;
            self.requested = Some(window.clone());
            commands.push(Command::Page {
                tag: self.tag,
                window,
            });
        }
        if let Some(id) = self.selected().map(|summary| summary.id)
            && self.preview_id != Some(id)
        {
            self.preview_id = Some(id);
            self.preview_tag = tags.fresh();
            commands.push(Command::LoadTrajectory {
                tag: self.preview_tag,
                id,
            });
        }
        commands
    }

    /// The next sort key (and the listing that goes with it).
    pub fn next_sort(&self) -> Listing {
        let keys: Vec<SortKey> = <SortKey as strum::IntoEnumIterator>::iter().collect();
        let mut listing = self.listing.clone();
        listing.sort = cycled(&keys, self.listing.sort, true);
        listing.descending = matches!(listing.sort, SortKey::Reward | SortKey::Turns);
        listing
    }

    /// The listing with the outcome filter cycled: all → failures → passes → all.
    pub fn next_outcome(&self) -> Listing {
        let mut listing = self.listing.clone();
        listing.filter.outcome = match listing.filter.outcome {
            None => Some(Verdict::Fail),
            Some(Verdict::Fail) => Some(Verdict::Pass),
            Some(Verdict::Pass) => None,
        };
        listing
    }

    /// Handles a movement action.
    pub fn on_move(&mut self, action: crate::tui::action::Action, tags: &mut Tags) -> Outcome {
        use crate::tui::action::Action;
        let page = self.height.max(1) as isize;
        let commands = match action {
            Action::Down => self.step(1, tags),
            Action::Up => self.step(-1, tags),
            Action::PageDown => self.step(page, tags),
            Action::PageUp => self.step(-page, tags),
            Action::Top => self.select(0, tags),
            Action::Bottom => self.select(usize::MAX, tags),
            _ => return Outcome::Ignored,
        };
        Outcome::Commands(commands)
    }
}
