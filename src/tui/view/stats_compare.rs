//! The Stats tab's lower band: two policy versions side by side (the pinned one before, the
//! selected one after, with the change), and where the first errors occur.

use super::widgets::{bar, pane, span};
use crate::curate::analysis::{Analysis, VersionStats};
use crate::text::inert;
use crate::trajectory::ErrorKind;
use crate::tui::app::App;
use crate::tui::rich::Tone;
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

/// Which way a figure should move.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Better {
    Higher,
    Lower,
    Neither,
}

/// Draws the comparison and the first-error histogram side by side.
pub fn draw(frame: &mut Frame, area: Rect, app: &App, analysis: &Analysis) {
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(60), Constraint::Fill(1)]).areas(area);
    draw_comparison(frame, left, app, analysis);
    draw_first_error(frame, right, &app.theme, analysis);
}

fn per_hundred(version: &VersionStats, kind: ErrorKind) -> Option<f64> {
    (version.trajectories > 0)
        .then(|| 100.0 * version.kinds.confirmed(kind) as f64 / version.trajectories as f64)
}

fn draw_comparison(frame: &mut Frame, area: Rect, app: &App, analysis: &Analysis) {
    let theme = &app.theme;
    let versions = &analysis.versions;
    let after_index = app.tabs.stats.scroll.min(versions.len().saturating_sub(1));
    let before_index = app
        .tabs
        .stats
        .pinned
        .unwrap_or(0)
        .min(versions.len().saturating_sub(1));
    let (Some(before), Some(after)) = (versions.get(before_index), versions.get(after_index))
    else {
        frame.render_widget(pane(theme, Line::from(" before / after "), false), area);
        return;
    };
    let k = after.pass_at_k.iter().map(|p| p.k).max().unwrap_or(1);
    let mut rows = vec![
        compared(
            "accuracy".into(),
            before.accuracy(),
            after.accuracy(),
            Better::Higher,
            3,
        ),
        compared(
            "pass@1".into(),
            before.pass_at(1),
            after.pass_at(1),
            Better::Higher,
            3,
        ),
        compared(
            format!("pass@{k}"),
            before.pass_at(k),
            after.pass_at(k),
            Better::Higher,
            3,
        ),
        compared(
            "mean turns".into(),
            Some(before.mean_turns),
            Some(after.mean_turns),
            Better::Neither,
            2,
        ),
        compared(
            "mean chars".into(),
            before.mean_chars,
            after.mean_chars,
            Better::Neither,
            0,
        ),
        compared(
            "format ok".into(),
            before.format_correct,
            after.format_correct,
            Better::Higher,
            3,
        ),
        compared(
            "mean |err|".into(),
            before.numeric.and_then(|n| n.mean_absolute),
            after.numeric.and_then(|n| n.mean_absolute),
            Better::Lower,
            2,
        ),
    ];
    for kind in app.label_kinds.kinds() {
        rows.push(compared(
            format!("{} /100", app.label_kinds.name(kind)),
            per_hundred(before, kind),
            per_hundred(after, kind),
            Better::Lower,
            1,
        ));
    }
    let show = |value: Option<f64>, decimals: u8| {
        value.map_or_else(
            || "–".to_string(),
            |value| format!("{value:.*}", decimals as usize),
        )
    };
    let mut lines = vec![Line::from(span(
        theme,
        Tone::Muted,
        format!(
            "{:<20} {:>10} {:>10} {:>10}",
            "", "A before", "B after", "change"
        ),
    ))];
    for Compared {
        name,
        before: a,
        after: b,
        better,
        decimals,
    } in rows
    {
        let (change, tone) = match (a, b) {
            (Some(a), Some(b)) => {
                let delta = b - a;
                let tone = match better {
                    _ if delta.abs() < 1e-12 => Tone::Muted,
                    Better::Higher if delta > 0.0 => Tone::Pass,
                    Better::Lower if delta < 0.0 => Tone::Pass,
                    Better::Neither => Tone::Muted,
                    _ => Tone::Fail,
                };
                (format!("{delta:+.*}", decimals as usize), tone)
            }
            _ => ("–".to_string(), Tone::Muted),
        };
        lines.push(Line::from(vec![
            span(theme, Tone::Text, format!("{name:<20} ")),
            span(
                theme,
                Tone::Muted,
                format!("{:>10} {:>10} ", show(a, decimals), show(b, decimals)),
            ),
            span(theme, tone, format!("{change:>10}")),
        ]));
    }
    let pin = app.keymap.first_key(crate::tui::action::Action::Pin);
    let title = format!(
        " before / after · A {} → B {} · {pin} pins A ",
        inert(&before.name()),
        inert(&after.name())
    );
    frame.render_widget(
        Paragraph::new(lines).block(pane(
            theme,
            Line::from(span(theme, Tone::Accent, title)),
            false,
        )),
        area,
    );
}

fn draw_first_error(frame: &mut Frame, area: Rect, theme: &Theme, analysis: &Analysis) {
    let confirmed = &analysis.first_error.confirmed;
    let suggested = &analysis.first_error.suggested;
    let steps = confirmed.len().max(suggested.len());
    let max = (0..steps)
        .map(|step| confirmed.get(step).unwrap_or(&0) + suggested.get(step).unwrap_or(&0))
        .max()
        .unwrap_or(0);
    let width = usize::from(area.width.saturating_sub(24)).clamp(1, 30);
    let mut lines = vec![Line::from(span(
        theme,
        Tone::Muted,
        "step  confirmed · suggested",
    ))];
    let rows = usize::from(area.height.saturating_sub(3))
        .saturating_sub(analysis.sources.len().min(4) + 1);
    for step in 0..steps.min(rows) {
        let c = confirmed.get(step).copied().unwrap_or(0);
        let s = suggested.get(step).copied().unwrap_or(0);
        let confirmed_bar = bar(c, max, width);
        let both = bar(c + s, max, width).chars().count();
        let suggested_bar = "▒".repeat(both.saturating_sub(confirmed_bar.chars().count()));
        lines.push(Line::from(vec![
            span(theme, Tone::Text, format!("t{:<4}", step + 1)),
            span(theme, Tone::Confirmed, confirmed_bar),
            span(theme, Tone::Suggested, suggested_bar),
            span(theme, Tone::Muted, format!(" {c} · {s}")),
        ]));
    }
    if steps == 0 {
        lines.push(Line::from(span(theme, Tone::Muted, "no labels yet")));
    }
    lines.push(Line::from(span(
        theme,
        Tone::Muted,
        "task source   rollouts  pass",
    )));
    for source in analysis.sources.iter().take(4) {
        let judged = source.passed + source.failed;
        lines.push(Line::from(span(
            theme,
            Tone::Text,
            format!(
                "{:<13} {:>8}  {}",
                crate::text::clip(&inert(&source.name), 12),
                source.trajectories,
                if judged == 0 {
                    "–".to_string()
                } else {
                    format!("{:.0}%", 100.0 * source.passed as f64 / judged as f64)
                }
            ),
        )));
    }
    frame.render_widget(
        Paragraph::new(lines).block(pane(
            theme,
            Line::from(span(theme, Tone::Accent, " first error at step ")),
            false,
        )),
        area,
    );
}

/// One row of the before/after table: a figure, its value before and after, which way is
/// better, and the decimals shown.
struct Compared {
    name: String,
    before: Option<f64>,
    after: Option<f64>,
    better: Better,
    decimals: u8,
}

fn compared(
    name: String,
    before: Option<f64>,
    after: Option<f64>,
    better: Better,
    decimals: u8,
) -> Compared {
    Compared {
        name,
        before,
        after,
        better,
        decimals,
    }
}
