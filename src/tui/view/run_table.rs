//! The Runs tab's table of runs side by side (the selected run and the pinned ones, one
//! column each, a row per chart: the final value and the best, the best final among the
//! runs marked) and the metric picker drawn over the tab.

use super::run_curves::Curves;
use super::widgets::{pane, span};
use crate::text::inert;
use crate::trajectory::{MetricsRow, metric};
use crate::tui::charts::{self, Metric};
use crate::tui::layout;
use crate::tui::metric_picker::MetricPicker;
use crate::tui::rich::Tone;
use crate::tui::series;
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Clear, Paragraph, Row, Table};

/// The width of the metric column.
const METRIC_WIDTH: usize = 22;

/// Draws the runs side by side: a column per run, a row per chart.
pub(super) fn draw_table(frame: &mut Frame, area: Rect, theme: &Theme, curves: &Curves) {
    let mut runs: Vec<(&str, &[MetricsRow], Color)> =
        vec![(curves.selected, curves.rows, theme.chart_main)];
    runs.extend(
        curves
            .overlays
            .iter()
            .map(|overlay| (overlay.run, overlay.rows, overlay.color)),
    );
    let header = Row::new(
        std::iter::once(Cell::from(span(theme, Tone::Muted, "final (best)"))).chain(
            runs.iter().map(|(run, _, color)| {
                Cell::from(Span::styled(inert(run), Style::new().fg(*color)))
            }),
        ),
    );
    let mut metrics = vec![Metric::reward(), Metric::loss()];
    let main = [metric::REWARD, metric::LOSS];
    metrics.extend(
        curves
            .small
            .iter()
            .filter(|chart| !chart.is_one_of(&main))
            .cloned(),
    );
    let rows = metrics.iter().filter_map(|metric| {
        let values: Vec<Option<(f64, f64)>> = runs
            .iter()
            .map(|(_, rows, _)| charts::final_and_best(rows, metric))
            .collect();
        values
            .iter()
            .any(Option::is_some)
            .then(|| metric_row(theme, metric, &values))
    });
    let mut widths = vec![Constraint::Length(METRIC_WIDTH as u16)];
    widths.extend(runs.iter().map(|_| Constraint::Fill(1)));
    let title = Line::from(span(
        theme,
        Tone::Accent,
        " Runs side by side · space pins a run · t: the charts again ",
    ));
    let table = Table::new(rows.collect::<Vec<_>>(), widths)
        .header(header)
        .block(pane(theme, title, false));
    frame.render_widget(table, area);
}

/// A chart's row: each run's final value and best, the best final among them marked.
fn metric_row<'a>(theme: &Theme, metric: &Metric, values: &[Option<(f64, f64)>]) -> Row<'a> {
    let lower = charts::lower_is_better(&metric.title);
    let finals = values.iter().flatten().map(|(last, _)| *last);
    let best_final = if lower {
        finals.fold(f64::INFINITY, f64::min)
    } else {
        finals.fold(f64::NEG_INFINITY, f64::max)
    };
    let several = values.iter().flatten().count() > 1;
    let cells = values.iter().map(|value| match value {
        None => Cell::from(span(theme, Tone::Dim, "–")),
        Some((last, best)) => {
            let text = format!(
                "{} ({})",
                series::axis_label(*last),
                series::axis_label(*best)
            );
            let mut style = theme.style(Tone::Text);
            if several && *last == best_final {
                style = theme.style(Tone::Pass).add_modifier(Modifier::BOLD);
            }
            Cell::from(Span::styled(text, style))
        }
    });
    let title = crate::text::clip(&inert(&metric.title), METRIC_WIDTH - 2).into_owned();
    Row::new(std::iter::once(Cell::from(span(theme, Tone::Muted, title))).chain(cells))
}

/// Draws the picker centred over `area`: the query, the matching metrics (`✓` on those
/// charted), the highlighted one selected.
pub(super) fn draw_picker(
    frame: &mut Frame,
    area: Rect,
    theme: &Theme,
    picker: &MetricPicker,
    chosen: &[String],
) {
    let height = area.height.clamp(6, 22);
    let box_area = layout::centered(area, 64, height);
    let matches = picker.matches();
    let room = usize::from(height.saturating_sub(5)).max(1);
    let first = picker.highlighted.saturating_sub(room - 1);
    let mut lines = vec![Line::from(vec![
        span(theme, Tone::Accent, "› "),
        span(theme, Tone::Text, inert(&picker.query).into_owned()),
        span(theme, Tone::Accent, "▏"),
    ])];
    if matches.is_empty() {
        let text = match picker.names.is_empty() {
            true => "the shown runs record no metrics yet",
            false => "no metric holds every word typed",
        };
        lines.push(Line::from(span(theme, Tone::Muted, text)));
    }
    for (index, name) in matches.iter().enumerate().skip(first).take(room) {
        let charted = chosen.iter().any(|chosen| chosen == name);
        let text = format!("{} {}", if charted { "✓" } else { " " }, inert(name));
        lines.push(match index == picker.highlighted {
            true => Line::styled(text, theme.selected()),
            false => Line::from(span(theme, Tone::Text, text)),
        });
    }
    let charted = match chosen.len() {
        0 => "charted: the preset of the run's kind".to_string(),
        count => format!("{count} charted · take them all off for the preset"),
    };
    lines.push(Line::from(span(
        theme,
        Tone::Muted,
        format!("{} of {} · {charted}", matches.len(), picker.names.len()),
    )));
    let title = Line::from(span(
        theme,
        Tone::Accent,
        " Charts · type to narrow · enter adds or removes · esc closes ",
    ));
    frame.render_widget(Clear, box_area);
    frame.render_widget(
        Paragraph::new(lines)
            .style(theme.base_style())
            .block(pane(theme, title, true)),
        box_area,
    );
}
