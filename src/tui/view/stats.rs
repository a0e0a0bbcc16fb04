//! The Stats tab: error kinds (confirmed and suggested) per policy version as bars, with
//! accuracy and the suggested-label precision; below, the before/after comparison of two
//! versions and where first errors occur.

use super::shell::thousands;
use super::stats_compare;
use super::widgets::{bar, pane, span};
use crate::curate::analysis::{Analysis, VersionStats};
use crate::text::inert;
use crate::trajectory::ErrorKind;
use crate::tui::app::App;
use crate::tui::rich::Tone;
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// Width of the version column.
const NAME_WIDTH: usize = 24;
/// Height of the comparison band, when the screen has room for it.
const LOWER_HEIGHT: u16 = 15;

/// Draws the Stats tab.
pub fn draw(frame: &mut Frame, area: Rect, app: &App) {
    let theme = &app.theme;
    let Some(overview) = &app.overview.counts else {
        let text = if app.overview.loading {
            " counting… "
        } else {
            " stats "
        };
        frame.render_widget(
            pane(theme, Line::from(span(theme, Tone::Muted, text)), true),
            area,
        );
        return;
    };
    let analysis = &overview.analysis;
    let lower = if area.height >= 2 * LOWER_HEIGHT {
        LOWER_HEIGHT
    } else {
        0
    };
    let [table, below] =
        Layout::vertical([Constraint::Fill(1), Constraint::Length(lower)]).areas(area);
    let stale = app
        .overview
        .stale
        .then(|| app.keymap.first_key(crate::tui::action::Action::Refresh));
    draw_table(frame, table, app, analysis, stale);
    if lower > 0 {
        stats_compare::draw(frame, below, app, analysis);
    }
}

fn draw_table(
    frame: &mut Frame,
    area: Rect,
    app: &App,
    analysis: &Analysis,
    stale: Option<String>,
) {
    let theme = &app.theme;
    let inner = usize::from(area.width.saturating_sub(2));
    let kinds = app.label_kinds.kinds();
    let column = (inner.saturating_sub(NAME_WIDTH + 12) / kinds.len()).max(8);
    let mut lines = vec![header(theme, app, &kinds, column)];
    let rows = usize::from(area.height.saturating_sub(4)).max(1);
    let versions = &analysis.versions;
    let cursor = app.tabs.stats.scroll.min(versions.len().saturating_sub(1));
    let first = cursor.saturating_sub(rows.saturating_sub(1));
    let max = versions
        .iter()
        .flat_map(|version| {
            kinds
                .iter()
                .map(|&kind| version.kinds.confirmed(kind) + version.kinds.suggested(kind))
        })
        .max()
        .unwrap_or(0);
    for (index, version) in versions.iter().enumerate().skip(first).take(rows) {
        let marker = match (index == cursor, app.tabs.stats.pinned == Some(index)) {
            (true, true) => "▶A",
            (true, false) => "▶B",
            (false, true) => " A",
            (false, false) => "  ",
        };
        lines.push(version_line(theme, marker, version, &kinds, column, max));
    }
    lines.push(precision_line(theme, analysis, &kinds, column));
    let title = format!(
        " error kinds by policy version · {} trajectories · {} pass · {} fail{} ",
        thousands(analysis.trajectories),
        thousands(analysis.passed),
        thousands(analysis.failed),
        stale.map_or(String::new(), |key| format!(
            " · labels changed: {key} recounts"
        ))
    );
    frame.render_widget(
        Paragraph::new(lines).block(pane(
            theme,
            Line::from(span(theme, Tone::Accent, title)),
            true,
        )),
        area,
    );
}

fn header<'a>(theme: &Theme, app: &App, kinds: &[ErrorKind], column: usize) -> Line<'a> {
    let mut spans = vec![span(
        theme,
        Tone::Muted,
        format!("  {:<NAME_WIDTH$}", "version"),
    )];
    for &kind in kinds {
        let name = crate::text::clip(app.label_kinds.name(kind), column.saturating_sub(1));
        spans.push(span(
            theme,
            Tone::Muted,
            format!("{:<column$}", inert(&name)),
        ));
    }
    spans.push(span(theme, Tone::Muted, format!("{:>9}", "accuracy")));
    Line::from(spans)
}

fn version_line<'a>(
    theme: &Theme,
    marker: &str,
    version: &VersionStats,
    kinds: &[ErrorKind],
    column: usize,
    max: usize,
) -> Line<'a> {
    let name = crate::text::clip(&version.name(), NAME_WIDTH - 1).into_owned();
    let mut spans: Vec<Span> = vec![
        span(theme, Tone::Accent, marker.to_string()),
        span(theme, Tone::Text, format!("{:<NAME_WIDTH$}", inert(&name))),
    ];
    let bar_width = column.saturating_sub(9).max(1);
    for &kind in kinds {
        let confirmed = version.kinds.confirmed(kind);
        let suggested = version.kinds.suggested(kind);
        let confirmed_bar = bar(confirmed, max, bar_width);
        let suggested_bar = bar(confirmed + suggested, max, bar_width)
            .chars()
            .skip(confirmed_bar.chars().count())
            .map(|_| '▒')
            .collect::<String>();
        let used = confirmed_bar.chars().count() + suggested_bar.chars().count();
        let numbers = if suggested > 0 {
            format!(" {confirmed}+{suggested}?")
        } else {
            format!(" {confirmed}")
        };
        let pad = column.saturating_sub(used + numbers.chars().count());
        spans.push(span(theme, Tone::Confirmed, confirmed_bar));
        spans.push(span(theme, Tone::Suggested, suggested_bar));
        spans.push(span(
            theme,
            Tone::Muted,
            format!("{numbers}{}", " ".repeat(pad)),
        ));
    }
    let accuracy = version.accuracy();
    spans.push(span(
        theme,
        accuracy.map_or(Tone::Muted, Tone::of_score),
        format!("{:>9}", accuracy.map_or("–".into(), |a| format!("{a:.3}"))),
    ));
    Line::from(spans)
}

fn precision_line<'a>(
    theme: &Theme,
    analysis: &Analysis,
    kinds: &[ErrorKind],
    column: usize,
) -> Line<'a> {
    let label = format!("  {:<NAME_WIDTH$}", "precision vs confirmed");
    let mut spans = vec![span(theme, Tone::Accent, label)];
    match &analysis.precision {
        Some(precision) => {
            for &kind in kinds {
                let figures = kind.is_builtin().then(|| precision.kind(kind));
                let text =
                    match figures.and_then(|figures| figures.precision().map(|p| (p, figures))) {
                        Some((value, figures)) => format!("{value:.2} of {}", figures.suggested),
                        None => "–".to_string(),
                    };
                spans.push(span(theme, Tone::Suggested, format!("{text:<column$}")));
            }
        }
        None if analysis.from_records => spans.push(span(
            theme,
            Tone::Muted,
            "suggested-label precision: no confirmed labels yet",
        )),
        None => spans.push(span(
            theme,
            Tone::Muted,
            "suggested-label precision: not computed",
        )),
    }
    Line::from(spans)
}
