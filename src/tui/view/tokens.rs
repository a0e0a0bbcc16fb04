//! The token view: every token of the trace flowing like text (`token_text::TokenLayout`),
//! trained-on ones shaded by surprise or entropy, masked ones (prompt, observations,
//! template) dim, with the selected token's figures.

use super::widgets::{pane, span};
use crate::trajectory::TokenTrace;
use crate::tui::app::App;
use crate::tui::rich::Tone;
use crate::tui::state::trajectory::{Heat, OpenTrajectory};
use crate::tui::token_text::{TokenLayout, TokenText, reasoning_tokens, spelled_by, spelling};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use unicode_width::UnicodeWidthChar;

/// The heat level (0 cool … 4 hot) of a token: surprise (−log-prob) or entropy, in nats.
pub fn heat_level(value: f32, heat: Heat) -> u8 {
    let thresholds: [f32; 4] = match heat {
        Heat::LogProb => [0.1, 0.5, 1.5, 3.0],
        Heat::Entropy => [0.2, 0.7, 1.5, 2.5],
    };
    let magnitude = match heat {
        Heat::LogProb => -value,
        Heat::Entropy => value,
    };
    thresholds
        .iter()
        .filter(|&&threshold| magnitude >= threshold)
        .count() as u8
}

/// The start of `text` that fits in `width` columns.
fn clip_to_width(text: &str, width: usize) -> String {
    let mut used = 0;
    text.chars()
        .take_while(|c| {
            used += c.width().unwrap_or(0);
            used <= width
        })
        .collect()
}

fn figure(values: &[f32], index: usize) -> Option<f32> {
    values.get(index).copied()
}

/// Draws the token view.
pub fn draw(frame: &mut Frame, area: Rect, app: &App, open: &OpenTrajectory) {
    let theme = &app.theme;
    let Some(trace) = &open.trajectory().token_trace else {
        return;
    };
    let cursor = app.tabs.rollouts.trajectory.tokens.unwrap_or_default();
    let spellings = open.loaded.spellings.as_ref();
    let token_text = spelling(spellings, app.token_text.as_ref());
    let fitted = &app.tabs.rollouts.trajectory.token_layout;
    let computed;
    let layout = if fitted.len() == trace.len() {
        fitted
    } else {
        computed = TokenLayout::flow(
            &trace.token_ids,
            token_text,
            usize::from(area.width.saturating_sub(2)),
        );
        &computed
    };
    let rows = usize::from(area.height.saturating_sub(4)).max(1);
    let index = cursor.index.min(trace.len().saturating_sub(1));
    let top_line = layout.line_of(index) / rows * rows;
    let reasoning = reasoning_tokens(&trace.token_ids, token_text);
    let recorded = match cursor.heat {
        Heat::LogProb => &trace.logprobs,
        Heat::Entropy => &trace.entropies,
    };
    let gap = " ".repeat(layout.gap);
    let mut lines: Vec<Line> = (top_line..top_line + rows)
        .map(|line| {
            let mut spans = Vec::new();
            for token in layout.line(line) {
                if token > layout.line(line).start {
                    spans.push(Span::raw(gap.clone()));
                }
                let text = token_text.text(trace.token_ids[token]);
                let width = layout.widths[token];
                let shown = match text.is_empty() {
                    true => "∅".to_string(),
                    false => clip_to_width(&text, width),
                };
                let masked = trace.loss_mask.get(token).copied().unwrap_or(0) == 0;
                let mut style = if token == index {
                    theme.selected()
                } else if masked {
                    theme.style(Tone::Dim)
                } else {
                    match figure(recorded, token) {
                        Some(value) => theme.style(Tone::Heat(heat_level(value, cursor.heat))),
                        None => theme.style(Tone::Text),
                    }
                };
                if reasoning.get(token).copied().unwrap_or(false) {
                    style = style.add_modifier(Modifier::UNDERLINED);
                }
                spans.push(Span::styled(shown, style));
            }
            Line::from(spans)
        })
        .collect();
    lines.push(Line::default());
    let on_reasoning = reasoning.get(index).copied().unwrap_or(false);
    lines.push(footer(app, token_text, trace, index, on_reasoning));
    let heat = match cursor.heat {
        Heat::LogProb => "log-prob",
        Heat::Entropy => "entropy",
    };
    let thinking = (0..trace.len())
        .filter(|&token| {
            reasoning.get(token).copied().unwrap_or(false)
                && trace.loss_mask.get(token).is_some_and(|&m| m != 0)
        })
        .count();
    let thinking = match thinking {
        0 => String::new(),
        count => format!(" ({count} reasoning, underlined)"),
    };
    let title = format!(
        " tokens · {} of {} trained{thinking} · shaded by {heat} (cool sure → hot unsure) · \
         masked dim · {} ",
        trace.policy_tokens(),
        trace.len(),
        spelled_by(spellings)
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

fn footer<'a>(
    app: &App,
    token_text: &dyn TokenText,
    trace: &TokenTrace,
    index: usize,
    reasoning: bool,
) -> Line<'a> {
    let theme = &app.theme;
    let Some(&id) = trace.token_ids.get(index) else {
        return Line::from(span(theme, Tone::Muted, "empty trace"));
    };
    let trained = trace.loss_mask.get(index).copied().unwrap_or(0) != 0;
    let logprob = figure(&trace.logprobs, index).filter(|_| trained);
    let entropy = figure(&trace.entropies, index).filter(|_| trained);
    let mut text = format!(
        "token {} of {} · id {id} · text {:?} · {}",
        index + 1,
        trace.len(),
        token_text.text(id),
        if trained { "trained on" } else { "masked" }
    );
    if reasoning {
        text.push_str(" · reasoning");
    }
    if let Some(logprob) = logprob {
        text.push_str(&format!(
            " · log-prob {logprob:.3} (p {:.3})",
            logprob.exp()
        ));
    }
    if let Some(entropy) = entropy {
        text.push_str(&format!(" · entropy {entropy:.3}"));
    }
    Line::from(span(theme, Tone::Text, text))
}
