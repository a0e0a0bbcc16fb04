//! Diffs coloured: unified diffs and patches as they are written (file headers, hunk lines,
//! added and removed lines), and an edit's old and new text compared by `similar`.

use crate::tui::rich::{RichLine, TextLine, Tone, code, cut_note, paragraph, piece, shown_part};
use similar::{ChangeTag, TextDiff};
use std::time::Duration;

/// The longest an edit's comparison may take before `similar` settles for a coarser diff.
const EDIT_DIFF_TIMEOUT: Duration = Duration::from_millis(100);

/// Whether a text is a unified diff or a git patch: a `diff --git` line, or a hunk line with
/// a file header.
pub fn is_diff(text: &str) -> bool {
    let mut header = false;
    let mut hunk = false;
    for line in text.lines().take(400) {
        if line.starts_with("diff --git ") {
            return true;
        }
        header |= line.starts_with("--- ") || line.starts_with("+++ ");
        hunk |= line.starts_with("@@ ") && line[3..].contains(" @@");
        if header && hunk {
            return true;
        }
    }
    false
}

/// A unified diff as coloured lines, kept whole: headers accented, hunk lines as keywords,
/// added and removed lines in the diff tones.
pub fn diff_lines(text: &str) -> Vec<TextLine> {
    let lines = paragraph(Tone::Text, text)
        .into_iter()
        .map(|mut line| {
            let tone = line
                .first()
                .map_or(Tone::Text, |first| tone_of(&first.text));
            for piece in &mut line {
                if piece.tone == Tone::Text {
                    piece.tone = tone;
                }
            }
            line
        })
        .collect();
    code(lines)
}

fn tone_of(line: &str) -> Tone {
    if line.starts_with("+++ ") || line.starts_with("--- ") || line.starts_with("diff ") {
        Tone::Accent
    } else if line.starts_with("@@") {
        Tone::CodeKeyword
    } else if line.starts_with('+') {
        Tone::DiffAdd
    } else if line.starts_with('-') {
        Tone::DiffRemove
    } else if line.starts_with("index ")
        || line.starts_with("new file mode")
        || line.starts_with("deleted file mode")
        || line.starts_with("similarity index")
        || line.starts_with("rename ")
        || line.starts_with('\\')
    {
        Tone::Muted
    } else {
        Tone::Text
    }
}

/// An edit that replaces `old` with `new`, line by line: removed lines after `-`, added
/// after `+`, unchanged ones after two spaces. Each side is cut after `MAX_SHOWN_BYTES`.
pub fn edit_lines(old: &str, new: &str) -> Vec<TextLine> {
    let (old, old_cut) = shown_part(old);
    let (new, new_cut) = shown_part(new);
    let diff = TextDiff::configure()
        .timeout(EDIT_DIFF_TIMEOUT)
        .diff_lines(old, new);
    let mut lines: Vec<RichLine> = diff
        .iter_all_changes()
        .flat_map(|change| {
            let (sign, tone) = match change.tag() {
                ChangeTag::Delete => ("- ", Tone::DiffRemove),
                ChangeTag::Insert => ("+ ", Tone::DiffAdd),
                ChangeTag::Equal => ("  ", Tone::Text),
            };
            let text = change.value();
            let text = text.strip_suffix('\n').unwrap_or(text);
            let text = text.strip_suffix('\r').unwrap_or(text);
            paragraph(tone, text).into_iter().map(move |mut line| {
                line.insert(0, piece(tone, sign));
                line
            })
        })
        .collect();
    if old_cut + new_cut > 0 {
        lines.push(cut_note(old_cut + new_cut));
    }
    code(lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::rich::{MAX_SHOWN_BYTES, plain};

    #[test]
    fn a_git_patch_is_a_diff_and_prose_is_not() {
        let patch = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n";
        assert!(is_diff(patch));
        assert!(is_diff("--- a\n+++ b\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n"));
        assert!(!is_diff("- a list\n- of items\n+ and a plus"));
        let tones: Vec<Tone> = diff_lines(patch)
            .iter()
            .map(|line| line.pieces[0].tone)
            .collect();
        assert_eq!(
            tones,
            [
                Tone::Accent,
                Tone::Accent,
                Tone::Accent,
                Tone::CodeKeyword,
                Tone::DiffRemove,
                Tone::DiffAdd,
                Tone::Text
            ]
        );
    }

    #[test]
    fn an_edit_shows_what_changed_between_unchanged_lines() {
        let lines = edit_lines("def f():\n    return 1\n", "def f():\n    return 2\n");
        let shown: Vec<String> = lines.iter().map(|line| plain(&line.pieces)).collect();
        assert_eq!(
            shown,
            ["  def f():", "-     return 1", "+     return 2"],
            "{shown:?}"
        );
        assert!(lines.iter().all(|line| line.code));
    }

    #[test]
    fn a_huge_edit_is_cut_and_says_so() {
        let old = "x\n".repeat(MAX_SHOWN_BYTES);
        let lines = edit_lines(&old, "y\n");
        let last = plain(&lines.last().expect("lines").pieces);
        assert!(last.contains("more bytes not shown"), "{last}");
    }
}
