//! Small drawing helpers shared by the views: toned lines, gauges, label marks, blocks.

use crate::curate::labels::LabelKinds;
use crate::store::Summary;
use crate::trajectory::{Label, LabelStatus, RunKind};
use crate::tui::rich::{RichLine, Tone};
use crate::tui::theme::Theme;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders};
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// A toned line as a ratatui line, borrowing its text.
pub fn line<'a>(theme: &Theme, rich: &'a RichLine) -> Line<'a> {
    Line::from(
        rich.iter()
            .map(|piece| Span::styled(piece.text.as_str(), theme.style(piece.tone)))
            .collect::<Vec<_>>(),
    )
}

/// A span of text in a tone.
pub fn span<'a>(theme: &Theme, tone: Tone, text: impl Into<std::borrow::Cow<'a, str>>) -> Span<'a> {
    Span::styled(text, theme.style(tone))
}

/// A bordered pane with a title, accented when focused.
pub fn pane<'a>(theme: &Theme, title: Line<'a>, focused: bool) -> Block<'a> {
    Block::new()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(theme.border(focused))
        .title(title)
}

/// A score gauge `████████░░ 0.80` of `width` cells, coloured low → high.
pub fn gauge<'a>(theme: &Theme, value: f64, width: usize) -> Vec<Span<'a>> {
    let clamped = if value.is_finite() {
        value.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let filled = (clamped * width as f64).round() as usize;
    let tone = Tone::of_score(clamped);
    vec![
        span(theme, tone, "█".repeat(filled)),
        span(theme, Tone::Dim, "░".repeat(width - filled.min(width))),
        span(theme, tone, format!(" {value:.2}")),
    ]
}

/// A value with two decimals, or `–`.
pub fn decimal(value: Option<f64>) -> String {
    value.map_or_else(|| "–".to_string(), |value| format!("{value:.2}"))
}

/// The labels of a summary: confirmed in bold, suggested in italics with `?` (not when
/// labelling blind).
pub fn summary_labels<'a>(
    theme: &Theme,
    kinds: &LabelKinds,
    summary: &Summary,
    blind: bool,
) -> Vec<Span<'a>> {
    let confirmed = summary
        .confirmed_kinds()
        .map(|kind| span(theme, Tone::Confirmed, format!("{} ", kinds.name(kind))));
    let suggested = summary
        .suggested_kinds()
        .filter(|_| !blind)
        .map(|kind| span(theme, Tone::Suggested, format!("{}? ", kinds.name(kind))));
    confirmed.chain(suggested).collect()
}

/// The labels a view shows: all, or only people's when labelling blind.
pub fn shown_labels<'a>(labels: impl Iterator<Item = &'a Label>, blind: bool) -> Vec<&'a Label> {
    labels
        .filter(|label| !blind || label.status == LabelStatus::Confirmed)
        .collect()
}

/// Labels as marks: bold kind names when confirmed, italic `kind?` when suggested.
pub fn label_marks<'a>(theme: &Theme, kinds: &LabelKinds, labels: &[&Label]) -> Vec<Span<'a>> {
    labels
        .iter()
        .map(|label| {
            let name = kinds.name(label.kind);
            match label.status {
                LabelStatus::Confirmed => span(theme, Tone::Confirmed, format!("{name} ")),
                LabelStatus::Suggested => span(theme, Tone::Suggested, format!("{name}? ")),
            }
        })
        .collect()
}

/// The first letter of each built-in label kind (`C`, `r?`) and the key of a session's own
/// (`5`), for narrow columns.
pub fn label_letters<'a>(theme: &Theme, labels: &[&Label]) -> Vec<Span<'a>> {
    labels
        .iter()
        .map(|label| {
            let letter = if label.kind.is_builtin() {
                label.kind.as_str()[..1].to_string()
            } else {
                label.kind.digit().to_string()
            };
            match label.status {
                LabelStatus::Confirmed => span(theme, Tone::Confirmed, letter.to_uppercase()),
                LabelStatus::Suggested => span(theme, Tone::Suggested, format!("{letter}?")),
            }
        })
        .collect()
}

/// The style of a reward: pass or fail colour.
pub fn verdict_style(theme: &Theme, passed: Option<bool>) -> Style {
    match passed {
        Some(true) => theme.style(Tone::Pass),
        Some(false) => theme.style(Tone::Fail),
        None => theme.style(Tone::Muted),
    }
}

/// `run·step` and `group·sample` (1-based sample) as the list shows them (`–` when labelling
/// blind).
pub fn coordinates(summary: &Summary, blind: bool) -> (String, String) {
    if blind {
        return ("–".to_string(), "–".to_string());
    }
    let run = short_run(&summary.run);
    let run_step = match (summary.run.is_empty(), summary.step) {
        (true, None) if summary.source_format.is_empty() => "–".to_string(),
        (true, None) => summary.source_format.clone(),
        (_, Some(step)) => format!("{run}·{step}"),
        (false, None) => run.to_string(),
    };
    let group_sample = match (summary.group, summary.sample) {
        (Some(group), Some(sample)) => format!("{group}·{}", sample + 1),
        (Some(group), None) => group.to_string(),
        _ => "–".to_string(),
    };
    (run_step, group_sample)
}

/// A run as the list shows it: a numbered run by its number (`0007` for `grpo-0007`,
/// `0002/eval` for its evaluation), a named one (an import's folder) whole.
fn short_run(run: &str) -> &str {
    match run.split_once('-') {
        Some((kind, number))
            if <RunKind as strum::IntoEnumIterator>::iter().any(|k| k.as_str() == kind)
                && number.starts_with(|c: char| c.is_ascii_digit()) =>
        {
            number
        }
        _ => run,
    }
}

/// A text cut to `columns` cells by display width, ending in `…` when cut.
pub fn ellipsize(text: &str, columns: usize) -> String {
    if text.width() <= columns {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for grapheme in text.graphemes(true) {
        let cells = grapheme.width();
        if used + cells + 1 > columns {
            break;
        }
        used += cells;
        out.push_str(grapheme);
    }
    if columns > 0 {
        out.push('…');
    }
    out
}

/// A bar of `width` cells for `value` out of `max`.
pub fn bar(value: usize, max: usize, width: usize) -> String {
    let filled = if max == 0 {
        0
    } else {
        (value * width).div_ceil(max).min(width)
    };
    "█".repeat(filled)
}

#[cfg(test)]
mod tests {
    use super::{bar, ellipsize};

    #[test]
    fn cut_text_ends_in_an_ellipsis() {
        assert_eq!(ellipsize("arith-1-00015", 13), "arith-1-00015");
        assert_eq!(ellipsize("arith-1-00015", 12), "arith-1-000…");
        assert_eq!(ellipsize("数学题", 4), "数…");
        assert_eq!(ellipsize("abc", 0), "");
    }

    #[test]
    fn bars_scale_to_the_largest_value() {
        assert_eq!(bar(10, 10, 4), "████");
        assert_eq!(bar(1, 10, 4), "█");
        assert_eq!(bar(0, 10, 4), "");
        assert_eq!(bar(3, 0, 4), "");
    }
}
