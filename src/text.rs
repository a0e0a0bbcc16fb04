//! Making untrusted text safe to show: tool output may hold ANSI escapes or control bytes
//! that must never reach the terminal.

use std::borrow::Cow;

/// The text with every control character except newline and tab replaced by a visible
/// escape (`\x1b` shows as `␛`), so nothing in it can drive the terminal.
pub fn inert(text: &str) -> Cow<'_, str> {
    if !text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| match c {
                '\n' | '\t' => c,
                '\u{1b}' => '␛',
                '\r' => '↵',
                c if (c as u32) < 0x20 => char::from_u32(0x2400 + c as u32).unwrap_or('�'),
                c if c.is_control() => '�',
                c => c,
            })
            .collect(),
    )
}

/// The first `max` characters of a text, with `…` when cut.
pub fn clip(text: &str, max: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => Cow::Borrowed(text),
        Some((end, _)) => Cow::Owned(format!("{}…", &text[..end])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_become_visible_symbols() {
        assert_eq!(inert("plain\nline"), "plain\nline");
        assert_eq!(inert("\u{1b}[31mred\u{7}"), "␛[31mred␇");
        assert_eq!(inert("a\u{9b}b"), "a�b");
    }

    #[test]
    fn clip_counts_characters() {
        assert_eq!(clip("héllo", 3), "hél…");
        assert_eq!(clip("hi", 3), "hi");
    }
}
