//! The Rollouts list: only the visible rows are drawn, from the window the engine sent.

use super::preview;
use super::shell::thousands;
use super::widgets::{coordinates, decimal, ellipsize, pane, span, summary_labels, verdict_style};
use crate::store::Summary;
use crate::text::inert;
use crate::tui::app::App;
use crate::tui::layout;
use crate::tui::rich::Tone;
use crate::tui::state::list::StepGroups;
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Row, Table};
use unicode_width::UnicodeWidthStr;

/// Columns that keep their width: marker, id, group·s, reward, turns, PRM min.
const FIXED: [usize; 6] = [1, 8, 8, 6, 5, 7];

/// The least the labels column keeps before the text columns give way.
const LABELS_LEAST: usize = 6;

/// Widths of the task, run·step and stop columns: each as wide as its widest visible value
/// (within bounds); when the row is too narrow they shrink, task first, and cells are cut
/// with `…`. The labels column takes what is left.
fn text_widths(rows: &[&Summary], width: usize, blind: bool) -> [usize; 3] {
    let widest = |value: &dyn Fn(&Summary) -> String, least: usize, most: usize| {
        rows.iter()
            .map(|summary| inert(&value(summary)).width())
            .max()
            .unwrap_or(0)
            .clamp(least, most)
    };
    let mut task = widest(&|summary| summary.task_name().to_string(), 6, 32);
    let mut run = widest(&|summary| coordinates(summary, blind).0, 9, 24);
    let mut stop = widest(&|summary| summary.stop.clone(), 8, 16);
    let spacing = HEADER.len() - 1;
    let used = |task: usize, run: usize, stop: usize| {
        FIXED.iter().sum::<usize>() + task + run + stop + spacing + LABELS_LEAST
    };
    while used(task, run, stop) > width {
        if task > 11 {
            task -= 1;
        } else if run > 9 {
            run -= 1;
        } else if stop > 8 {
            stop -= 1;
        } else {
            break;
        }
    }
    [task, run, stop]
}

/// The constraints of all ten columns, the labels column filling the rest.
fn constraints([task, run, stop]: [usize; 3]) -> [Constraint; 10] {
    let length = |cells: usize| Constraint::Length(cells as u16);
    [
        length(FIXED[0]),
        length(FIXED[1]),
        length(task),
        length(run),
        length(FIXED[2]),
        length(FIXED[3]),
        length(FIXED[4]),
        length(FIXED[5]),
        length(stop),
        Constraint::Fill(1),
    ]
}

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
    let groups = state.step_groups();
    if let Some(groups) = &groups {
        title.push(span(
            theme,
            if groups.flat.is_empty() {
                Tone::Muted
            } else {
                Tone::Warn
            },
            format!(
                "· {} groups, {} with no reward spread (≡) ",
                groups.groups,
                groups.flat.len()
            ),
        ));
    }
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
    let visible: Vec<&Summary> = (state.top..end)
        .filter_map(|index| state.row(index))
        .collect();
    let blind = app.tabs.rollouts.blind;
    let widths = text_widths(&visible, usize::from(area.width.saturating_sub(2)), blind);
    let [task_width, run_width, stop_width] = widths;
    let labels_width = usize::from(area.width.saturating_sub(2))
        .saturating_sub(FIXED.iter().sum::<usize>() + widths.iter().sum::<usize>())
        .saturating_sub(HEADER.len() - 1);
    let rows: Vec<Row> = (state.top..end)
        .map(|index| match state.row(index) {
            Some(summary) => {
                let (run_step, group_sample) = coordinates(summary, blind);
                let selected = index == state.cursor;
                let marker = if selected { "▶" } else { " " };
                let reward = Line::from(decimal(summary.reward))
                    .right_aligned()
                    .style(verdict_style(theme, summary.passed));
                let labels = match state
                    .audit
                    .as_ref()
                    .and_then(|audit| audit.finding(summary.id))
                {
                    Some(finding) => finding
                        .signs
                        .iter()
                        .map(|sign| span(theme, Tone::Warn, format!("{} ", sign.kind)))
                        .collect(),
                    None => summary_labels(theme, &app.label_kinds, summary, blind),
                };
                let cells: Vec<Line> = vec![
                    Line::from(marker),
                    Line::from(summary.id.short(8)),
                    Line::from(ellipsize(&inert(summary.task_name()), task_width)),
                    Line::from(run_step_cell(summary, &run_step, run_width)),
                    group_cell(theme, summary, &group_sample, groups.as_ref()),
                    reward,
                    Line::from(summary.turns.to_string()).right_aligned(),
                    prm_cell(theme, summary.prm_min.filter(|_| !blind)),
                    Line::from(ellipsize(&inert(&summary.stop), stop_width)),
                    clip_spans(labels, labels_width),
                ];
                match selected {
                    true => Row::new(cells.into_iter().map(plain)).style(theme.selected()),
                    false => Row::new(cells),
                }
            }
            None => Row::new(vec![
                Cell::from(" "),
                Cell::from(span(theme, Tone::Dim, "…")),
            ]),
        })
        .collect();
    let hidden = |title: &str| blind && matches!(title, "run·step" | "group·s" | "PRM min");
    let header = Row::new(
        HEADER
            .iter()
            .map(|title| Cell::from(if hidden(title) { "" } else { *title })),
    )
    .style(theme.style(Tone::Muted));
    let table = Table::new(rows, constraints(widths))
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

/// The `group·s` cell, marked `≡` when its group got one reward for every sample.
fn group_cell<'a>(
    theme: &crate::tui::theme::Theme,
    summary: &Summary,
    group_sample: &str,
    groups: Option<&StepGroups>,
) -> Line<'a> {
    let flat = summary
        .group
        .is_some_and(|group| groups.is_some_and(|groups| groups.flat.contains(&group)));
    match flat {
        true => Line::from(span(
            theme,
            Tone::Warn,
            format!("{} ≡", ellipsize(group_sample, FIXED[2] - 2)),
        )),
        false => Line::from(ellipsize(group_sample, FIXED[2])),
    }
}

/// A cell's line in the selection's colours, keeping its bold and italics (confirmed and
/// suggested labels), so the selected row reads (a pass's green on the light theme's blue
/// selection did not).
fn plain(mut line: Line<'_>) -> Line<'_> {
    line.style = Style::default().add_modifier(line.style.add_modifier);
    for item in &mut line.spans {
        item.style = Style::default().add_modifier(item.style.add_modifier);
    }
    line
}

/// `run·step` cut to `columns` cells, the run cut before the step is.
fn run_step_cell(summary: &Summary, run_step: &str, columns: usize) -> String {
    let run_step = inert(run_step);
    match summary.step {
        Some(step) if run_step.width() > columns => {
            let tail = format!("·{step}");
            let run = run_step.strip_suffix(tail.as_str()).unwrap_or(&run_step);
            let room = columns.saturating_sub(tail.width()).max(2);
            format!("{}{tail}", ellipsize(run, room))
        }
        _ => ellipsize(&run_step, columns),
    }
}

/// Spans cut to `columns` cells, the last one shown ending in `…` when cut.
fn clip_spans(spans: Vec<Span<'_>>, columns: usize) -> Line<'_> {
    let mut kept = Vec::new();
    let mut used = 0;
    for item in spans {
        let width = item.width();
        if used + width <= columns {
            used += width;
            kept.push(item);
            continue;
        }
        let text = ellipsize(item.content.trim_end(), columns - used);
        kept.push(Span::styled(text, item.style));
        break;
    }
    Line::from(kept)
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
