//! The top bar (session, counts, engine state, tabs) and the bottom bar (key hints, the
//! last message, or the open prompt).

use super::help::hints;
use super::widgets::{ellipsize, span};
use crate::engine::EngineState;
use crate::text::inert;
use crate::trajectory::RunStatus;
use crate::tui::app::{App, Tab};
use crate::tui::rich::Tone;
use crate::tui::state::runs;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use unicode_width::UnicodeWidthStr;

/// Draws the top bar.
pub fn draw_top(frame: &mut Frame, area: Rect, app: &App) {
    if area.height == 0 {
        return;
    }
    let theme = &app.theme;
    let keys = area.width >= 90;
    let every_tab = area.width >= 60;
    let tabs: Vec<Span> = <Tab as strum::IntoEnumIterator>::iter()
        .enumerate()
        .filter(|(_, tab)| every_tab || *tab == app.tab)
        .flat_map(|(index, tab)| {
            let text = match keys {
                true => format!(" F{} {} ", index + 1, tab.title()),
                false => format!(" {} ", tab.title()),
            };
            let style = if tab == app.tab {
                theme.selected().add_modifier(Modifier::BOLD)
            } else {
                theme.style(Tone::Muted)
            };
            [Span::styled(text, style)]
        })
        .collect();
    let tabs_width: u16 = tabs.iter().map(|tab| tab.width() as u16).sum();
    let [left, right] =
        Layout::horizontal([Constraint::Fill(1), Constraint::Length(tabs_width)]).areas(area);
    let stored = app.status.stored.map_or_else(
        || "counting".to_string(),
        |count| format!("{} rollouts", thousands(count)),
    );
    let engine = match &app.status.engine {
        EngineState::Idle => span(theme, Tone::Muted, "engine idle"),
        EngineState::Busy(what) => span(theme, Tone::Warn, format!("engine {what}…")),
    };
    let mut title = Line::from(vec![
        span(theme, Tone::Accent, " Rollscope"),
        span(
            theme,
            Tone::Muted,
            format!(" · {} · {stored} · ", app.session),
        ),
        engine,
    ]);
    if let Some(live) = app.tabs.runs.live() {
        let tone = match live.status {
            RunStatus::Paused => Tone::Warn,
            _ => Tone::Pass,
        };
        title.push_span(span(theme, Tone::Muted, " · "));
        title.push_span(span(
            theme,
            tone,
            format!("{} {}", inert(&live.id), runs::describe(live)),
        ));
    }
    frame.render_widget(Paragraph::new(title), left);
    frame.render_widget(Paragraph::new(Line::from(tabs)), right);
}

/// Most lines a prompt's error takes above it.
const PROMPT_ERROR_LINES: usize = 6;

/// A failed submission's error, wrapped whole on the lines above the prompt.
fn draw_prompt_error(frame: &mut Frame, prompt: Rect, app: &App, error: &str) {
    let width = usize::from(prompt.width.saturating_sub(2)).max(1);
    let mut lines: Vec<String> = textwrap::wrap(&inert(error), width)
        .into_iter()
        .map(|line| format!(" {line}"))
        .collect();
    if lines.len() > PROMPT_ERROR_LINES {
        lines.truncate(PROMPT_ERROR_LINES);
        if let Some(last) = lines.last_mut() {
            *last = format!(
                "{}…",
                ellipsize(last, width.saturating_sub(1)).trim_end_matches('…')
            );
        }
    }
    let height = (lines.len() as u16).min(prompt.y);
    let area = Rect::new(prompt.x, prompt.y - height, prompt.width, height);
    let text: Vec<Line> = lines
        .into_iter()
        .map(|line| Line::from(span(&app.theme, Tone::Fail, line)))
        .collect();
    frame.render_widget(ratatui::widgets::Clear, area);
    frame.render_widget(Paragraph::new(text).style(app.theme.base_style()), area);
}

/// Draws the bottom bar.
pub fn draw_bottom(frame: &mut Frame, area: Rect, app: &App) {
    if area.height == 0 {
        return;
    }
    let theme = &app.theme;
    if let Some(prompt) = &app.prompt {
        let text = format!("{}{}", prompt.kind.lead(), prompt.input);
        let width = Span::raw(text.as_str()).width() as u16;
        let input = match prompt.selected {
            true => Span::styled(prompt.input.clone(), theme.selected()),
            false => span(theme, Tone::Accent, prompt.input.clone()),
        };
        let line = Line::from(vec![span(theme, Tone::Accent, prompt.kind.lead()), input]);
        frame.render_widget(Paragraph::new(line), area);
        let x = area
            .x
            .saturating_add(width)
            .min(area.right().saturating_sub(1));
        frame.set_cursor_position(Position::new(x, area.y));
        if let Some(error) = &prompt.error {
            draw_prompt_error(frame, area, app, error);
        }
        return;
    }
    let mut hints: Vec<Vec<Span>> = hints(app)
        .into_iter()
        .map(|(keys, what)| {
            vec![
                span(theme, Tone::Accent, format!(" {keys}")),
                span(theme, Tone::Muted, format!(" {what} ")),
            ]
        })
        .collect();
    let width = usize::from(area.width);
    let hints_width =
        |hints: &[Vec<Span>]| -> usize { hints.iter().flatten().map(Span::width).sum() };
    let mut line: Vec<Span> = Vec::new();
    if let Some(notice) = &app.status.notice {
        let text = format!("  {}", inert(&notice.text));
        let wanted = text.width() + 1;
        let least = wanted.min(width * 2 / 3);
        while hints.len() > 2 && width.saturating_sub(hints_width(&hints)) < least {
            hints.remove(hints.len() - 3);
        }
        let room = width.saturating_sub(hints_width(&hints));
        let tone = if notice.error { Tone::Fail } else { Tone::Text };
        let shown = ellipsize(&text, room.saturating_sub(1));
        let pad = room.saturating_sub(shown.width());
        line.extend(hints.into_iter().flatten());
        line.push(Span::raw(" ".repeat(pad)));
        line.push(span(theme, tone, shown));
    } else {
        while hints.len() > 2 && hints_width(&hints) > width {
            hints.remove(hints.len() - 3);
        }
        line.extend(hints.into_iter().flatten());
    }
    frame.render_widget(Paragraph::new(Line::from(line)), area);
}

/// A count with thin separators: `12,480`.
pub fn thousands(count: usize) -> String {
    let digits = count.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}
