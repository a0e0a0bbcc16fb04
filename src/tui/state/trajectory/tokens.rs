//! The token view's cursor: moves over a trace's tokens as laid out, and what shades them.

use super::{Heat, TokenCursor};
use crate::tui::action::Action;
use crate::tui::outcome::Outcome;
use crate::tui::token_text::TokenLayout;

/// Lines a page key moves the token cursor by.
const TOKEN_PAGE_LINES: isize = 10;

/// The token view's keys: the cursor moves over the trace's tokens; `e` switches the shading.
pub(super) fn token_action(
    cursor: &mut TokenCursor,
    action: Action,
    layout: &TokenLayout,
) -> Outcome {
    let last = layout.len().saturating_sub(1);
    match action {
        Action::Right => cursor.index = (cursor.index + 1).min(last),
        Action::Left => cursor.index = cursor.index.saturating_sub(1),
        Action::Down => cursor.index = layout.moved(cursor.index, 1),
        Action::Up => cursor.index = layout.moved(cursor.index, -1),
        Action::PageDown => cursor.index = layout.moved(cursor.index, TOKEN_PAGE_LINES),
        Action::PageUp => cursor.index = layout.moved(cursor.index, -TOKEN_PAGE_LINES),
        Action::Top => cursor.index = 0,
        Action::Bottom => cursor.index = last,
        Action::Entropy => {
            cursor.heat = match cursor.heat {
                Heat::LogProb => Heat::Entropy,
                Heat::Entropy => Heat::LogProb,
            }
        }
        _ => return Outcome::Ignored,
    }
    Outcome::Commands(Vec::new())
}
