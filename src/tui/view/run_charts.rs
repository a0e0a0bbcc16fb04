//! The Runs tab's charts: the reward with its ± std band (an SFT run's loss) and the small
//! charts, each with the pinned runs' lines in their colours; the runs' colours are named in
//! the main chart's title (no legend box over the lines) and each small chart's title holds
//! every run's latest value in its colour.

use super::run_curves::Curves;
use super::widgets::{pane, span};
use crate::text::inert;
use crate::tui::charts::{self, Metric};
use crate::tui::rich::Tone;
use crate::tui::series::{self, Points};
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Chart, Dataset, GraphType, Paragraph};

/// The main chart of a run with rewards: its mean reward with the ± std band.
pub(super) fn draw_reward(
    frame: &mut Frame,
    area: Rect,
    theme: &Theme,
    curves: &Curves,
    steps: Option<(u64, u64)>,
) {
    let (mean, lower, upper) = series::reward_band(curves.rows);
    let (mean, lower, upper) = (
        curves.smooth(mean),
        curves.smooth(lower),
        curves.smooth(upper),
    );
    let overlays = curves.overlay_points(&Metric::reward());
    let mut title = format!(
        " reward (mean ± std{}) ",
        if curves.smoothing { ", smoothed" } else { "" }
    );
    if let Some((step, total)) = steps {
        title.push_str(&format!("· step {step}/{total} "));
    }
    let pinned_alone = mean.is_empty() && overlays.iter().any(|(_, points)| !points.is_empty());
    if mean.is_empty() && !pinned_alone {
        draw_no_metrics(frame, area, theme, &title);
        return;
    }
    if pinned_alone {
        title.push_str("· no metrics for this run: the pinned runs alone ");
    }
    let per_step = usize::from(area.width) * 2 / mean.len().max(1) + 1;
    let band = series::band_fill(&lower, &upper, per_step);
    let mut datasets = vec![dataset(&band, theme.chart_band)];
    let mut all: Vec<&[(f64, f64)]> = vec![&mean, &lower, &upper];
    for (color, points) in &overlays {
        datasets.push(dataset(points, *color));
        all.push(points);
    }
    datasets.push(dataset(&mean, theme.chart_main));
    let (x, y) = series::bounds(&all);
    let cursor = curves.cursor_points(y);
    datasets.push(dataset(&cursor, theme.accent));
    let title = Line::from(span(theme, Tone::Accent, title));
    let keys = run_keys(curves, theme.chart_main, area.width, &title);
    let chart = Chart::new(datasets)
        .block(with_keys(pane(theme, title, false), keys))
        .x_axis(step_axis(theme, x, ticks(area.width, 12)).title("step"))
        .y_axis(value_axis(theme, y, ticks(area.height, 4)));
    frame.render_widget(chart, area);
}

/// An SFT run's main chart: its loss by step.
pub(super) fn draw_loss(
    frame: &mut Frame,
    area: Rect,
    theme: &Theme,
    curves: &Curves,
    steps: Option<(u64, u64)>,
) {
    let suffix = steps.map_or_else(String::new, |(step, total)| {
        format!("· step {step}/{total} ")
    });
    let chart = LineChart {
        metric: &Metric::loss(),
        suffix: &suffix,
        axes: (ticks(area.width, 12), ticks(area.height, 4)),
        color: theme.chart_main,
        keys: true,
    };
    draw_line(frame, area, theme, curves, &chart);
}

/// The small charts under the main one, as many columns as fit.
pub(super) fn draw_small_charts(frame: &mut Frame, area: Rect, theme: &Theme, curves: &Curves) {
    if area.height < 3 || area.width < 10 {
        return;
    }
    let count = curves.small.len();
    let columns = [count, count.div_ceil(2), 2]
        .into_iter()
        .find(|columns| *columns > 0 && usize::from(area.width) / columns >= 18)
        .unwrap_or(1);
    let chart_rows = count.div_ceil(columns).max(1);
    let fitting_rows = usize::from(area.height / 4).clamp(1, chart_rows);
    let row_areas = Layout::vertical(vec![Constraint::Fill(1); fitting_rows]).split(area);
    for (row_index, row_area) in row_areas.iter().enumerate() {
        let cells = Layout::horizontal(vec![Constraint::Fill(1); columns]).split(*row_area);
        for (column, cell) in cells.iter().enumerate() {
            if let Some(metric) = curves.small.get(row_index * columns + column) {
                let chart = LineChart {
                    metric,
                    suffix: "",
                    axes: (
                        usize::from(cell.height >= 6) * 2,
                        usize::from(cell.width >= 14) * 2,
                    ),
                    color: theme.chart_alt,
                    keys: false,
                };
                draw_line(frame, *cell, theme, curves, &chart);
            }
        }
    }
}

/// A line chart of one metric: what follows its title, how many labels each axis has, the
/// selected run's colour, and whether the title names the runs by colour (the main chart) or
/// only gives their latest values (a small chart).
struct LineChart<'a> {
    metric: &'a Metric,
    suffix: &'a str,
    axes: (usize, usize),
    color: Color,
    keys: bool,
}

/// One metric's line by step (with the pinned runs' beside it), every run's latest value in
/// the title in its colour.
fn draw_line(frame: &mut Frame, area: Rect, theme: &Theme, curves: &Curves, chart: &LineChart) {
    let LineChart {
        metric,
        suffix,
        axes,
        color,
        keys,
    } = *chart;
    let points = curves.smooth(charts::points(curves.rows, metric));
    let overlays = curves.overlay_points(metric);
    let latest = series::latest(&points).map_or_else(|| "–".to_string(), series::axis_label);
    let mut title = vec![
        span(theme, Tone::Muted, format!(" {} ", inert(&metric.title))),
        Span::styled(format!("{latest} "), Style::new().fg(color)),
    ];
    let mut all: Vec<&[(f64, f64)]> = vec![&points];
    let mut datasets = Vec::new();
    for (color, other) in &overlays {
        if let Some(value) = series::latest(other) {
            title.push(Span::styled(
                format!("{} ", series::axis_label(value)),
                Style::new().fg(*color),
            ));
        }
        datasets.push(dataset(other, *color));
        all.push(other);
    }
    title.push(span(theme, Tone::Muted, suffix.to_string()));
    let pinned_alone = points.is_empty() && overlays.iter().any(|(_, other)| !other.is_empty());
    if points.is_empty() && !pinned_alone {
        let plain: String = title.iter().map(|span| span.content.as_ref()).collect();
        draw_no_metrics(frame, area, theme, &plain);
        return;
    }
    datasets.push(dataset(&points, color));
    let (x, y) = series::bounds(&all);
    let cursor = curves.cursor_points(y);
    datasets.push(dataset(&cursor, theme.accent));
    let title = Line::from(title);
    let run_keys = match keys {
        true => run_keys(curves, color, area.width, &title),
        false => None,
    };
    let chart = Chart::new(datasets)
        .block(with_keys(pane(theme, title, false), run_keys))
        .x_axis(step_axis(theme, x, axes.0))
        .y_axis(value_axis(theme, y, axes.1));
    frame.render_widget(chart, area);
}

/// The runs named in their colours (`━ grpo-0002 ━ …`) when pinned runs are overlaid and
/// the names fit beside `title` in `width` cells (the run list's `◆` marks give the colours
/// too).
fn run_keys<'a>(curves: &Curves, selected: Color, width: u16, title: &Line) -> Option<Line<'a>> {
    if curves.overlays.is_empty() {
        return None;
    }
    let key = |run: &str, color: Color| {
        Span::styled(format!("━ {} ", inert(run)), Style::new().fg(color))
    };
    let mut spans = vec![key(curves.selected, selected)];
    spans.extend(
        curves
            .overlays
            .iter()
            .map(|overlay| key(overlay.run, overlay.color)),
    );
    let keys = Line::from(spans).right_aligned();
    (title.width() + keys.width() + 4 <= usize::from(width)).then_some(keys)
}

/// The block with the run names at its top right, if any.
fn with_keys<'a>(block: Block<'a>, keys: Option<Line<'a>>) -> Block<'a> {
    match keys {
        Some(keys) => block.title_top(keys),
        None => block,
    }
}

/// How many ticks fit along `cells` cells, one per `every`, between 2 and 6.
fn ticks(cells: u16, every: u16) -> usize {
    usize::from(cells / every.max(1)).clamp(2, 6)
}

/// A chart's pane saying its run has no metrics.
fn draw_no_metrics(frame: &mut Frame, area: Rect, theme: &Theme, title: &str) {
    let block = pane(
        theme,
        Line::from(span(theme, Tone::Muted, title.to_string())),
        false,
    );
    let text = Line::from(span(theme, Tone::Muted, "no metrics for this run")).centered();
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.height > 0 {
        let middle = Rect::new(inner.x, inner.y + inner.height / 2, inner.width, 1);
        frame.render_widget(Paragraph::new(text), middle);
    }
}

fn dataset(points: &Points, color: Color) -> Dataset<'_> {
    Dataset::default()
        .marker(Marker::Braille)
        .graph_type(GraphType::Line)
        .style(Style::new().fg(color))
        .data(points)
}

/// A step axis with `count` whole-step labels (none when `count` is 0).
fn step_axis<'a>(theme: &Theme, bounds: [f64; 2], count: usize) -> Axis<'a> {
    let axis = Axis::default().style(theme.style(Tone::Dim)).bounds(bounds);
    match count {
        0 => axis,
        _ => axis.labels(series::step_ticks(bounds, count)),
    }
}

/// A value axis with `count` labels (none when `count` is 0).
fn value_axis<'a>(theme: &Theme, bounds: [f64; 2], count: usize) -> Axis<'a> {
    let axis = Axis::default().style(theme.style(Tone::Dim)).bounds(bounds);
    match count {
        0 => axis,
        _ => axis.labels(series::value_ticks(bounds, count)),
    }
}
