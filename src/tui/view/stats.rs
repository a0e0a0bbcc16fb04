//! The Stats tab: error kinds (confirmed vs suggested) and outcomes per policy version, as
//! horizontal bars.

use super::shell::thousands;
use super::widgets::{pane, span};
use crate::engine::Overview;
use crate::text::inert;
use crate::trajectory::ErrorKind;
use crate::tui::app::App;
use crate::tui::rich::Tone;
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// A bar of `width` cells for `value` out of `max`.
pub fn bar(value: usize, max: usize, width: usize) -> String {
    let filled = if max == 0 {
        0
    } else {
        (value * width).div_ceil(max).min(width)
    };
    "█".repeat(filled)
}

/// Draws the Stats tab.
pub fn draw(frame: &mut Frame, area: Rect, app: &App) {
    let theme = &app.theme;
    let Some(overview) = &app.insights.overview else {
        let text = if app.insights.loading {
            " counting… "
        } else {
            " stats "
        };
        frame.render_widget(
            pane(theme, Line::from(span(theme, Tone::Muted, text)), true),
            area,
        );
        return;
    };
    let [kinds, versions] =
        Layout::vertical([Constraint::Length(8), Constraint::Fill(1)]).areas(area);
    let stale = app
        .insights
        .stale
        .then(|| app.keymap.first_key(crate::tui::action::Action::Refresh));
    draw_kinds(frame, kinds, theme, overview, stale);
    draw_versions(frame, versions, theme, overview, app.insights.scroll);
}

fn draw_kinds(
    frame: &mut Frame,
    area: Rect,
    theme: &Theme,
    overview: &Overview,
    stale: Option<String>,
) {
    let width = usize::from(area.width.saturating_sub(40) / 2).max(1);
    let max = overview
        .kinds
        .iter()
        .map(|count| count.confirmed.max(count.suggested))
        .max()
        .unwrap_or(0);
    let mut lines = vec![Line::from(vec![
        span(theme, Tone::Muted, format!("{:<15}", "")),
        span(
            theme,
            Tone::Confirmed,
            format!("{:<w$}", "confirmed", w = width + 8),
        ),
        span(theme, Tone::Suggested, "suggested"),
    ])];
    for kind in ErrorKind::ALL {
        let count = overview.kind(kind);
        lines.push(Line::from(vec![
            span(theme, Tone::Text, format!("{:<15}", kind.as_str())),
            span(
                theme,
                Tone::Confirmed,
                format!("{:<width$}", bar(count.confirmed, max, width)),
            ),
            span(theme, Tone::Muted, format!(" {:>6} ", count.confirmed)),
            span(
                theme,
                Tone::Suggested,
                format!("{:<width$}", bar(count.suggested, max, width)),
            ),
            span(theme, Tone::Muted, format!(" {:>6}", count.suggested)),
        ]));
    }
    let title = format!(
        " error kinds · {} trajectories · {} pass · {} fail{} ",
        thousands(overview.trajectories),
        thousands(overview.passed),
        thousands(overview.failed),
        stale.map_or(String::new(), |key| format!(
            " · labels changed: {key} recounts"
        ))
    );
    frame.render_widget(
        Paragraph::new(lines).block(pane(
            theme,
            Line::from(span(theme, Tone::Accent, title)),
            true,
        )),
        area,
    );
}

fn draw_versions(frame: &mut Frame, area: Rect, theme: &Theme, overview: &Overview, scroll: usize) {
    let width = usize::from(area.width.saturating_sub(64)).clamp(1, 40);
    let header = Line::from(span(
        theme,
        Tone::Muted,
        format!(
            "{:<12} {:>6} {:>7}  {:<w$} {:>8} {:>7}   calc reas  und  fmt",
            "run",
            "step",
            "rollouts",
            "accuracy",
            "",
            "reward",
            w = width
        ),
    ));
    let rows = usize::from(area.height.saturating_sub(3));
    let mut lines = vec![header];
    for version in overview.versions.iter().skip(scroll).take(rows) {
        let accuracy = version.accuracy();
        let filled = (accuracy * width as f64).round() as usize;
        let run = if version.run.is_empty() {
            "(imported)".into()
        } else {
            inert(&version.run)
        };
        let mut spans: Vec<Span> = vec![
            span(theme, Tone::Text, format!("{run:<12} ")),
            span(
                theme,
                Tone::Muted,
                format!(
                    "{:>6} {:>7}  ",
                    version.step.map_or("–".into(), |s| s.to_string()),
                    version.total
                ),
            ),
            span(
                theme,
                Tone::of_score(accuracy),
                "█".repeat(filled.min(width)),
            ),
            span(theme, Tone::Dim, "░".repeat(width - filled.min(width))),
            span(theme, Tone::Text, format!(" {accuracy:>7.3}")),
            span(
                theme,
                Tone::Muted,
                format!(
                    " {:>7}   ",
                    version
                        .mean_reward
                        .map_or("–".into(), |r| format!("{r:.3}"))
                ),
            ),
        ];
        for count in version.confirmed {
            spans.push(span(theme, Tone::Confirmed, format!("{count:>4} ")));
        }
        lines.push(Line::from(spans));
    }
    let title = format!(
        " outcome per policy version · {} versions · confirmed labels per kind ",
        overview.versions.len()
    );
    frame.render_widget(
        Paragraph::new(lines).block(pane(
            theme,
            Line::from(span(theme, Tone::Accent, title)),
            false,
        )),
        area,
    );
}

#[cfg(test)]
mod tests {
    use super::bar;

    #[test]
    fn bars_scale_to_the_largest_value() {
        assert_eq!(bar(10, 10, 4), "████");
        assert_eq!(bar(1, 10, 4), "█");
        assert_eq!(bar(0, 10, 4), "");
        assert_eq!(bar(3, 0, 4), "");
    }
}
