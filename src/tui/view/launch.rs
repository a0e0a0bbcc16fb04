//! The launch form, drawn over the Runs tab: the editable fields, what else the run keeps
//! from its base config, and the first problem found on Enter.

use super::widgets::{pane, span};
use crate::text::inert;
use crate::tui::launch_form::{LaunchField, LaunchForm};
use crate::tui::layout;
use crate::tui::rich::Tone;
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

/// The width of the field labels.
const LABEL_WIDTH: usize = 15;

/// Draws the form centred in `area`.
pub fn draw(frame: &mut Frame, area: Rect, theme: &Theme, form: &LaunchForm) {
    let mut lines: Vec<Line> = Vec::new();
    let mut cursor = None;
    for field in LaunchField::ALL {
        let focused = field == form.field;
        let faulty = form
            .problem
            .as_ref()
            .is_some_and(|(at, _)| *at == Some(field));
        let marker = if focused { "▶ " } else { "  " };
        let label_tone = match (faulty, focused) {
            (true, _) => Tone::Fail,
            (false, true) => Tone::Accent,
            (false, false) => Tone::Muted,
        };
        let input = inert(form.input(field)).into_owned();
        let mut spans = vec![
            span(theme, Tone::Accent, marker),
            span(
                theme,
                label_tone,
                format!("{:<LABEL_WIDTH$}", field.label()),
            ),
        ];
        if focused {
            let column = 2 + LABEL_WIDTH + Span::raw(input.as_str()).width();
            cursor = Some((lines.len(), column));
        }
        spans.push(span(theme, Tone::Text, input));
        if let Some(hint) = hint(form, field) {
            spans.push(span(theme, Tone::Dim, format!("   {hint}")));
        }
        lines.push(Line::from(spans));
    }
    lines.push(Line::default());
    for text in kept(form) {
        lines.push(Line::from(span(theme, Tone::Muted, text)));
    }
    lines.push(Line::default());
    match &form.problem {
        Some((_, message)) => lines.push(Line::from(span(theme, Tone::Fail, inert(message)))),
        None => lines.push(Line::from(span(
            theme,
            Tone::Muted,
            "tab/↑↓ field · type to edit · ctrl-u clear · enter launch · esc cancel",
        ))),
    }
    let height = lines.len() as u16 + 2;
    let box_area = layout::centered(area, 84, height);
    frame.render_widget(Clear, box_area);
    let title = Line::from(span(
        theme,
        Tone::Accent,
        format!(" New GRPO run · from {} ", inert(&form.base.name)),
    ));
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .style(theme.base_style())
            .block(pane(theme, title, true)),
        box_area,
    );
    if let Some((row, column)) = cursor {
        let x = box_area.x + 1 + column as u16;
        let y = box_area.y + 1 + row as u16;
        if x < box_area.right().saturating_sub(1) && y < box_area.bottom().saturating_sub(1) {
            frame.set_cursor_position(Position::new(x, y));
        }
    }
}

/// A muted note after a field's value.
fn hint(form: &LaunchForm, field: LaunchField) -> Option<String> {
    match field {
        LaunchField::Tasks => Some(format!("held out: {}", inert(&form.eval_tasks()))),
        LaunchField::Model if form.input(field).trim().is_empty() => {
            Some("(the session's newest policy)".into())
        }
        LaunchField::Group => Some("rollouts per task".into()),
        LaunchField::Beta => Some("KL weight (0: no reference model)".into()),
        _ => None,
    }
}

/// What the run keeps from its base config, in two lines.
fn kept(form: &LaunchForm) -> [String; 2] {
    let config = &form.base;
    let objective = &config.grpo.update.objective;
    [
        format!(
            "kept: {} tasks/step · ε {}/{} · {} new tokens × {} turns",
            config.grpo.tasks_per_step,
            objective.epsilon_low,
            objective.epsilon_high,
            config.rollout.max_new_tokens,
            config.rollout.max_turns,
        ),
        format!(
            "      eval {} tasks every {} steps · checkpoint every {}",
            config.tasks.eval_size, config.eval.every, config.checkpoint_every
        ),
    ]
}
