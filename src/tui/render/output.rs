//! Tool output and other untrusted text, drawn by what it is: JSON pretty-printed and
//! highlighted, diffs coloured, Python tracebacks with their frames and error apart, anything
//! else as readable text.

use super::diff::{diff_lines, is_diff};
use crate::tui::highlight::{Highlighter, Language};
use crate::tui::rich::{RichLine, TextLine, Tone, code, paragraph, piece, plain, prose};
use serde_json::Value;

/// JSON longer than this is shown as written: pretty-printing it would only add lines.
const MAX_PRETTY_BYTES: usize = 256 * 1024;

/// What a piece of output is.
#[derive(Clone, Debug, PartialEq)]
pub enum OutputKind {
    /// A JSON object or array, parsed.
    Json(Value),
    /// A unified diff or patch.
    Diff,
    /// A Python traceback (possibly after other output).
    Traceback,
    /// Anything else.
    Text,
}

/// What a text is, from its content.
pub fn kind_of(text: &str) -> OutputKind {
    let trimmed = text.trim_start();
    let json =
        (trimmed.starts_with('{') || trimmed.starts_with('[')) && text.len() <= MAX_PRETTY_BYTES;
    if let Some(value) = json
        .then(|| serde_json::from_str::<Value>(text).ok())
        .flatten()
    {
        OutputKind::Json(value)
    } else if is_diff(text) {
        OutputKind::Diff
    } else if text.contains("Traceback (most recent call last):") {
        OutputKind::Traceback
    } else {
        OutputKind::Text
    }
}

/// Output as lines by its kind; `failed` draws plain text as an error; `language` (a file
/// extension) highlights plain text that is a file the call showed (`cat app.py`).
pub fn output_lines(
    text: &str,
    failed: bool,
    highlighter: &Highlighter,
    language: Option<&str>,
) -> Vec<TextLine> {
    match kind_of(text) {
        OutputKind::Json(value) => json_lines(&value, highlighter),
        OutputKind::Diff => diff_lines(text),
        OutputKind::Traceback => code(traceback_lines(text)),
        OutputKind::Text => match language.filter(|name| !failed && highlighter.knows(name)) {
            Some(name) => code(highlighter.highlight_named(name, text)),
            None if failed => prose(paragraph(Tone::Fail, text)),
            None => prose(paragraph(Tone::Text, text)),
        },
    }
}

/// A JSON value pretty-printed (keys in their order) and highlighted, line by line.
pub fn json_lines(value: &Value, highlighter: &Highlighter) -> Vec<TextLine> {
    let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
    code(highlighter.highlight(Language::Json, &pretty))
}

/// A traceback: frame lines (`File "…", line N, in f`) as keys, the code under each as text,
/// the closing error line as a failure, the output before it as text.
fn traceback_lines(text: &str) -> Vec<RichLine> {
    let lines = paragraph(Tone::Text, text);
    let error_line = lines.iter().rposition(|line| is_error_line(&plain(line)));
    lines
        .into_iter()
        .enumerate()
        .map(|(index, line)| {
            let text = plain(&line);
            let trimmed = text.trim_start();
            let tone = if Some(index) == error_line {
                Tone::Fail
            } else if trimmed.starts_with("File \"") {
                Tone::CodeKey
            } else if trimmed.starts_with("Traceback (most recent call last)") {
                Tone::Accent
            } else if trimmed.starts_with('^') || trimmed.starts_with('~') {
                Tone::Warn
            } else {
                return line;
            };
            vec![piece(tone, &text)]
        })
        .collect()
}

/// Whether a line names a Python exception: `ValueError: …`, `pkg.Error`, `KeyboardInterrupt`.
fn is_error_line(line: &str) -> bool {
    let name = line.split(':').next().unwrap_or("");
    !line.starts_with(' ')
        && !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        && (name.ends_with("Error")
            || name.ends_with("Exception")
            || name.ends_with("Interrupt")
            || name.ends_with("Exit")
            || name.ends_with("Warning"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_drawn_by_what_it_is() {
        assert_eq!(
            kind_of("{\"a\": [1, 2]}"),
            OutputKind::Json(serde_json::json!({"a": [1, 2]}))
        );
        assert_eq!(kind_of("{not json"), OutputKind::Text);
        assert_eq!(
            kind_of("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-1\n+2\n"),
            OutputKind::Diff
        );
        assert_eq!(kind_of("total 8\ndrwxr-xr-x 2 root"), OutputKind::Text);
    }

    #[test]
    fn a_file_a_call_printed_is_highlighted_by_its_extension() {
        let highlighter = Highlighter::default();
        let source = "def f():\n    return 1";
        let lines = output_lines(source, false, &highlighter, Some("py"));
        assert!(lines.iter().all(|line| line.code));
        assert_eq!(lines[0].pieces[0].tone, Tone::CodeKeyword, "`def`");
        let plain_text = output_lines(source, false, &highlighter, None);
        assert!(plain_text.iter().all(|line| !line.code));
        let failed = output_lines(source, true, &highlighter, Some("py"));
        assert_eq!(
            failed[0].pieces[0].tone,
            Tone::Fail,
            "an error stays an error"
        );
    }

    #[test]
    fn compact_json_gets_real_line_breaks() {
        let highlighter = Highlighter::default();
        let value = serde_json::json!({"flights": [{"id": "HAT001", "price": 120}]});
        let lines = json_lines(&value, &highlighter);
        let shown: Vec<String> = lines.iter().map(|line| plain(&line.pieces)).collect();
        assert_eq!(shown.len(), 8, "{shown:?}");
        assert_eq!(shown[3], "      \"id\": \"HAT001\",", "{shown:?}");
        assert!(lines.iter().all(|line| line.code));
    }

    #[test]
    fn a_traceback_marks_its_frames_and_its_error() {
        let text = "running\nTraceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n    f()\nZeroDivisionError: division by zero";
        let lines = traceback_lines(text);
        let tones: Vec<Tone> = lines.iter().map(|line| line[0].tone).collect();
        assert_eq!(
            tones,
            [
                Tone::Text,
                Tone::Accent,
                Tone::CodeKey,
                Tone::Text,
                Tone::Fail
            ]
        );
    }
}
