//! The whole conversation in one pane: each section under a boundary line that names the
//! turn, its process score, its labels and the tool it ran (the current turn's accented),
//! drawn from the rows the state laid out for the view.

use super::widgets::{label_marks, line, pane, shown_labels, span};
use crate::text::{clip, inert};
use crate::tui::app::App;
use crate::tui::content::{Section, SectionContent};
use crate::tui::rich::{RichLine, Tone};
use crate::tui::state::trajectory::OpenTrajectory;
use crate::tui::wrap::marked_window;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use unicode_width::UnicodeWidthStr;

/// Draws the rows in view from the transcript's top.
pub fn draw(frame: &mut Frame, area: Rect, app: &App, open: &OpenTrajectory) {
    let theme = &app.theme;
    let state = &app.tabs.rollouts.trajectory;
    let rows = usize::from(area.height.saturating_sub(2));
    let columns = usize::from(area.width.saturating_sub(2));
    // Each row in view: its section and the line (None for the section's boundary).
    let mut shown: Vec<(usize, Option<RichLine>)> = Vec::with_capacity(rows);
    let mut place = state.transcript.top;
    while shown.len() < rows && place.section < open.sections.len() {
        let Some(laid) = state.transcript.laid(place.section) else {
            break;
        };
        if place.row == 0 {
            shown.push((place.section, None));
        } else if let Some(row) = laid.get(place.row - 1) {
            let across = if row.code { state.across } else { 0 };
            shown.push((
                place.section,
                Some(marked_window(&row.pieces, across, columns)),
            ));
        }
        if place.row < laid.len() {
            place.row += 1;
        } else {
            place.section += 1;
            place.row = 0;
        }
    }
    let lines: Vec<Line> = shown
        .iter()
        .map(|(section, row)| match row {
            Some(rich) => line(theme, rich),
            None => boundary(app, open, &open.sections[*section], *section, columns),
        })
        .collect();
    let steps = open.sections.len().saturating_sub(2);
    let title = match open
        .sections
        .get(state.section)
        .map(|content| content.section)
    {
        Some(Section::Step(step)) => format!(" conversation · turn {} of {steps} ", step + 1),
        Some(Section::Outcome) => " conversation · outcome ".to_string(),
        _ => " conversation · prompt ".to_string(),
    };
    let top = state.transcript.top;
    let mut position = match (top.section, top.row) {
        _ if state.transcript.at_end => " end ".to_string(),
        (0, 0) => " top ".to_string(),
        (section, _) => format!(" {}% ", section * 100 / open.sections.len().max(1)),
    };
    if state.across > 0 {
        position = format!(" ← col {}{position}", state.across + 1);
    }
    let block = pane(theme, Line::from(span(theme, Tone::Accent, title)), true)
        .title_bottom(Line::from(span(theme, Tone::Muted, position)).right_aligned());
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// A section's boundary: `── turn 3 of 41 · assistant 0.80 calculation bash: pytest -x ───`
/// (its lowest process score, its labels, what it ran, a note kept for its label), accented
/// for the current section.
fn boundary<'a>(
    app: &App,
    open: &OpenTrajectory,
    content: &SectionContent,
    index: usize,
    columns: usize,
) -> Line<'a> {
    let theme = &app.theme;
    let state = &app.tabs.rollouts.trajectory;
    let blind = app.tabs.rollouts.blind;
    let trajectory = open.trajectory();
    let tone = if index == state.section {
        Tone::Accent
    } else {
        Tone::Muted
    };
    let steps = open.sections.len().saturating_sub(2);
    let mut spans: Vec<Span> = Vec::new();
    match content.section {
        Section::Prompt => spans.push(span(
            theme,
            tone,
            "── prompt · system and task · not trained ",
        )),
        Section::Outcome => {
            spans.push(span(theme, tone, "── outcome "));
            if let Some(reward) = &trajectory.reward {
                let verdict = if reward.is_pass() {
                    Tone::Pass
                } else {
                    Tone::Fail
                };
                spans.push(span(theme, verdict, format!("{:.2} ", reward.total)));
            }
        }
        Section::Step(step) => {
            spans.push(span(
                theme,
                tone,
                format!("── turn {} of {steps} · assistant ", step + 1),
            ));
            let score = trajectory
                .scores_of_step(step as u32)
                .map(|score| score.value)
                .min_by(f64::total_cmp)
                .filter(|_| !blind);
            if let Some(value) = score {
                spans.push(span(theme, Tone::of_score(value), format!("{value:.2} ")));
            }
            let labels = shown_labels(trajectory.labels_of_step(step as u32), blind);
            spans.extend(label_marks(theme, &app.label_kinds, &labels));
            let used: usize = spans.iter().map(|item| item.content.width()).sum();
            let room = columns.saturating_sub(used + 4).min(60);
            if let Some(brief) = content.brief.as_deref().filter(|_| room > 4) {
                let brief = clip(brief, room - 1);
                spans.push(span(theme, Tone::CodeKey, inert(&brief).into_owned()));
                spans.push(span(theme, tone, " "));
            }
            if let Some(note) = app
                .pending_note
                .as_ref()
                .filter(|note| note.id == trajectory.id && note.step == step as u32)
            {
                spans.push(span(
                    theme,
                    Tone::Text,
                    format!("note “{}” ", inert(&clip(&note.text, 60))),
                ));
                spans.push(span(
                    theme,
                    Tone::Warn,
                    "kept: 1–4 labels the turn with it ",
                ));
            }
        }
    }
    let used: usize = spans.iter().map(|item| item.content.width()).sum();
    spans.push(span(theme, tone, "─".repeat(columns.saturating_sub(used))));
    Line::from(spans)
}
