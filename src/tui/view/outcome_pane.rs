//! The trajectory screen's outcome pane: the reward's components (as parts of the total with
//! their weights where they add up and there is room, else as scores), the verdict, and the
//! advantage.

use super::widgets::{ellipsize, pane, span};
use crate::text::inert;
use crate::tui::rich::Tone;
use crate::tui::state::trajectory::OpenTrajectory;
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;
use unicode_width::UnicodeWidthStr;

/// The reward's parts and total, and the advantage (not when labelling `blind`).
pub fn draw(frame: &mut Frame, area: Rect, theme: &Theme, open: &OpenTrajectory, blind: bool) {
    let trajectory = open.trajectory();
    let mut lines = Vec::new();
    let columns = usize::from(area.width.saturating_sub(2));
    if let Some(reward) = &trajectory.reward {
        let (verdict, tone) = if reward.is_pass() {
            ("pass", Tone::Pass)
        } else {
            ("fail", Tone::Fail)
        };
        let name_width = reward
            .components
            .keys()
            .map(|name| inert(name).width())
            .chain([9])
            .max()
            .unwrap_or(9)
            .min(columns.saturating_sub(7).max(4));
        let weighted = !reward.weights.is_empty() && columns >= name_width + 6 + 7;
        let row = |name: &str, weight: Option<f64>, value: String| {
            let shown = ellipsize(&inert(name), name_width);
            let pad = name_width.saturating_sub(shown.width());
            let weight = match (weighted, weight) {
                (false, _) => String::new(),
                (true, Some(weight)) => format!(" ×{:<4}", ellipsize(&weight.to_string(), 4)),
                (true, None) => " ".repeat(6),
            };
            format!("{shown}{}{weight} {value:>6}", " ".repeat(pad))
        };
        let sum: f64 = reward.components.values().sum();
        let adds_up = (sum - reward.total).abs() < 1e-6;
        if !reward.components.is_empty() {
            let heading = match (adds_up, weighted) {
                (true, true) => "parts: weight × score",
                (true, false) => "parts of the total",
                (false, _) => "scores (not parts)",
            };
            lines.push(Line::from(span(theme, Tone::Accent, heading)));
        }
        for (name, value) in &reward.components {
            let value = if adds_up {
                format!("{value:+.2}")
            } else {
                format!("{value:.2}")
            };
            let weight = reward.weights.get(name).copied();
            lines.push(Line::from(span(
                theme,
                Tone::Muted,
                row(name, weight, value),
            )));
        }
        lines.push(Line::from(span(
            theme,
            tone,
            row(
                &format!("= {verdict}"),
                None,
                format!("{:.2}", reward.total),
            ),
        )));
    }
    if let Some(advantage) = trajectory.advantage.filter(|_| !blind) {
        lines.push(Line::from(span(
            theme,
            Tone::Muted,
            format!("advantage {advantage:+.2}"),
        )));
    }
    let title = Line::from(span(theme, Tone::Muted, " outcome "));
    frame.render_widget(Paragraph::new(lines).block(pane(theme, title, false)), area);
}
