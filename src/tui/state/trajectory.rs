//! The trajectory screen's state: the open trajectory, its sections, the current section,
//! the scroll of the whole conversation (or of one turn, `v`), and the token view's cursor.

use crate::engine::{LoadedTrajectory, Tag};
use crate::store::TextHits;
use crate::trajectory::{Label, TrajectoryId};
use crate::tui::action::Action;
use crate::tui::annotate;
use crate::tui::content::{Section, SectionContent, TaskLines, fold_blocks};
use crate::tui::highlight::Highlighter;
use crate::tui::outcome::Outcome;
use crate::tui::rich::{TextLine, Tone};
use crate::tui::search_hits;
pub use crate::tui::state::open_trajectory::OpenTrajectory;
use crate::tui::state::transcript::{Place, Transcript, laid_out};
use crate::tui::token_text::TokenLayout;
use std::sync::Arc;

mod scroll;
mod tokens;

/// What the token view shades tokens by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Heat {
    /// The sampling log-probability (surprise).
    #[default]
    LogProb,
    /// The sampling distribution's entropy.
    Entropy,
}

/// The token view's cursor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TokenCursor {
    /// The selected token.
    pub index: usize,
    /// What tokens are shaded by.
    pub heat: Heat,
}

/// The trajectory screen's state.
#[derive(Clone, Debug, Default)]
pub struct TrajectoryState {
    /// The trajectory shown.
    pub open: Option<Box<OpenTrajectory>>,
    /// The load in flight.
    pub tag: Tag,
    /// The trajectory being loaded.
    pub loading: Option<TrajectoryId>,
    /// Whether it opens at the turn the label keys target (its first low-PRM turn) rather
    /// than at its first turn.
    pub at_focus: bool,
    /// Whether the load is the open trajectory read again, to show at the same place.
    pub reloading: bool,
    /// The step to open the loading trajectory at, when asked for one.
    pub at_step: Option<usize>,
    /// The current section.
    pub section: usize,
    /// The first row shown of the section.
    pub scroll: usize,
    /// The first column shown of the section's code lines (prose wraps instead).
    pub across: usize,
    /// The current section laid out at the pane's width: prose wrapped, code kept whole.
    pub rows: Vec<TextLine>,
    /// The width, in cells, the rows are laid out for (0 until measured).
    pub columns: usize,
    /// The token view, when shown.
    pub tokens: Option<TokenCursor>,
    /// How the token view lays the trace out at the pane's width (`rollouts` keeps it
    /// fitted).
    pub token_layout: TokenLayout,
    /// The sections (by position) the list's search matched, in order; empty without one.
    pub hits: Vec<usize>,
    /// Whether reasoning blocks are shown whole (`z`); folded to a line otherwise.
    pub unfolded: bool,
    /// Whether the pane shows one turn (`v`) rather than the whole conversation.
    pub per_turn: bool,
    /// Lines of each prompt message shown before the rest folds (`:fold N`).
    pub task_lines: TaskLines,
    /// The whole conversation's scroll and laid-out sections.
    pub transcript: Transcript,
    /// Rows the whole conversation's pane shows (0 until measured).
    pub page: usize,
    /// Highlights sections' code blocks as they are built (shared with the rollouts tab;
    /// loaded when the first trajectory opens).
    highlighter: Option<Arc<Highlighter>>,
    /// The search whose words are marked in sections as they are built.
    marks: Option<TextHits>,
}

impl TrajectoryState {
    /// Starts loading a trajectory (the screen shows it when it arrives), to open at its
    /// first turn or, `at_focus`, at the turn the label keys target.
    pub fn start_loading(&mut self, id: TrajectoryId, tag: Tag, at_focus: bool) {
        self.loading = Some(id);
        self.tag = tag;
        self.at_focus = at_focus;
        self.reloading = false;
    }

    /// Takes a loaded trajectory if it is the one awaited; opens it at its first step.
    pub fn receive(
        &mut self,
        tag: Tag,
        loaded: &LoadedTrajectory,
        highlighter: &Arc<Highlighter>,
        blind: bool,
    ) -> bool {
        if tag != self.tag || self.loading != Some(loaded.trajectory.id) {
            return false;
        }
        let steps = loaded.trajectory.steps();
        let sections = crate::tui::outline::outline(&loaded.trajectory, &steps);
        let again = self.reloading && self.id() == Some(loaded.trajectory.id);
        self.transcript.reset();
        if again {
            self.section = self.section.min(sections.len().saturating_sub(1));
        } else if let Some(step) = self.at_step.take() {
            self.section = (step + 1).min(sections.len().saturating_sub(1));
            self.scroll = 0;
            self.across = 0;
        } else {
            let focus = annotate::focus_step(&loaded.trajectory, blind).filter(|_| self.at_focus);
            let fork = crate::tui::fork_lines::fork_step(&loaded.trajectory).filter(|_| !blind);
            self.section = focus
                .or(fork)
                .map_or(usize::from(sections.len() > 2), |step| step + 1);
            self.scroll = 0;
            self.across = 0;
        }
        self.tokens = self.tokens.map(|cursor| TokenCursor { index: 0, ..cursor });
        self.loading = None;
        self.hits.clear();
        self.marks = None;
        self.highlighter = Some(Arc::clone(highlighter));
        self.open = Some(Box::new(OpenTrajectory {
            loaded: loaded.clone(),
            sections,
            steps,
            blind,
            task_lines: self.task_lines,
        }));
        match again {
            true => self.lay_out(),
            false => self.go_to(self.section),
        }
        true
    }

    /// Marks a search's hits in the open trajectory and goes to the first of them.
    pub fn receive_hits(&mut self, id: TrajectoryId, hits: &TextHits) {
        let Some(open) = self.open.as_mut().filter(|open| open.trajectory().id == id) else {
            return;
        };
        // Sections built so far are marked now, the others as they are built.
        let marked = search_hits::mark(&mut open.sections, hits);
        self.marks = Some(hits.clone());
        self.transcript.reset();
        let mut sections =
            search_hits::sections_of_messages(open.trajectory(), &open.sections, &hits.messages);
        sections.extend(marked);
        sections.sort_unstable();
        sections.dedup();
        self.hits = sections;
        match self.hits.first() {
            Some(&first) if !self.hits.contains(&self.section) => self.go_to_hit(first),
            _ => self.lay_out(),
        }
    }

    /// Opens a hit's section with its first marked row in view, a few rows of context
    /// above it.
    fn go_to_hit(&mut self, section: usize) {
        self.go_to(section);
        let is_hit = |row: &TextLine| row.pieces.iter().any(|piece| piece.tone == Tone::Hit);
        if self.per_turn {
            let first = self.rows.iter().position(is_hit).unwrap_or(0);
            self.scroll = first.saturating_sub(HIT_CONTEXT_ROWS);
            return;
        }
        let page = self.page;
        self.with_source(|transcript, source| {
            let first = Place { section, row: 0 };
            transcript.forward(source, first, 0);
            let row = transcript
                .laid(section)
                .and_then(|rows| rows.iter().position(is_hit))
                .map_or(0, |row| row + 1);
            let top = transcript.backward(source, Place { section, row }, HIT_CONTEXT_ROWS);
            transcript.scroll_to(source, top.max(first), page);
        });
    }

    /// Goes to the next (or previous) hit section, wrapping around; says which it is.
    fn step_hits(&mut self, forward: bool) -> Outcome {
        if self.hits.is_empty() {
            return Outcome::Notice("no search hits here: `/` searches what was said".into());
        }
        let count = self.hits.len();
        let position = if forward {
            self.hits
                .iter()
                .position(|&hit| hit > self.section)
                .unwrap_or(0)
        } else {
            self.hits
                .iter()
                .rposition(|&hit| hit < self.section)
                .unwrap_or(count - 1)
        };
        self.go_to_hit(self.hits[position]);
        Outcome::Notice(format!("search hit {} of {count}", position + 1))
    }

    /// Folds prompt messages after `task_lines` lines, in the open trajectory too.
    pub fn set_task_lines(&mut self, task_lines: TaskLines) {
        self.task_lines = task_lines;
        if let Some(open) = &mut self.open {
            open.set_task_lines(task_lines);
            self.transcript.reset();
            self.lay_out();
        }
    }

    /// Lays the pane out again when its width (in cells) or height (in rows) changed.
    pub fn fit(&mut self, columns: usize, rows: usize) {
        if (columns, rows) != (self.columns, self.page) {
            self.columns = columns;
            self.page = rows;
            self.lay_out();
        }
    }

    /// Lays out what the pane shows: the current turn, or the whole conversation's rows in
    /// view.
    fn lay_out(&mut self) {
        if !self.per_turn {
            let page = self.page;
            self.with_source(|transcript, source| transcript.refresh(source, page));
            return;
        }
        if let (Some(open), Some(highlighter)) = (&mut self.open, &self.highlighter) {
            open.build(self.section, highlighter, self.marks.as_ref());
        }
        let lines = self
            .open
            .as_ref()
            .and_then(|open| open.sections.get(self.section))
            .map_or(&[][..], |section| section.lines.as_slice());
        self.rows = laid_out(&fold_blocks(lines, self.unfolded), self.columns);
        self.scroll = self.scroll.min(self.rows.len().saturating_sub(1));
    }

    /// How far the widest code line shown reaches past the pane's width.
    fn overhang(&self) -> usize {
        let rows: Box<dyn Iterator<Item = &TextLine>> = if self.per_turn {
            Box::new(self.rows.iter())
        } else {
            Box::new(self.transcript.laid_lines())
        };
        rows.filter(|row| row.code)
            .map(|row| crate::tui::wrap::width(&row.pieces))
            .max()
            .unwrap_or(0)
            .saturating_sub(self.columns)
    }

    /// The open trajectory's id.
    pub fn id(&self) -> Option<TrajectoryId> {
        self.open.as_ref().map(|open| open.trajectory().id)
    }

    /// The current section.
    pub fn current(&self) -> Option<&SectionContent> {
        self.open.as_ref()?.sections.get(self.section)
    }

    /// The current step, when the current section is one.
    pub fn current_step(&self) -> Option<usize> {
        match self.current()?.section {
            Section::Step(step) => Some(step),
            _ => None,
        }
    }

    /// Replaces the open trajectory's labels with the saved ones.
    pub fn labels_saved(&mut self, id: TrajectoryId, labels: &[Label]) {
        if let Some(open) = &mut self.open
            && open.loaded.trajectory.id == id
        {
            open.loaded.trajectory.labels = labels.to_vec();
        }
    }

    /// Opens a section at its top (in the whole conversation: brings its top into view).
    pub fn go_to(&mut self, section: usize) {
        self.section = section;
        self.scroll = 0;
        self.across = 0;
        if self.per_turn {
            self.lay_out();
            return;
        }
        let page = self.page;
        self.with_source(|transcript, source| {
            transcript.scroll_to(source, Place { section, row: 0 }, page);
        });
    }

    /// Handles navigation; `page` is the pane's height in lines.
    pub fn on_action(&mut self, action: Action, page: usize) -> Outcome {
        let Some(open) = &self.open else {
            return Outcome::Ignored;
        };
        if self.tokens.is_some() && action == Action::Tokens {
            self.tokens = None;
            return Outcome::Commands(Vec::new());
        }
        if let Some(cursor) = &mut self.tokens {
            return tokens::token_action(cursor, action, &self.token_layout);
        }
        let sections = open.sections.len();
        match action {
            Action::Transcript => {
                self.per_turn = !self.per_turn;
                self.go_to(self.section);
                return Outcome::Commands(Vec::new());
            }
            Action::Down
            | Action::Up
            | Action::PageDown
            | Action::PageUp
            | Action::Top
            | Action::Bottom
                if !self.per_turn =>
            {
                self.scroll_transcript(action);
                return Outcome::Commands(Vec::new());
            }
            _ => {}
        }
        // The top line that shows the last page full: End goes there, and no key scrolls past.
        let last_line = self.rows.len().saturating_sub(page.max(1));
        match action {
            Action::Right if self.section + 1 < sections => self.go_to(self.section + 1),
            Action::Left if self.section > 0 => self.go_to(self.section - 1),
            Action::ScrollRight => {
                self.across = (self.across + SIDE_STEP).min(self.overhang());
            }
            Action::ScrollLeft => self.across = self.across.saturating_sub(SIDE_STEP),
            Action::Down => self.scroll = (self.scroll + 1).min(last_line),
            Action::Up => self.scroll = self.scroll.saturating_sub(1),
            Action::PageDown => self.scroll = (self.scroll + page.max(1)).min(last_line),
            Action::PageUp => self.scroll = self.scroll.saturating_sub(page.max(1)),
            Action::Top => self.scroll = 0,
            Action::Bottom => self.scroll = last_line,
            Action::Tokens => {
                if self
                    .open
                    .as_ref()
                    .is_none_or(|open| open.trajectory().token_trace.is_none())
                {
                    return Outcome::Notice("this trajectory has no token trace".into());
                }
                self.tokens = Some(TokenCursor::default());
            }
            Action::Fold => {
                self.unfolded = !self.unfolded;
                self.lay_out();
            }
            Action::NextHit => return self.step_hits(true),
            Action::PrevHit => return self.step_hits(false),
            Action::Left | Action::Right => {}
            _ => return Outcome::Ignored,
        }
        Outcome::Commands(Vec::new())
    }
}

/// Rows shown above a search hit that a jump brings into view.
const HIT_CONTEXT_ROWS: usize = 6;

/// Columns one sideways scroll moves code by.
const SIDE_STEP: usize = 8;
