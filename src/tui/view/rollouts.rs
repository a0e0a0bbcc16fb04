//! The Rollouts list: only the visible rows are drawn, from the window the engine sent.

use super::preview;
use super::shell::thousands;
use super::widgets::{coordinates, decimal, pane, span, summary_labels, verdict_style};
use crate::text::inert;
use crate::tui::app::App;
use crate::tui::layout;
use crate::tui::rich::Tone;
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Row, Table};

const WIDTHS: [Constraint; 10] = [
    Constraint::Length(1),
    Constraint::Length(8),
    Constraint::Length(12),
    Constraint::Length(10),
    Constraint::Length(8),
    Constraint::Length(6),
    Constraint::Length(5),
    Constraint::Length(7),
    Constraint::Length(10),
    Constraint::Fill(1),
];

const HEADER: [&str; 10] = [
    "",
    "id",
    "task",
    "run·step",
    "group·s",
    "reward",
    "turns",
    "PRM min",
    "stop",
    "labels",
];

/// Draws the list and, when there is room, the preview.
pub fn draw(frame: &mut Frame, area: Rect, app: &App) {
    let (list_area, preview_area) = layout::rollouts(area);
    draw_list(frame, list_area, app);
    if let Some(preview_area) = preview_area {
        preview::draw(frame, preview_area, app);
    }
}

fn draw_list(frame: &mut Frame, area: Rect, app: &App) {
    let theme = &app.theme;
    let state = &app.tabs.rollouts.list;
    let listing = &state.listing;
    let mut title = Vec::new();
    if state.audit.is_some() {
        title.push(span(theme, Tone::Warn, " audit queue ·"));
    }
    title.push(span(
        theme,
        Tone::Accent,
        format!(" {} ", inert(&listing.filter.describe())),
    ));
    title.push(span(
        theme,
        Tone::Muted,
        match &state.audit {
            Some(audit) => match audit.audited {
                Some(audited) => {
                    format!("· high-reward, most suspicious first · {audited} audited ")
                }
                None => "· auditing… ".to_string(),
            },
            None => format!(
                "· sort {}{} ",
                listing.sort.as_str(),
                if listing.descending { " ↓" } else { "" }
            ),
        },
    ));
    let position = match state.matching {
        Some(0) => " none match ".to_string(),
        Some(matching) => format!(
            " {} of {} ",
            thousands(state.cursor + 1),
            thousands(matching)
        ),
        None => " counting… ".to_string(),
    };
    let mut block = pane(theme, Line::from(title), true)
        .title_top(Line::from(span(theme, Tone::Muted, position)).right_aligned());
    let evidence = state.audit.as_ref().and_then(|audit| {
        let finding = audit.finding(state.selected()?.id)?;
        let signs: Vec<String> = finding
            .signs
            .iter()
            .map(|sign| format!("{}: {}", sign.kind, sign.evidence))
            .collect();
        Some(signs.join(" · "))
    });
    if let Some(evidence) = evidence {
        block = block.title_bottom(Line::from(span(
            theme,
            Tone::Warn,
            format!(" {} ", inert(&evidence)),
        )));
    } else if let Some(progress) = app.queue.progress().filter(|_| app.queue.tag == state.tag) {
        block = block.title_bottom(Line::from(span(theme, Tone::Warn, format!(" {progress} "))));
    }
    let inner_height = usize::from(area.height.saturating_sub(3));
    let end = (state.top + inner_height).min(state.known_rows());
    let rows: Vec<Row> = (state.top..end)
        .map(|index| match state.row(index) {
            Some(summary) => {
                let (run_step, group_sample) = coordinates(summary);
                let marker = if index == state.cursor { "▶" } else { " " };
                let mut row = Row::new(vec![
                    Cell::from(marker),
                    Cell::from(summary.id.short(8)),
                    Cell::from(inert(&summary.task_id).into_owned()),
                    Cell::from(inert(&run_step).into_owned()),
                    Cell::from(group_sample),
                    Cell::from(Line::from(decimal(summary.reward)).right_aligned())
                        .style(verdict_style(theme, summary.passed)),
                    Cell::from(Line::from(summary.turns.to_string()).right_aligned()),
                    Cell::from(prm_cell(theme, summary.prm_min)),
                    Cell::from(inert(&summary.stop).into_owned()),
                    Cell::from(Line::from(
                        match state
                            .audit
                            .as_ref()
                            .and_then(|audit| audit.finding(summary.id))
                        {
                            Some(finding) => finding
                                .signs
                                .iter()
                                .map(|sign| span(theme, Tone::Warn, format!("{} ", sign.kind)))
                                .collect(),
                            None => summary_labels(theme, summary),
                        },
                    )),
                ]);
                if index == state.cursor {
                    row = row.style(theme.selected());
                }
                row
            }
            None => Row::new(vec![
                Cell::from(" "),
                Cell::from(span(theme, Tone::Dim, "…")),
            ]),
        })
        .collect();
    let header =
        Row::new(HEADER.iter().map(|title| Cell::from(*title))).style(theme.style(Tone::Muted));
    let table = Table::new(rows, WIDTHS)
        .header(header)
        .column_spacing(1)
        .block(block);
    frame.render_widget(table, area);
    if state.known_rows() == 0 && state.matching.is_some() && area.height > 4 {
        let hint = match &state.audit {
            Some(audit) => format!(
                "no high-reward rollout looks suspicious{}; `:audit` again closes the queue",
                audit
                    .audited
                    .map(|audited| format!(" ({audited} audited)"))
                    .unwrap_or_default()
            ),
            None if listing.filter.is_empty() => {
                "the store is empty: `rollscope import FILE` or `rollscope demo-data` fills it"
                    .into()
            }
            None => "no trajectory matches; `:filter all` clears the filter".into(),
        };
        let inner = Rect::new(area.x + 2, area.y + 2, area.width.saturating_sub(4), 1);
        frame.render_widget(span(theme, Tone::Muted, hint), inner);
    }
}

fn prm_cell<'a>(theme: &crate::tui::theme::Theme, value: Option<f64>) -> Line<'a> {
    match value {
        Some(value) => Line::from(Span::styled(
            format!("{value:.2}"),
            theme.style(Tone::of_score(value)),
        ))
        .right_aligned(),
        None => Line::from("–").right_aligned(),
    }
}
