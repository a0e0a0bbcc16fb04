//! How the token view spells a token. The token trace holds ids only; until a tokenizer is
//! wired in, tokens are shown by id.

/// Turns token ids into the text the token view shows.
pub trait TokenText {
    /// The text of one token (one line, no control characters).
    fn text(&self, id: u32) -> String;
}

/// Shows each token as its id: the default, as traces carry no text.
#[derive(Clone, Copy, Debug, Default)]
pub struct TokenIds;

impl TokenText for TokenIds {
    fn text(&self, id: u32) -> String {
        id.to_string()
    }
}

/// Widest cell a token gets in the token view, in columns (longer texts are cut).
pub const MAX_CELL: usize = 12;

/// The cell width (text plus a space) and tokens per row for a trace in `width` columns.
pub fn grid(ids: &[u32], token_text: &dyn TokenText, width: usize) -> (usize, usize) {
    let widest = ids
        .iter()
        .map(|&id| ratatui::text::Span::raw(token_text.text(id)).width())
        .max()
        .unwrap_or(1)
        .clamp(1, MAX_CELL);
    let cell = widest + 1;
    (cell, (width / cell).max(1))
}
