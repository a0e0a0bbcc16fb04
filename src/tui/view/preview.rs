//! The preview under the list: the selected trajectory in a few lines per turn.

use super::widgets::{gauge, label_marks, pane, shown_labels, span};
use crate::curate::labels::LabelKinds;
use crate::figures::significant;
use crate::text::{clip, inert};
use crate::trajectory::{Role, Trajectory};
use crate::tui::app::App;
use crate::tui::rich::Tone;
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// Draws the preview pane.
pub fn draw(frame: &mut Frame, area: Rect, app: &App) {
    let theme = &app.theme;
    let preview = app.tabs.rollouts.list.preview.as_ref().filter(|preview| {
        Some(preview.trajectory.id) == app.tabs.rollouts.list.selected().map(|s| s.id)
    });
    let Some(preview) = preview else {
        let waiting = if app.tabs.rollouts.list.selected().is_some() {
            " loading… "
        } else {
            " preview "
        };
        frame.render_widget(
            pane(theme, Line::from(span(theme, Tone::Muted, waiting)), false),
            area,
        );
        return;
    };
    let trajectory = &preview.trajectory;
    let width = usize::from(area.width.saturating_sub(2));
    let rows = usize::from(area.height.saturating_sub(2));
    let blind = app.tabs.rollouts.blind;
    let lines = lines(theme, &app.label_kinds, trajectory, width, rows, blind);
    let block = pane(theme, Line::from(title(theme, trajectory, blind)), false);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

fn title<'a>(theme: &Theme, trajectory: &Trajectory, blind: bool) -> Vec<Span<'a>> {
    let mut parts = vec![span(
        theme,
        Tone::Accent,
        format!(" {} ", inert(&trajectory.task_name())),
    )];
    if let Some(sample) = trajectory.sample.filter(|_| !blind) {
        parts.push(span(
            theme,
            Tone::Muted,
            format!("· sample {} ", sample + 1),
        ));
    }
    if let Some(reward) = &trajectory.reward {
        let tone = if reward.is_pass() {
            Tone::Pass
        } else {
            Tone::Fail
        };
        let components: Vec<String> = reward
            .components
            .iter()
            .map(|(name, value)| format!("{} {}", inert(name), significant(*value, 3)))
            .collect();
        parts.push(span(
            theme,
            tone,
            format!("· reward {} ", significant(reward.total, 3)),
        ));
        if !components.is_empty() {
            parts.push(span(
                theme,
                Tone::Muted,
                format!("({}) ", components.join(" · ")),
            ));
        }
    }
    parts
}

/// One line per message after the system prompt, cut to the width, until `rows` are filled
/// (without process scores and suggestions when labelling `blind`).
fn lines<'a>(
    theme: &Theme,
    kinds: &LabelKinds,
    trajectory: &'a Trajectory,
    width: usize,
    rows: usize,
    blind: bool,
) -> Vec<Line<'a>> {
    let mut lines = Vec::new();
    let steps = trajectory.steps();
    let mut turn = 0;
    let mut observation = 0;
    let gauge_width = 10;
    for (index, message) in trajectory.messages.iter().enumerate() {
        if lines.len() >= rows {
            break;
        }
        let first_line = |text: &str, room: usize| {
            let head = clip(text, room + 64);
            let joined: Vec<&str> = head
                .lines()
                .map(str::trim)
                .filter(|line| !line.is_empty())
                .collect();
            inert(&clip(&joined.join(" ↵ "), room)).into_owned()
        };
        match message.role {
            Role::System => {}
            Role::Assistant => {
                turn += 1;
                let step = steps.iter().position(|location| location.message == index);
                let mut spans = vec![span(theme, Tone::Accent, format!("t{turn:<3}◆ "))];
                let room = width.saturating_sub(6 + gauge_width + 16);
                spans.push(span(theme, Tone::Text, first_line(&message.content, room)));
                if let Some(score) = step
                    .filter(|_| !blind)
                    .and_then(|step| trajectory.scores_of_step(step as u32).next())
                {
                    spans.push(span(theme, Tone::Muted, "  PRM "));
                    spans.extend(gauge(theme, score.value, gauge_width));
                    spans.push(span(
                        theme,
                        Tone::Muted,
                        format!(" {}", inert(score.source.as_str())),
                    ));
                }
                if let Some(step) = step {
                    let labels = shown_labels(trajectory.labels_of_step(step as u32), blind);
                    if !labels.is_empty() {
                        spans.push(span(theme, Tone::Muted, "  "));
                        spans.extend(label_marks(theme, kinds, &labels));
                    }
                }
                lines.push(Line::from(spans));
                for call in &message.tool_calls {
                    if lines.len() >= rows {
                        break;
                    }
                    let text = format!("{} {}", call.name, call.arguments);
                    lines.push(Line::from(vec![
                        span(theme, Tone::Muted, "      "),
                        span(
                            theme,
                            Tone::CodeKey,
                            first_line(&text, width.saturating_sub(6)),
                        ),
                    ]));
                }
            }
            Role::Tool => {
                observation += 1;
                let tone = if message.is_error {
                    Tone::Fail
                } else {
                    Tone::Dim
                };
                lines.push(Line::from(vec![
                    span(theme, Tone::Muted, format!("o{observation:<3}◇ ")),
                    span(
                        theme,
                        tone,
                        first_line(&message.content, width.saturating_sub(6)),
                    ),
                ]));
            }
            _ => {
                lines.push(Line::from(vec![
                    span(
                        theme,
                        Tone::Muted,
                        format!("{:<6}", inert(message.role.as_str())),
                    ),
                    span(
                        theme,
                        Tone::Text,
                        first_line(&message.content, width.saturating_sub(6)),
                    ),
                ]));
            }
        }
    }
    lines
}
