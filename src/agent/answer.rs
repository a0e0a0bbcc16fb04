//! Final answers: finding them in a policy's text (`Final Answer:`, GSM8K's `####`,
//! `\boxed{}`) and comparing them with the ground truth exactly.

use super::arith::{self, exact_text, number};
use num_rational::BigRational;

/// How an answer was marked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnswerMarker {
    /// `Final Answer: …` (any case, optional `**` and `is`).
    FinalAnswer,
    /// GSM8K's `#### …`.
    Hashes,
    /// `\boxed{…}`.
    Boxed,
}

/// An answer found in a text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtractedAnswer {
    /// The marker that introduced it.
    pub marker: AnswerMarker,
    /// The answer text after the marker (one line, or the box's content).
    pub text: String,
}

/// The last marked answer in a text, whichever marker it uses.
pub fn extract_answer(text: &str) -> Option<ExtractedAnswer> {
    let lower = text.to_ascii_lowercase();
    let candidates = [
        lower.rfind("final answer").map(|at| {
            let after = &text[at + "final answer".len()..];
            (at, AnswerMarker::FinalAnswer, after_final_answer(after))
        }),
        text.rfind("####")
            .map(|at| (at, AnswerMarker::Hashes, line_after(&text[at + 4..]))),
        text.rfind("\\boxed{").and_then(|at| {
            boxed_content(&text[at + "\\boxed{".len()..])
                .map(|content| (at, AnswerMarker::Boxed, content.to_string()))
        }),
    ];
    candidates
        .into_iter()
        .flatten()
        .filter(|(_, _, answer)| !answer.trim().is_empty())
        .max_by_key(|(at, _, _)| *at)
        .map(|(_, marker, answer)| ExtractedAnswer {
            marker,
            text: answer.trim().to_string(),
        })
}

/// The answer after `final answer`: markup, colons and dashes before it dropped, a minus
/// sign that starts a number kept.
fn after_final_answer(after: &str) -> String {
    let mut rest = after;
    while let Some(c) = rest.chars().next() {
        let tail = &rest[c.len_utf8()..];
        let sign = c == '-' && tail.starts_with(|next: char| next.is_ascii_digit() || next == '.');
        if sign || !(c.is_whitespace() || "*:_-".contains(c)) {
            break;
        }
        rest = tail;
    }
    let rest = rest
        .strip_prefix("is ")
        .map_or(rest, |tail| tail.trim_start_matches([' ', ':']));
    line_after(rest)
}

/// The rest of the line, or the next non-empty line when the rest is empty.
fn line_after(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or("")
        .trim_end_matches(['*', '_'])
        .to_string()
}

/// The content of a `\boxed{` up to its matching brace.
fn boxed_content(text: &str) -> Option<&str> {
    let mut depth = 1usize;
    for (index, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&text[..index]);
                }
            }
            _ => {}
        }
    }
    None
}

/// The number an answer states: the first number after the last `=`, with `$`, units,
/// thousands separators and `%` dropped; `3/4` and `\frac{3}{4}` read as fractions.
pub fn answer_value(answer: &str) -> Option<BigRational> {
    let cleaned = strip_latex(answer);
    let tail = cleaned.rsplit('=').next().unwrap_or(&cleaned);
    for (at, c) in tail.char_indices() {
        if !(c.is_ascii_digit() || c == '.' || c == '$') {
            continue;
        }
        let glued_to_word = tail[..at].ends_with(|c: char| c.is_alphabetic());
        let Some((literal, end)) = number(tail, at).filter(|_| !glued_to_word) else {
            continue;
        };
        let before = tail[..at].trim_end_matches([' ', '$']);
        let negative = before.ends_with(['-', '−']);
        let mut value = literal.value;
        let rest = tail[end..].trim_start();
        if let Some(denominator) = rest
            .strip_prefix('/')
            .and_then(|after| number(after.trim_start(), 0))
            .map(|(literal, _)| literal.value)
            .filter(|value| *value != BigRational::from_integer(0.into()))
        {
            value /= denominator;
        }
        return Some(if negative { -value } else { value });
    }
    None
}

/// LaTeX that wraps numbers in answers: `\frac{a}{b}` → `a/b`, `\text{…}` → its content,
/// `\$`, `\%`, `{,}`, `\!`, `\,` and `\left`/`\right` dropped.
fn strip_latex(text: &str) -> String {
    let mut out = text.to_string();
    for command in ["\\dfrac{", "\\tfrac{", "\\frac{"] {
        while let Some(at) = out.find(command) {
            let after = &out[at + command.len()..];
            let Some(numerator) = boxed_content(after) else {
                break;
            };
            let rest = &after[numerator.len() + 1..];
            let Some(denominator) = rest.strip_prefix('{').and_then(boxed_content) else {
                break;
            };
            let consumed = command.len() + numerator.len() + 1 + denominator.len() + 2;
            let replacement = format!("{}/{}", numerator.trim(), denominator.trim());
            out.replace_range(at..at + consumed, &replacement);
        }
    }
    for wrapper in ["\\text{", "\\mathrm{", "\\textbf{"] {
        out = out.replace(wrapper, "{");
    }
    for noise in ["{,}", "\\!", "\\,", "\\left", "\\right", "\\$", "\\%"] {
        out = out.replace(noise, "");
    }
    out.replace(['{', '}'], " ")
}

/// Whether an answer matches the ground truth: exactly as numbers when the ground truth is
/// a number, else as normalised text (case, punctuation and a leading article ignored).
pub fn answers_match(answer: &str, ground_truth: &str) -> bool {
    match exact_value(ground_truth) {
        Some(expected) => answer_value(answer) == Some(expected),
        None => {
            let expected = normalise_text(ground_truth);
            !expected.is_empty() && normalise_text(answer) == expected
        }
    }
}

/// The value of a text that is exactly one number or one fraction (`-1,250.5`, `3/4`).
pub fn exact_value(text: &str) -> Option<BigRational> {
    if let Some(value) = arith::parse_number(text) {
        return Some(value);
    }
    let (numerator, denominator) = text.split_once('/')?;
    let denominator = arith::parse_number(denominator)?;
    let numerator = arith::parse_number(numerator)?;
    (denominator != BigRational::from_integer(0.into())).then(|| numerator / denominator)
}

/// A number written canonically (`30,000` → `30000`, `2.50` → `2.5`, `6/8` → `3/4`), for
/// ground truths.
pub fn canonical_number(text: &str) -> Option<String> {
    exact_value(text).map(|value| exact_text(&value))
}

fn normalise_text(text: &str) -> String {
    let cleaned = strip_latex(text).to_lowercase();
    let words: Vec<&str> = cleaned
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .collect();
    let body = match words.first() {
        Some(&("the" | "a" | "an")) => &words[1..],
        _ => &words[..],
    };
    body.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_marker_wins() {
        let text = "#### 5\nWait, recount.\nFinal Answer: **7**";
        let answer = extract_answer(text).unwrap();
        assert_eq!(answer.marker, AnswerMarker::FinalAnswer);
        assert_eq!(answer.text, "7");
    }

    #[test]
    fn a_negative_final_answer_keeps_its_sign() {
        for (text, answer) in [
            ("The answer is -4.\nFinal Answer: -4", "-4"),
            ("Final Answer: **-0.5**", "-0.5"),
            ("Final Answer - 12", "12"),
            ("final answer -- -3 degrees", "-3 degrees"),
        ] {
            assert_eq!(extract_answer(text).unwrap().text, answer, "{text}");
        }
        assert!(!answers_match("-4", "4"));
        assert!(answers_match("-4", "-4"));
    }

    #[test]
    fn text_answers_ignore_case_and_articles() {
        assert!(answers_match("The Corvath.", "Corvath"));
        assert!(!answers_match("Brimhold", "Corvath"));
    }
}
