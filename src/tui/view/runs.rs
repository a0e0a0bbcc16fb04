//! The Runs tab: the run list, the reward chart with its ± std band, and small charts of
//! the other metrics, with a pinned run's curves overlaid; series and bounds come from
//! `series`.

use super::widgets::{pane, span};
use crate::text::inert;
use crate::trajectory::metric;
use crate::trajectory::{MetricsRow, RunKind, RunStatus};
use crate::tui::app::App;
use crate::tui::rich::Tone;
use crate::tui::series::{self, Metric, Points, SMOOTHING};
use crate::tui::state::runs;
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::symbols::Marker;
use ratatui::text::Line;
use ratatui::widgets::{Axis, Chart, Dataset, GraphType, Paragraph, Wrap};

/// Draws the Runs tab.
pub fn draw(frame: &mut Frame, area: Rect, app: &App) {
    let theme = &app.theme;
    let [top, bottom, footer] = Layout::vertical([
        Constraint::Percentage(55),
        Constraint::Fill(1),
        Constraint::Length(u16::from(area.height >= 8)),
    ])
    .areas(area);
    let list_width = if top.width >= 80 { 36 } else { top.width / 2 };
    let [list, reward] =
        Layout::horizontal([Constraint::Length(list_width), Constraint::Fill(1)]).areas(top);
    draw_run_list(frame, list, app);
    let kind = app.tabs.runs.selected_run().map(|run| run.kind);
    let curves = Curves {
        rows: &app.tabs.runs.rows,
        selected: app.tabs.runs.metrics_run.as_deref().unwrap_or_default(),
        overlay: app.tabs.runs.overlay(),
        smoothing: app.tabs.runs.smoothing,
        small: series::small_charts(kind),
        cursor: app
            .tabs
            .runs
            .cursor
            .marked(&app.tabs.runs.rows)
            .map(|row| row.step),
    };
    match kind {
        Some(RunKind::Sft) => draw_loss(frame, reward, theme, &curves, total_steps(app)),
        _ => draw_reward(frame, reward, theme, &curves, total_steps(app)),
    }
    draw_small_charts(frame, bottom, theme, &curves);
    if footer.height > 0 {
        let row = app.tabs.runs.cursor.row(&app.tabs.runs.rows);
        frame.render_widget(Paragraph::new(cursor_line(theme, &curves, row)), footer);
    }
}

/// What the charts draw: the selected run's rows, the pinned run's, and smoothing.
struct Curves<'a> {
    rows: &'a [MetricsRow],
    selected: &'a str,
    overlay: Option<(&'a str, &'a [MetricsRow])>,
    smoothing: bool,
    small: &'static [Metric],
    /// The step the user put the cursor on, marked on every chart.
    cursor: Option<u64>,
}

impl Curves<'_> {
    fn smooth(&self, points: Points) -> Points {
        if self.smoothing {
            series::smooth(&points, SMOOTHING)
        } else {
            points
        }
    }

    /// The cursor's vertical line across `y`, when the user put it on a step.
    fn cursor_points(&self, y: [f64; 2]) -> Vec<(f64, f64)> {
        self.cursor
            .map(|step| vec![(step as f64, y[0]), (step as f64, y[1])])
            .unwrap_or_default()
    }

    /// The pinned run's id and its points of `metric`.
    fn overlay_points(&self, metric: &Metric) -> Option<(&str, Points)> {
        let (run, rows) = self.overlay?;
        Some((run, self.smooth(series::points(rows, metric))))
    }
}

fn total_steps(app: &App) -> Option<(u64, u64)> {
    app.tabs
        .runs
        .selected_run()
        .map(|run| (run.step, run.total_steps))
}

fn draw_run_list(frame: &mut Frame, area: Rect, app: &App) {
    let theme = &app.theme;
    let mut lines: Vec<Line> = if app.tabs.runs.runs.is_empty() {
        let text = if app.tabs.runs.loaded {
            "no runs yet"
        } else {
            "loading…"
        };
        vec![Line::from(span(theme, Tone::Muted, text))]
    } else {
        app.tabs
            .runs
            .runs
            .iter()
            .enumerate()
            .map(|(index, run)| {
                let tone = match run.status {
                    RunStatus::Running => Tone::Pass,
                    RunStatus::Failed | RunStatus::Interrupted => Tone::Fail,
                    RunStatus::Paused => Tone::Warn,
                    RunStatus::Done | RunStatus::Stopped => Tone::Muted,
                };
                let pinned = app.tabs.runs.overlay_run.as_ref() == Some(&run.id);
                let text = format!(
                    "{}{:<11} {:<8} {:>5}/{:<5}",
                    if pinned { "◆" } else { " " },
                    inert(&run.id),
                    run.status.as_str(),
                    run.step,
                    run.total_steps
                );
                if index == app.tabs.runs.selected {
                    Line::styled(text, theme.selected())
                } else {
                    Line::from(span(theme, tone, text))
                }
            })
            .collect()
    };
    if let Some(live) = app.tabs.runs.live() {
        let tone = match live.status {
            RunStatus::Paused => Tone::Warn,
            _ => Tone::Pass,
        };
        let text = format!("▶ {} {}", inert(&live.id), runs::describe(live));
        let room = usize::from(area.height.saturating_sub(2));
        if lines.len() + 1 < room {
            lines.push(Line::default());
        }
        lines.push(Line::from(span(theme, tone, text)));
    }
    if let Some(text) = app.tabs.runs.main_job_line() {
        lines.push(Line::from(span(theme, Tone::Accent, text)));
    }
    frame.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: false }).block(pane(
            theme,
            Line::from(span(theme, Tone::Accent, " Runs ")),
            true,
        )),
        area,
    );
}

fn draw_reward(
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
    let overlay = curves.overlay_points(&series::REWARD);
    let mut title = format!(
        " reward (mean ± std{}) ",
        if curves.smoothing { ", smoothed" } else { "" }
    );
    if let Some((step, total)) = steps {
        title.push_str(&format!("· step {step}/{total} "));
    }
    let pinned_alone = mean.is_empty()
        && overlay
            .as_ref()
            .is_some_and(|(_, points)| !points.is_empty());
    if mean.is_empty() && !pinned_alone {
        draw_no_metrics(frame, area, theme, &title);
        return;
    }
    if pinned_alone {
        title.push_str("· no metrics for this run: the pinned run alone, at its own scale ");
    }
    let per_step = usize::from(area.width) * 2 / mean.len().max(1) + 1;
    let band = series::band_fill(&lower, &upper, per_step);
    let mut datasets = vec![dataset(&band, theme.chart_band, Marker::Braille)];
    let mut all: Vec<&[(f64, f64)]> = vec![&mean, &lower, &upper];
    if let Some((run, points)) = &overlay {
        datasets.push(dataset(points, theme.chart_overlay, Marker::Braille).name(inert(run)));
        all.push(points);
    }
    let main = dataset(&mean, theme.chart_main, Marker::Braille);
    datasets.push(match overlay {
        Some(_) => main.name(inert(curves.selected)),
        None => main,
    });
    let (x, y) = series::bounds(&all);
    let cursor = curves.cursor_points(y);
    datasets.push(dataset(&cursor, theme.accent, Marker::Braille));
    let chart = Chart::new(datasets)
        .block(pane(
            theme,
            Line::from(span(theme, Tone::Accent, title)),
            false,
        ))
        .x_axis(step_axis(theme, x, ticks(area.width, 12)).title("step"))
        .y_axis(value_axis(theme, y, ticks(area.height, 4)).title("reward"));
    frame.render_widget(chart, area);
}

/// An SFT run's main chart: its loss by step.
fn draw_loss(
    frame: &mut Frame,
    area: Rect,
    theme: &Theme,
    curves: &Curves,
    steps: Option<(u64, u64)>,
) {
    let suffix = steps.map_or_else(String::new, |(step, total)| {
        format!("· step {step}/{total} ")
    });
    let axes = (ticks(area.width, 12), ticks(area.height, 4));
    draw_line(frame, area, theme, curves, &series::LOSS, &suffix, axes);
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

fn dataset(points: &[(f64, f64)], color: Color, marker: Marker) -> Dataset<'_> {
    Dataset::default()
        .marker(marker)
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

fn draw_small_charts(frame: &mut Frame, area: Rect, theme: &Theme, curves: &Curves) {
    if area.height < 3 || area.width < 10 {
        return;
    }
    let count = curves.small.len();
    let columns = [count, count.div_ceil(2), 2]
        .into_iter()
        .find(|columns| usize::from(area.width) / columns >= 18)
        .unwrap_or(1);
    let chart_rows = count.div_ceil(columns);
    let fitting_rows = usize::from(area.height / 4).clamp(1, chart_rows);
    let row_areas = Layout::vertical(vec![Constraint::Fill(1); fitting_rows]).split(area);
    for (row_index, row_area) in row_areas.iter().enumerate() {
        let cells = Layout::horizontal(vec![Constraint::Fill(1); columns]).split(*row_area);
        for (column, cell) in cells.iter().enumerate() {
            if let Some(metric) = curves.small.get(row_index * columns + column) {
                draw_small_chart(frame, *cell, theme, curves, metric);
            }
        }
    }
}

fn draw_small_chart(
    frame: &mut Frame,
    area: Rect,
    theme: &Theme,
    curves: &Curves,
    metric: &Metric,
) {
    let axes = (
        usize::from(area.height >= 6) * 2,
        usize::from(area.width >= 24) * 2,
    );
    draw_line(frame, area, theme, curves, metric, "", axes);
}

/// One metric's line by step (with the pinned run's beside it), its latest value in the
/// title, `axes` labels on the step and value axes.
fn draw_line(
    frame: &mut Frame,
    area: Rect,
    theme: &Theme,
    curves: &Curves,
    metric: &Metric,
    suffix: &str,
    axes: (usize, usize),
) {
    let points = curves.smooth(series::points(curves.rows, metric));
    let overlay = curves.overlay_points(metric);
    let latest = series::latest(&points).map_or_else(|| "–".to_string(), series::axis_label);
    let mut title = format!(" {} {latest} {suffix}", metric.title);
    let mut all: Vec<&[(f64, f64)]> = vec![&points];
    let mut datasets = Vec::new();
    if let Some((_, other)) = &overlay {
        if let Some(value) = series::latest(other) {
            title.push_str(&format!("vs {} ", series::axis_label(value)));
        }
        datasets.push(dataset(other, theme.chart_overlay, Marker::Braille));
        all.push(other);
    }
    let pinned_alone =
        points.is_empty() && overlay.as_ref().is_some_and(|(_, other)| !other.is_empty());
    if points.is_empty() && !pinned_alone {
        draw_no_metrics(frame, area, theme, &title);
        return;
    }
    datasets.push(dataset(&points, theme.chart_alt, Marker::Braille));
    let (x, y) = series::bounds(&all);
    let cursor = curves.cursor_points(y);
    datasets.push(dataset(&cursor, theme.accent, Marker::Braille));
    let chart = Chart::new(datasets)
        .block(pane(
            theme,
            Line::from(span(theme, Tone::Muted, title)),
            false,
        ))
        .x_axis(step_axis(theme, x, axes.0))
        .y_axis(value_axis(theme, y, axes.1));
    frame.render_widget(chart, area);
}

/// The values of the row under the step cursor (the newest row until the user moves it), and
/// what `←`/`→` and `enter` do from there.
fn cursor_line<'a>(theme: &Theme, curves: &Curves, row: Option<&MetricsRow>) -> Line<'a> {
    let Some(row) = row else {
        return Line::from(span(theme, Tone::Muted, " no metrics rows for this run"));
    };
    let mut parts = vec![match curves.cursor {
        Some(_) => format!(" ▸ step {}", row.step),
        None => format!(" step {}", row.step),
    }];
    if let Some(reward) = row.get(metric::REWARD) {
        let std = row
            .get(metric::REWARD_STD)
            .map_or(String::new(), |std| format!("±{std:.2}"));
        parts.push(format!("reward {reward:.2}{std}"));
    }
    if let Some(loss) = row.get(metric::LOSS) {
        parts.push(format!("loss {}", series::axis_label(loss)));
    }
    for metric in curves.small {
        if let Some(value) = metric.names.iter().find_map(|name| row.get(name)) {
            parts.push(format!("{} {}", metric.title, series::axis_label(value)));
        }
    }
    let hint = match curves.cursor {
        Some(_) => "  enter: this step's rollouts by group",
        None => "",
    };
    Line::from(vec![
        span(theme, Tone::Text, parts.join(" · ")),
        span(theme, Tone::Muted, hint),
    ])
}
