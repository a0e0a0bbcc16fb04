//! How the token view spells a token. The token trace holds ids only: the engine spells an
//! opened trajectory's tokens with its tokenizer (`engine::TokenSpellings`); without one,
//! tokens show by id (or by the spelling the app was configured with).

use crate::engine::TokenSpellings;

/// Turns token ids into the text the token view shows.
pub trait TokenText {
    /// The text of one token (one line, no control characters).
    fn text(&self, id: u32) -> String;

    /// Whether tokens need a space between them to be told apart (ids do; spelled text
    /// does not: it flows like the text it is).
    fn separated(&self) -> bool {
        false
    }
}

/// Shows each token as its id: the default, as traces carry no text.
#[derive(Clone, Copy, Debug, Default)]
pub struct TokenIds;

impl TokenText for TokenIds {
    fn text(&self, id: u32) -> String {
        id.to_string()
    }

    fn separated(&self) -> bool {
        true
    }
}

impl TokenText for TokenSpellings {
    fn text(&self, id: u32) -> String {
        self.by_id
            .get(&id)
            .cloned()
            .unwrap_or_else(|| id.to_string())
    }
}

/// The spelling the token view uses: the open trajectory's, when the engine found its
/// tokenizer, else the configured one.
pub fn spelling<'a>(
    spellings: Option<&'a TokenSpellings>,
    configured: &'a dyn TokenText,
) -> &'a dyn TokenText {
    match spellings {
        Some(spellings) => spellings,
        None => configured,
    }
}

/// What the token view's title says of how tokens are spelled.
pub fn spelled_by(spellings: Option<&TokenSpellings>) -> String {
    match spellings {
        Some(spellings) => format!(
            "spelled by {} ({})",
            spellings.tokenizer.display(),
            spellings.source.describe()
        ),
        None => "shown as ids (no tokenizer found for it)".to_string(),
    }
}

/// How the token view lays a trace out: tokens flow like text, each as wide as its spelling
/// (at most the view's width; an empty one takes a column), a new line after a token that
/// ends a line of text (`⏎`), a space between tokens shown as ids.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TokenLayout {
    /// The first token of each line.
    pub starts: Vec<usize>,
    /// Each token's first column in its line.
    pub columns: Vec<usize>,
    /// Each token's width in columns.
    pub widths: Vec<usize>,
    /// Columns between two tokens.
    pub gap: usize,
}

impl TokenLayout {
    /// The layout of `ids` in `width` columns.
    pub fn flow(ids: &[u32], token_text: &dyn TokenText, width: usize) -> Self {
        let width = width.max(1);
        let gap = usize::from(token_text.separated());
        let mut layout = Self {
            gap,
            ..Self::default()
        };
        let mut column = 0;
        let mut line_ends = false;
        for (index, &id) in ids.iter().enumerate() {
            let text = token_text.text(id);
            let cells = ratatui::text::Span::raw(text.as_str())
                .width()
                .clamp(1, width);
            let start = if column == 0 { 0 } else { column + gap };
            if index == 0 || line_ends || start + cells > width {
                layout.starts.push(index);
                column = 0;
            } else {
                column = start;
            }
            layout.columns.push(column);
            layout.widths.push(cells);
            column += cells;
            line_ends = text.ends_with('⏎');
        }
        layout
    }

    /// How many tokens it lays out.
    pub fn len(&self) -> usize {
        self.columns.len()
    }

    /// Whether it lays out no token.
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// The line `token` is on.
    pub fn line_of(&self, token: usize) -> usize {
        self.starts
            .partition_point(|&start| start <= token)
            .saturating_sub(1)
    }

    /// The tokens of line `line`.
    pub fn line(&self, line: usize) -> std::ops::Range<usize> {
        let start = self.starts.get(line).copied().unwrap_or(self.len());
        let end = self.starts.get(line + 1).copied().unwrap_or(self.len());
        start..end
    }

    /// The token `by` lines below `token` (above when negative), under its column or the
    /// last of a shorter line; the first or last line when `by` goes past them.
    pub fn moved(&self, token: usize, by: isize) -> usize {
        if self.is_empty() {
            return 0;
        }
        let token = token.min(self.len() - 1);
        let last_line = self.starts.len() - 1;
        let line = self.line_of(token).saturating_add_signed(by).min(last_line);
        let column = self.columns[token];
        let tokens = self.line(line);
        tokens
            .clone()
            .find(|&candidate| self.columns[candidate] + self.widths[candidate] > column)
            .unwrap_or(tokens.end.saturating_sub(1))
    }
}

/// Which tokens are the policy's reasoning: inside a `<think>…</think>` block of the spelled
/// text (the tags included), by `text::reasoning_parts`' rule.
pub fn reasoning_tokens(ids: &[u32], token_text: &dyn TokenText) -> Vec<bool> {
    let mut text = String::new();
    let mut starts = Vec::with_capacity(ids.len());
    for &id in ids {
        starts.push(text.len());
        text.push_str(&token_text.text(id));
    }
    if !text.contains("think>") {
        return vec![false; ids.len()];
    }
    let base = text.as_ptr() as usize;
    let ranges: Vec<(usize, usize)> = crate::text::reasoning_parts(&text)
        .into_iter()
        .filter(|part| part.reasoning)
        .map(|part| {
            let start = part.text.as_ptr() as usize - base;
            let end = start + part.text.len();
            let open = text[..start].ends_with("<think>");
            let close = text[end..].starts_with("</think>");
            (
                start - if open { "<think>".len() } else { 0 },
                end + if close { "</think>".len() } else { 0 },
            )
        })
        .collect();
    (0..ids.len())
        .map(|index| {
            let start = starts[index];
            let end = starts.get(index + 1).copied().unwrap_or(text.len());
            ranges.iter().any(|&(from, to)| start < to && end > from)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spells token `n` as `n` letters `a`, and 9 as a line's end.
    struct Letters;

    impl TokenText for Letters {
        fn text(&self, id: u32) -> String {
            match id {
                9 => "x⏎".into(),
                n => "a".repeat(n as usize),
            }
        }
    }

    #[test]
    fn tokens_flow_like_text_and_move_by_line_under_their_column() {
        let layout = TokenLayout::flow(&[3, 3, 3, 2, 9, 1, 4, 0], &Letters, 8);
        assert_eq!(layout.starts, [0, 2, 5]);
        assert_eq!(layout.columns, [0, 3, 0, 3, 5, 0, 1, 5]);
        assert_eq!(layout.widths[7], 1, "an empty token still takes a column");
        assert_eq!(layout.line(1), 2..5);
        assert_eq!(
            layout.moved(1, 1),
            3,
            "column 3 is token 3's on the next line"
        );
        assert_eq!(layout.moved(4, 1), 7);
        assert_eq!(layout.moved(6, -2), 0);
        assert_eq!(layout.moved(0, 10), 5, "the last line");
        let ids = TokenLayout::flow(&[10, 11, 12], &TokenIds, 6);
        assert_eq!(ids.starts, [0, 2]);
        assert_eq!(ids.columns, [0, 3, 0], "ids get a space between them");
        assert_eq!(
            ids.moved(1, 1),
            2,
            "past a shorter line's end: its last token"
        );
    }
}
