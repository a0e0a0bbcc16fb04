//! How the token view spells a token. The token trace holds ids only: the engine spells an
//! opened trajectory's tokens with its tokenizer (`engine::TokenSpellings`); without one,
//! tokens show by id (or by the spelling the app was configured with).

use crate::engine::TokenSpellings;

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
