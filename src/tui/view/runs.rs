//! The Runs tab: the run list, the reward chart with its ± std band (an SFT run's loss), and
//! small charts of the other metrics (the kind's preset, or the metrics chosen with the
//! picker), with the pinned runs' curves overlaid in colours of their own; or, toggled, the
//! runs side by side in a table (`run_table`). Which metrics: `charts`; series and bounds: `series`.

use super::run_charts::{draw_loss, draw_reward, draw_small_charts};
use super::run_curves::{Curves, Overlay};
use super::run_table::{draw_picker, draw_table};
use super::widgets::{pane, span};
use crate::text::inert;
use crate::trajectory::metric;
use crate::trajectory::{MetricsRow, RunKind, RunStatus};
use crate::tui::app::App;
use crate::tui::charts;
use crate::tui::rich::Tone;
use crate::tui::series;
use crate::tui::state::runs;
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

/// Draws the Runs tab.
pub fn draw(frame: &mut Frame, area: Rect, app: &App) {
    let theme = &app.theme;
    let tab = &app.tabs.runs;
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
    let kind = tab.selected_run().map(|run| run.kind);
    let selected = tab.metrics_run.as_deref();
    let curves = Curves {
        rows: &tab.rows,
        selected: selected.unwrap_or_default(),
        overlays: tab
            .charts
            .overlays(selected)
            .into_iter()
            .map(|(place, pinned)| Overlay {
                run: &pinned.id,
                rows: &pinned.rows,
                color: theme.pin_color(place),
            })
            .collect(),
        smoothing: tab.smoothing,
        small: charts::small_charts(kind, &tab.charts.chosen),
        cursor: tab.cursor.marked(&tab.rows).map(|row| row.step),
    };
    match kind {
        Some(RunKind::Sft) => draw_loss(frame, reward, theme, &curves, total_steps(app)),
        _ => draw_reward(frame, reward, theme, &curves, total_steps(app)),
    }
    if tab.charts.table {
        draw_table(frame, bottom, theme, &curves);
    } else {
        draw_small_charts(frame, bottom, theme, &curves);
    }
    if footer.height > 0 {
        let row = tab.cursor.row(&tab.rows);
        frame.render_widget(Paragraph::new(cursor_line(theme, &curves, row)), footer);
    }
    if let Some(picker) = &tab.charts.picker {
        draw_picker(frame, area, theme, picker, &tab.charts.chosen);
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
                let pin = app
                    .tabs
                    .runs
                    .charts
                    .pinned
                    .iter()
                    .position(|pinned| pinned.id == run.id);
                let marker = match pin {
                    Some(place) => Span::styled("◆", Style::new().fg(theme.pin_color(place))),
                    None => Span::raw(" "),
                };
                let text = format!(
                    "{:<11} {:<8} {:>5}/{:<5}",
                    inert(&run.id),
                    run.status.as_str(),
                    run.step,
                    run.total_steps
                );
                if index == app.tabs.runs.selected {
                    Line::from(vec![marker, Span::styled(text, theme.selected())])
                } else {
                    Line::from(vec![marker, span(theme, tone, text)])
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
    let main = [metric::REWARD, metric::LOSS];
    for metric in curves
        .small
        .iter()
        .filter(|metric| !metric.is_one_of(&main))
    {
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
