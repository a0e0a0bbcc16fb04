//! The Curate tab: what a best-of-N rejection-sampling selection over the stored rollouts
//! would keep. Export comes with the curation work.

use super::shell::thousands;
use super::widgets::{pane, span};
use crate::tui::app::App;
use crate::tui::rich::Tone;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};

/// Draws the Curate tab.
pub fn draw(frame: &mut Frame, area: Rect, app: &App) {
    let theme = &app.theme;
    let Some(overview) = &app.insights.overview else {
        let text = if app.insights.loading {
            " counting… "
        } else {
            " curate "
        };
        frame.render_widget(
            pane(theme, Line::from(span(theme, Tone::Muted, text)), true),
            area,
        );
        return;
    };
    let best = &overview.best_of_n;
    let share = |count: usize| 100.0 * count as f64 / best.tasks.max(1) as f64;
    let row = |name: &str, value: String, tone: Tone| {
        Line::from(vec![
            span(theme, Tone::Accent, format!(" {name:<10}")),
            span(theme, tone, value),
        ])
    };
    let lines = vec![
        row(
            "source",
            format!(
                "all stored rollouts · {} tasks × {:.1} samples on average",
                thousands(best.tasks),
                best.samples as f64 / best.tasks.max(1) as f64
            ),
            Tone::Text,
        ),
        row(
            "keep",
            "verifier pass · no confirmed error label · highest reward · then highest PRM min · then fewest turns · 1 per task".into(),
            Tone::Muted,
        ),
        Line::default(),
        row(
            "kept",
            format!(
                "{} tasks ({:.0}%){}",
                thousands(best.kept),
                share(best.kept),
                best.mean_turns_kept
                    .map_or(String::new(), |turns| format!(" · {turns:.1} turns on average"))
            ),
            Tone::Pass,
        ),
        row(
            "no pass",
            format!("{} tasks ({:.0}%) have no passing sample", thousands(best.no_pass), share(best.no_pass)),
            Tone::Fail,
        ),
        row(
            "excluded",
            format!(
                "{} tasks ({:.0}%) pass only with samples that carry a confirmed error label",
                thousands(best.excluded_by_labels),
                share(best.excluded_by_labels)
            ),
            Tone::Warn,
        ),
        Line::default(),
        row(
            "export",
            "writing the selection (OpenAI messages + tools, TRL, ShareGPT) comes with the curation work; `rollscope export --pass` writes passing rollouts today".into(),
            Tone::Muted,
        ),
    ];
    let title = " rejection sampling · best of N per task ";
    frame.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: false }).block(pane(
            theme,
            Line::from(span(theme, Tone::Accent, title)),
            true,
        )),
        area,
    );
}
