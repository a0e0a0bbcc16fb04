use super::*;
use crate::tui::rich::{MAX_SHOWN_BYTES, plain};
use crate::tui::wrap::width;

fn shown(lines: &[TextLine]) -> Vec<String> {
    lines.iter().map(|line| plain(&line.pieces)).collect()
}

#[test]
fn markdown_draws_headings_lists_quotes_and_fenced_code() {
    let highlighter = Highlighter::default();
    let text = "## Plan\n1. Read **the file**\n2. Run `pytest`\n\n- a\n  - b\n\n> quoted\n\n```python\ndef f():\n    return 1\n```";
    let lines = markdown(text, &highlighter);
    assert_eq!(
        shown(&lines),
        [
            "## Plan",
            "",
            "1. Read the file",
            "2. Run pytest",
            "",
            "• a",
            "  • b",
            "",
            "│ quoted",
            "",
            "def f():",
            "    return 1"
        ]
    );
    assert_eq!(lines[0].pieces[1].tone, Tone::Accent, "the heading's text");
    assert_eq!(
        lines[2].pieces.last().map(|piece| piece.tone),
        Some(Tone::Strong)
    );
    assert_eq!(
        lines[3].pieces.last().map(|piece| piece.tone),
        Some(Tone::CodeString)
    );
    assert!(
        lines[10].code && lines[11].code,
        "fenced code keeps its lines"
    );
    assert!(!lines[2].code, "prose wraps");
    assert_eq!(
        lines[10].pieces[0].tone,
        Tone::CodeKeyword,
        "`def` highlighted"
    );
}

#[test]
fn line_breaks_stay_and_plain_arithmetic_is_not_markdown() {
    let highlighter = Highlighter::default();
    assert_eq!(
        shown(&markdown("first **line**\nsecond line", &highlighter)),
        ["first line", "second line"]
    );
    assert!(!looks_like_markdown("2*3*4 = 24\nFinal Answer: 24"));
    assert!(!looks_like_markdown("-3 is less than 2"));
    assert!(looks_like_markdown("# Heading"));
    assert!(looks_like_markdown("10. tenth step"));
}

#[test]
fn hostile_markdown_stays_inert_and_shallow() {
    let highlighter = Highlighter::default();
    for text in [
        format!("{}deep", "> ".repeat(10_000)),
        format!("{}deep", "- ".repeat(10_000)),
        format!("{}deep{}", "*".repeat(10_000), "*".repeat(10_000)),
        format!("{}x{}", "[".repeat(10_000), "]".repeat(10_000)),
    ] {
        let lines = markdown(&text, &highlighter);
        assert!(!lines.is_empty());
        for line in &lines {
            assert!(
                width(&line.pieces) <= 2 * MAX_SHOWN_DEPTH + 20_000,
                "{}",
                plain(&line.pieces).len()
            );
        }
        let deepest = lines
            .iter()
            .map(|line| plain(&line.pieces))
            .find(|line| line.contains("deep"));
        if let Some(line) = deepest {
            let before = line.split("deep").next().unwrap_or("").chars().count();
            assert!(before <= 2 * MAX_SHOWN_DEPTH, "{line}");
        }
    }
    let escapes = markdown("# \u{1b}[2J title\n\n`\u{1b}]0;pwned\u{7}`", &highlighter);
    let text = shown(&escapes).join("\n");
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text}"
    );
    assert!(text.contains("␛[2J"), "{text}");
}

#[test]
fn a_ten_megabyte_line_is_cut_and_says_so() {
    let highlighter = Highlighter::default();
    let text = format!("**{}**", "a".repeat(10 * 1024 * 1024));
    let lines = markdown(&text, &highlighter);
    let last = plain(&lines.last().expect("lines").pieces);
    assert!(last.contains("more bytes not shown"), "{last}");
    let total: usize = lines.iter().map(|line| width(&line.pieces)).sum();
    assert!(total < 2 * MAX_SHOWN_BYTES, "{total}");
}
