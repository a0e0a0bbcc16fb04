//! String helpers: making untrusted text safe to show (tool output may hold ANSI escapes or
//! control bytes that must never reach the terminal), and the name a misspelt one meant.

use std::borrow::Cow;

/// The text with every control character except newline and tab replaced by a visible
/// escape (`\x1b` shows as `␛`), and every bidirectional override or isolate by `�`, so
/// nothing in it can drive the terminal or reorder what is shown.
pub fn inert(text: &str) -> Cow<'_, str> {
    if !text
        .chars()
        .any(|c| (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c))
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
                c if c.is_control() || is_bidi_control(c) => '�',
                c => c,
            })
            .collect(),
    )
}

/// Whether a character overrides or isolates bidirectional text (the "Trojan Source"
/// characters).
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// The first `max` characters of a text, with `…` when cut.
pub fn clip(text: &str, max: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => Cow::Borrowed(text),
        Some((end, _)) => Cow::Owned(format!("{}…", &text[..end])),
    }
}

/// The name among `known` that `word` (three characters at least) most likely meant: one a
/// single edit away, else one that contains it, else one it contains, else the nearest
/// within a third of its length in edits.
pub fn nearest<'a>(word: &str, known: &[&'a str]) -> Option<&'a str> {
    let nearest_within = |limit: usize| {
        known
            .iter()
            .map(|name| (strsim::osa_distance(word, name), *name))
            .filter(|(distance, _)| *distance <= limit)
            .min_by_key(|(distance, _)| *distance)
            .map(|(_, name)| name)
    };
    let lower = word.to_lowercase();
    let long = lower.chars().count() >= 3;
    let containing = |outer: bool| {
        known.iter().copied().find(|name| {
            let name = name.to_lowercase();
            long && name.len() >= 3
                && if outer {
                    name.contains(&lower)
                } else {
                    lower.contains(&name)
                }
        })
    };
    long.then(|| nearest_within(1))
        .flatten()
        .or_else(|| containing(true))
        .or_else(|| containing(false))
        .or_else(|| nearest_within(word.chars().count() / 3))
}

/// What to tell someone who wrote `word` where only `known` names are allowed: `did you mean
/// `x`?` when one is near, else the list of them.
pub fn suggestion(word: &str, known: &[&str]) -> String {
    match nearest(word, known) {
        Some(name) => format!("did you mean `{name}`?"),
        None if known.is_empty() => "this table takes no other keys".to_string(),
        None => format!("use one of {}", known.join(", ")),
    }
}

/// The choice among `choices` named `text`, or the error `unknown {what} `text`; did you
/// mean …?` (or the list of names).
pub fn parse_choice<T: Copy + Into<&'static str>>(
    text: &str,
    what: &str,
    choices: impl IntoIterator<Item = T>,
) -> Result<T, String> {
    let choices: Vec<T> = choices.into_iter().collect();
    let names: Vec<&'static str> = choices.iter().map(|&choice| choice.into()).collect();
    names
        .iter()
        .position(|name| *name == text)
        .map(|index| choices[index])
        .ok_or_else(|| format!("unknown {what} `{text}`; {}", suggestion(text, &names)))
}

/// A time stamp in milliseconds since the Unix epoch as `2026-12-02 01:13` (UTC).
pub fn utc_minute(millis: i64) -> String {
    chrono::DateTime::from_timestamp_millis(millis).map_or_else(String::new, |time| {
        time.format("%Y-%m-%d %H:%M").to_string()
    })
}

/// A piece of a model's text: reasoning (inside `<think>…</think>`) or the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextPart<'a> {
    /// Whether it is reasoning.
    pub reasoning: bool,
    /// The text, without the tags.
    pub text: &'a str,
}

/// Splits a model's text into reasoning and the rest, as Qwen3 and DeepSeek-R1 write it: each
/// `<think>…</think>` block is reasoning, an unclosed `<think>` runs to the end, and text
/// before a `</think>` with no opening tag (a template that put `<think>` in the prompt) is
/// reasoning too. Empty parts are left out.
pub fn reasoning_parts(text: &str) -> Vec<TextPart<'_>> {
    const OPEN: &str = "<think>";
    const CLOSE: &str = "</think>";
    fn push<'a>(parts: &mut Vec<TextPart<'a>>, reasoning: bool, text: &'a str) {
        if !text.trim().is_empty() {
            parts.push(TextPart { reasoning, text });
        }
    }
    let mut parts = Vec::new();
    let mut rest = text;
    if let Some(close) = rest.find(CLOSE)
        && rest.find(OPEN).is_none_or(|open| open > close)
    {
        push(&mut parts, true, &rest[..close]);
        rest = &rest[close + CLOSE.len()..];
    }
    while let Some(open) = rest.find(OPEN) {
        push(&mut parts, false, &rest[..open]);
        let inside = &rest[open + OPEN.len()..];
        match inside.find(CLOSE) {
            Some(close) => {
                push(&mut parts, true, &inside[..close]);
                rest = &inside[close + CLOSE.len()..];
            }
            None => {
                push(&mut parts, true, inside);
                rest = "";
            }
        }
    }
    push(&mut parts, false, rest);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::RunKind;

    #[test]
    fn escapes_and_bidirectional_overrides_are_made_visible() {
        assert_eq!(inert("a\u{1b}[31mb\rc"), "a␛[31mb↵c");
        assert_eq!(inert("user\u{202e}gnp.exe"), "user�gnp.exe");
        assert_eq!(inert("x\u{2066}y\u{2069}"), "x�y�");
        assert_eq!(inert("line\n\tend"), "line\n\tend");
    }

    #[test]
    fn misspellings_find_the_name_meant() {
        let known = ["learning_rate", "schedule", "lora", "use_rslora"];
        assert_eq!(nearest("learnig_rate", &known), Some("learning_rate"));
        assert_eq!(
            nearest("shcedule", &known),
            Some("schedule"),
            "a swap is one edit"
        );
        assert_eq!(nearest("rslora", &known), Some("use_rslora"));
        assert_eq!(nearest("zzz", &known), None);
        assert_eq!(nearest("lr", &known), None);
        assert_eq!(suggestion("shedule", &known), "did you mean `schedule`?");
        assert_eq!(suggestion("x", &["a", "b"]), "use one of a, b");
        let parsed = parse_choice("sft", "run kind", [RunKind::Sft, RunKind::Grpo]);
        assert_eq!(parsed, Ok(RunKind::Sft));
        assert_eq!(
            parse_choice("grop", "run kind", [RunKind::Sft, RunKind::Grpo]),
            Err("unknown run kind `grop`; did you mean `grpo`?".to_string())
        );
    }

    #[test]
    fn escapes_become_visible_symbols() {
        assert_eq!(inert("plain\nline"), "plain\nline");
        assert_eq!(inert("\u{1b}[31mred\u{7}"), "␛[31mred␇");
        assert_eq!(inert("a\u{9b}b"), "a�b");
    }

    #[test]
    fn reasoning_is_found_in_think_blocks_open_ends_and_before_a_lone_closing_tag() {
        let parts = |text| {
            reasoning_parts(text)
                .into_iter()
                .map(|part| (part.reasoning, part.text))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            parts("<think>add them</think>\nThe sum is 5."),
            vec![(true, "add them"), (false, "\nThe sum is 5.")]
        );
        assert_eq!(
            parts("plan</think>answer"),
            vec![(true, "plan"), (false, "answer")]
        );
        assert_eq!(
            parts("a <think>one</think> b <think>two"),
            vec![(false, "a "), (true, "one"), (false, " b "), (true, "two")]
        );
        assert_eq!(parts("<think>\n\n</think>\n\nHi"), vec![(false, "\n\nHi")]);
        assert_eq!(parts("no tags"), vec![(false, "no tags")]);
    }

    #[test]
    fn clip_counts_characters() {
        assert_eq!(clip("héllo", 3), "hél…");
        assert_eq!(clip("hi", 3), "hi");
    }
}
