//! The whole conversation in one scrolling pane, laid out lazily: a section is wrapped only
//! when it comes into view (or a move walks past it), so a trajectory of any length opens,
//! jumps to its end and scrolls like a short one.

use crate::tui::content::{SectionContent, fold_blocks};
use crate::tui::rich::TextLine;
use crate::tui::wrap::wrap;
use std::collections::HashMap;

/// A row of the transcript: a section and a row in it; row 0 is the section's boundary line,
/// then come its laid-out lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Place {
    /// The section, by position.
    pub section: usize,
    /// The row in the section (0: its boundary line).
    pub row: usize,
}

/// Sections a transcript lays out, each built when first asked for.
pub trait SectionSource {
    /// How many sections there are.
    fn count(&self) -> usize;
    /// A section's lines, built if they were not yet (none past the last section).
    fn lines(&mut self, section: usize) -> &[TextLine];
}

impl SectionSource for Vec<SectionContent> {
    fn count(&self) -> usize {
        self.len()
    }

    fn lines(&mut self, section: usize) -> &[TextLine] {
        self.get(section)
            .map_or(&[], |content| content.lines.as_slice())
    }
}

/// What a transcript is laid out from: the sections, the width and the reasoning fold.
pub struct Source<'a> {
    /// Prompt, steps, outcome.
    pub sections: &'a mut dyn SectionSource,
    /// The pane's width, in cells.
    pub columns: usize,
    /// Whether reasoning blocks are shown whole.
    pub unfolded: bool,
}

/// The transcript's scroll position and the sections laid out so far.
#[derive(Clone, Debug, Default)]
pub struct Transcript {
    /// The row at the top of the pane.
    pub top: Place,
    /// Whether the pane shows the last row.
    pub at_end: bool,
    /// Sections laid out for `laid_for`, by position.
    laid: HashMap<usize, Vec<TextLine>>,
    /// The width and fold the laid sections are for.
    laid_for: (usize, bool),
}

impl Transcript {
    /// Forgets every laid-out section (their text changed).
    pub fn reset(&mut self) {
        self.laid.clear();
    }

    /// A laid-out section's lines, if it was laid out.
    pub fn laid(&self, section: usize) -> Option<&[TextLine]> {
        self.laid.get(&section).map(Vec::as_slice)
    }

    /// The laid-out lines of the sections laid out so far.
    pub fn laid_lines(&self) -> impl Iterator<Item = &TextLine> {
        self.laid.values().flatten()
    }

    /// Rows of a section (its boundary line and its lines), laying it out if needed.
    fn rows(&mut self, source: &mut Source, section: usize) -> usize {
        if self.laid_for != (source.columns, source.unfolded) {
            self.laid.clear();
            self.laid_for = (source.columns, source.unfolded);
        }
        let lines = self.laid.entry(section).or_insert_with(|| {
            let lines = source.sections.lines(section);
            laid_out(&fold_blocks(lines, source.unfolded), source.columns)
        });
        1 + lines.len()
    }

    /// The place `count` rows after `from`, or the last row.
    pub fn forward(&mut self, source: &mut Source, from: Place, count: usize) -> Place {
        let sections = source.sections.count();
        let mut place = from;
        let mut left = count;
        while place.section < sections {
            let rows = self.rows(source, place.section);
            let room = rows.saturating_sub(place.row + 1);
            if left <= room {
                place.row += left;
                return place;
            }
            if place.section + 1 == sections {
                place.row = rows - 1;
                return place;
            }
            left -= room + 1;
            place = Place {
                section: place.section + 1,
                row: 0,
            };
        }
        place
    }

    /// The place `count` rows before `from`, or the first row.
    pub fn backward(&mut self, source: &mut Source, from: Place, count: usize) -> Place {
        let mut place = from;
        let mut left = count;
        loop {
            if left <= place.row {
                place.row -= left;
                return place;
            }
            if place.section == 0 {
                return Place::default();
            }
            left -= place.row + 1;
            let section = place.section - 1;
            place = Place {
                section,
                row: self.rows(source, section) - 1,
            };
        }
    }

    /// The top row that shows the last page full (the first row if everything fits).
    pub fn last_top(&mut self, source: &mut Source, page: usize) -> Place {
        let Some(section) = source.sections.count().checked_sub(1) else {
            return Place::default();
        };
        let last = Place {
            section,
            row: self.rows(source, section) - 1,
        };
        self.backward(source, last, page.max(1) - 1)
    }

    /// Puts `place` at the top (or as near as the last page allows) and lays out what the
    /// pane then shows.
    pub fn scroll_to(&mut self, source: &mut Source, place: Place, page: usize) {
        let last_top = self.last_top(source, page);
        self.top = place.min(last_top);
        self.at_end = self.top == last_top;
        self.forward(source, self.top, page);
    }

    /// Keeps the top where it is, within bounds, laying out what the pane shows.
    pub fn refresh(&mut self, source: &mut Source, page: usize) {
        let top = Place {
            section: self
                .top
                .section
                .min(source.sections.count().saturating_sub(1)),
            ..self.top
        };
        let top = Place {
            row: top.row.min(self.rows(source, top.section) - 1),
            ..top
        };
        self.scroll_to(source, top, page);
    }
}

/// Lines laid out at a width: prose wrapped at spaces, code kept whole.
pub fn laid_out(lines: &[TextLine], columns: usize) -> Vec<TextLine> {
    lines
        .iter()
        .flat_map(|line| {
            if line.code {
                return vec![line.clone()];
            }
            wrap(&line.pieces, columns)
                .into_iter()
                .map(|pieces| TextLine {
                    pieces,
                    code: false,
                    fold: line.fold,
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::content::Section;
    use crate::tui::rich::{Tone, piece, prose};

    fn sections(lengths: &[usize]) -> Vec<SectionContent> {
        lengths
            .iter()
            .enumerate()
            .map(|(index, &length)| SectionContent {
                brief: None,
                built: true,
                section: Section::Step(index),
                lines: prose(
                    (0..length)
                        .map(|line| vec![piece(Tone::Text, &format!("s{index} l{line}"))])
                        .collect(),
                ),
            })
            .collect()
    }

    fn place(section: usize, row: usize) -> Place {
        Place { section, row }
    }

    #[test]
    fn moves_cross_sections_and_stop_at_the_ends() {
        let mut content = sections(&[2, 0, 3]);
        let source = &mut Source {
            sections: &mut content,
            columns: 40,
            unfolded: false,
        };
        let mut transcript = Transcript::default();
        assert_eq!(transcript.forward(source, place(0, 0), 3), place(1, 0));
        assert_eq!(transcript.forward(source, place(0, 2), 2), place(2, 0));
        assert_eq!(transcript.forward(source, place(0, 0), 100), place(2, 3));
        assert_eq!(transcript.backward(source, place(2, 1), 2), place(1, 0));
        assert_eq!(transcript.backward(source, place(2, 0), 2), place(0, 2));
        assert_eq!(transcript.backward(source, place(2, 3), 100), place(0, 0));
        assert_eq!(transcript.last_top(source, 4), place(2, 0));
        assert_eq!(transcript.last_top(source, 100), place(0, 0));
    }

    #[test]
    fn only_what_is_shown_is_laid_out() {
        let mut content = sections(&vec![5; 10_000]);
        let source = &mut Source {
            sections: &mut content,
            columns: 40,
            unfolded: false,
        };
        let mut transcript = Transcript::default();
        transcript.scroll_to(source, place(9_999, 0), 20);
        assert_eq!(transcript.top, place(9_996, 4));
        assert!(transcript.laid.len() <= 5, "{}", transcript.laid.len());
        assert_eq!(transcript.laid(9_999).map(<[_]>::len), Some(5));
    }
}
