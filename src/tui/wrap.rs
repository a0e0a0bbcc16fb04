//! Laying toned lines into a view by display width: prose wraps at spaces (textwrap's
//! first-fit, breaking only words wider than the view); code keeps its lines and shows a
//! window of columns, wide characters cut at an edge shown as spaces.

use super::rich::{Piece, RichLine, Tone};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use std::ops::Range;
use textwrap::WordSeparator;
use textwrap::core::break_words;
use textwrap::wrap_algorithms::wrap_first_fit;
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// The display width of a toned line.
pub fn width(line: &RichLine) -> usize {
    line.iter().map(|piece| piece.text.width()).sum()
}

/// A toned line as rows of at most `columns` cells, broken at spaces; a word wider than the
/// view is broken where it must. Tones carry over the breaks.
pub fn wrap(line: &RichLine, columns: usize) -> Vec<RichLine> {
    let pieces: Vec<(Tone, &str)> = line
        .iter()
        .map(|piece| (piece.tone, piece.text.as_str()))
        .collect();
    rows_of(&pieces, columns)
        .into_iter()
        .map(|row| {
            row.into_iter()
                .map(|(tone, text)| Piece { tone, text })
                .collect()
        })
        .collect()
}

/// A styled line as rows of at most `columns` cells, broken like `wrap`.
pub fn wrap_spans(line: &Line<'_>, columns: usize) -> Vec<Line<'static>> {
    let pieces: Vec<(Style, &str)> = line
        .spans
        .iter()
        .map(|span| (span.style, span.content.as_ref()))
        .collect();
    rows_of(&pieces, columns)
        .into_iter()
        .map(|row| {
            Line::from(
                row.into_iter()
                    .map(|(style, text)| Span::styled(text, style))
                    .collect::<Vec<_>>(),
            )
        })
        .collect()
}

/// Styled pieces as rows of at most `columns` cells: textwrap's words over their joined
/// text, each row cut back into the pieces it spans.
fn rows_of<S: Copy>(pieces: &[(S, &str)], columns: usize) -> Vec<Vec<(S, String)>> {
    let whole = || {
        pieces
            .iter()
            .map(|(style, text)| (*style, (*text).to_string()))
            .collect()
    };
    let text: String = pieces.iter().map(|(_, text)| *text).collect();
    if columns == 0 || text.width() <= columns {
        return vec![whole()];
    }
    let words = break_words(WordSeparator::AsciiSpace.find_words(&text), columns);
    let mut rows = Vec::new();
    let mut offset = 0;
    for row in wrap_first_fit(&words, &[columns as f64]) {
        let start = offset;
        let mut end = start;
        for word in row {
            end = offset + word.word.len();
            offset += word.word.len() + word.whitespace.len();
        }
        rows.push(cut(pieces, start..end));
    }
    rows
}

/// The bytes `range` of the pieces' joined text, styles kept.
fn cut<S: Copy>(pieces: &[(S, &str)], range: Range<usize>) -> Vec<(S, String)> {
    let mut row = Vec::new();
    let mut at = 0;
    for (style, text) in pieces {
        let span = at..at + text.len();
        at = span.end;
        let start = range.start.max(span.start);
        let end = range.end.min(span.end);
        if start < end {
            row.push((
                *style,
                text[start - span.start..end - span.start].to_string(),
            ));
        }
    }
    row
}

/// The cells `from..from + columns` of a toned line, counted by display width over whole
/// graphemes (a flag, a CJK character, a letter with its accents); a wide grapheme cut by
/// either edge shows as spaces, so the row never spills or leaves half a character.
pub fn window(line: &RichLine, from: usize, columns: usize) -> RichLine {
    let end = from + columns;
    let mut pieces = Vec::new();
    let mut at = 0;
    for piece in line {
        let mut text = String::new();
        for grapheme in piece.text.graphemes(true) {
            let cells = grapheme.width();
            let (start, stop) = (at, at + cells);
            at = stop;
            if stop <= from || start >= end {
                continue;
            }
            if start < from || stop > end {
                text.push_str(&" ".repeat(stop.min(end) - start.max(from)));
            } else {
                text.push_str(grapheme);
            }
        }
        if !text.is_empty() {
            pieces.push(Piece {
                tone: piece.tone,
                text,
            });
        }
        if at >= end {
            break;
        }
    }
    pieces
}

/// The cells of `window`, with `…` in the first cell when columns are hidden to the left
/// and in the last when some are hidden to the right.
pub fn marked_window(line: &RichLine, from: usize, columns: usize) -> RichLine {
    let total = width(line);
    let left = from > 0 && total > from;
    let right = total > from + columns;
    if columns < 3 || !(left || right) {
        return window(line, from, columns);
    }
    let start = from + usize::from(left);
    let inner = columns - usize::from(left) - usize::from(right);
    let mark = || Piece {
        tone: Tone::Muted,
        text: "…".to_string(),
    };
    let mut pieces = Vec::new();
    if left {
        pieces.push(mark());
    }
    pieces.extend(window(line, start, inner));
    if right {
        pieces.push(mark());
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::rich::{piece, plain};

    fn texts(rows: &[RichLine]) -> Vec<String> {
        rows.iter().map(plain).collect()
    }

    #[test]
    fn prose_breaks_between_words_and_keeps_tones() {
        let line = vec![
            piece(Tone::Text, "the tool call has its "),
            piece(Tone::Accent, "arguments"),
            piece(Tone::Text, " in JSON"),
        ];
        let rows = wrap(&line, 25);
        assert_eq!(
            texts(&rows),
            ["the tool call has its", "arguments in JSON"],
            "no word is cut"
        );
        assert_eq!(rows[1][0].tone, Tone::Accent);
        assert_eq!(rows[1][0].text, "arguments");
    }

    #[test]
    fn only_words_wider_than_the_view_are_broken() {
        let line = vec![piece(Tone::Text, "ab abcdefghij")];
        assert_eq!(texts(&wrap(&line, 4)), ["ab", "abcd", "efgh", "ij"]);
    }

    #[test]
    fn wide_characters_count_two_cells() {
        let line = vec![piece(Tone::Text, "数学 问题 答案")];
        assert_eq!(texts(&wrap(&line, 9)), ["数学 问题", "答案"]);
    }

    #[test]
    fn a_window_never_splits_a_wide_grapheme() {
        let line = vec![piece(Tone::Text, "a🇫🇷b数c")];
        assert_eq!(plain(&window(&line, 0, 4)), "a🇫🇷b");
        assert_eq!(plain(&window(&line, 2, 4)), " b数");
        assert_eq!(plain(&window(&line, 5, 2)), " c");
        assert!(window(&line, 9, 4).is_empty());
    }

    #[test]
    fn a_marked_window_says_where_the_line_is_cut() {
        let line = vec![piece(Tone::Text, "0123456789")];
        assert_eq!(plain(&marked_window(&line, 0, 5)), "0123…");
        assert_eq!(plain(&marked_window(&line, 3, 4)), "…45…");
        assert_eq!(plain(&marked_window(&line, 6, 4)), "…789");
        assert_eq!(plain(&marked_window(&line, 0, 10)), "0123456789");
    }
}
