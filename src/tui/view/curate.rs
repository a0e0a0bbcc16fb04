//! The Curate tab: the rejection-sampling form (source, rules, format, path), the preview of
//! what it keeps, and the export's progress.

use super::shell::thousands;
use super::widgets::{pane, span};
use crate::curate::SelectionPreview;
use crate::text::inert;
use crate::tui::app::App;
use crate::tui::curate_form::{CurateForm, ExportStatus, Field};
use crate::tui::rich::Tone;
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};

fn on_off(flag: bool) -> &'static str {
    if flag { "on" } else { "off" }
}

fn value(form: &CurateForm, field: Field) -> String {
    let rules = &form.rules;
    match field {
        Field::Source if form.source.is_empty() => "all stored rollouts".into(),
        Field::Source => form.source.clone(),
        Field::PerTask => format!("≤ {} per task", rules.per_task),
        Field::RequirePass => on_off(rules.require_pass).into(),
        Field::ExcludeLabelled => on_off(rules.exclude_confirmed_errors).into(),
        Field::MinPrm => match rules.min_prm {
            Some(least) => format!("≥ {least:.1} on every step (samples without scores left out)"),
            None => "off".into(),
        },
        Field::IncludeCorrected => on_off(rules.include_corrected).into(),
        Field::Dedup => on_off(rules.dedup).into(),
        Field::Balance => on_off(rules.balance_difficulty).into(),
        Field::Format => match form.format {
            crate::formats::Format::OpenaiMessages => {
                "openai · messages + tools (TRL / OpenRLHF SFT)".into()
            }
            crate::formats::Format::TrlPromptCompletion => "trl-prompt-completion".into(),
            crate::formats::Format::Rl => "rl · question, prompt, ground_truth, full_answer".into(),
            other => other.name().into(),
        },
        Field::Arguments => match form.arguments {
            crate::formats::ToolArguments::Object => "object (as TRL documents)".into(),
            crate::formats::ToolArguments::String => "JSON string (as OpenAI's API)".into(),
            crate::formats::ToolArguments::AsRead => "as read".into(),
        },
        Field::Path => form.path.clone(),
        Field::Chosen => match form.current_preview() {
            Some(_) => format!(
                "{} samples · enter lists them in the Rollouts tab",
                thousands(form.kept.len())
            ),
            None => "– (after the preview)".into(),
        },
        Field::Export => "[ Export ]".into(),
    }
}

fn preview_lines<'a>(theme: &Theme, preview: &SelectionPreview) -> Vec<Line<'a>> {
    let share = |count: usize| 100.0 * count as f64 / preview.tasks.max(1) as f64;
    let row = |name: &str, text: String, tone: Tone| {
        Line::from(vec![
            span(theme, Tone::Accent, format!(" {name:<16}")),
            span(theme, tone, text),
        ])
    };
    let levels: Vec<String> = preview
        .kept_by_difficulty
        .iter()
        .map(|(level, count)| match level {
            Some(level) => format!("L{level} {count}"),
            None => format!("– {count}"),
        })
        .collect();
    vec![
        row(
            "preview",
            format!(
                "{} tasks kept ({:.0}%) · {} samples of {} · {} tasks × {:.1} samples",
                thousands(preview.tasks_kept),
                share(preview.tasks_kept),
                thousands(preview.samples_kept),
                thousands(preview.samples),
                thousands(preview.tasks),
                preview.samples as f64 / preview.tasks.max(1) as f64
            ),
            Tone::Pass,
        ),
        row(
            "",
            format!(
                "{} with no passing sample · {} excluded by labels ({} samples)",
                thousands(preview.tasks_no_pass),
                thousands(preview.tasks_excluded_by_labels),
                thousands(preview.samples_excluded_by_labels)
            ),
            Tone::Warn,
        ),
        row(
            "",
            format!(
                "{} duplicates · {} over the cap · {} dropped to balance · {} corrected kept{}",
                preview.duplicates,
                preview.capped,
                preview.dropped_by_balance,
                preview.corrected,
                if levels.is_empty() {
                    String::new()
                } else {
                    format!(" · by difficulty {}", levels.join(" "))
                }
            ),
            Tone::Muted,
        ),
    ]
}

/// Draws the Curate tab.
pub fn draw(frame: &mut Frame, area: Rect, app: &App) {
    let theme = &app.theme;
    let form = &app.tabs.curate.form;
    let mut lines = Vec::new();
    for field in Field::ALL {
        let focused = field == form.field;
        let marker = if focused { "▶" } else { " " };
        let tone = match field {
            Field::Export if focused => Tone::Accent,
            _ if focused => Tone::Text,
            _ => Tone::Muted,
        };
        lines.push(Line::from(vec![
            span(
                theme,
                Tone::Accent,
                format!("{marker}{:<16}", field.label()),
            ),
            span(theme, tone, inert(&value(form, field)).into_owned()),
        ]));
    }
    lines.push(Line::from(vec![
        span(theme, Tone::Accent, format!(" {:<16}", "keep")),
        span(theme, Tone::Muted, form.rules.describe()),
    ]));
    lines.push(Line::default());
    let overview_preview = app
        .overview
        .counts
        .as_ref()
        .filter(|overview| form.source.is_empty() && overview.rules == form.rules)
        .map(|overview| &overview.selection);
    match form.current_preview().or(overview_preview) {
        Some(preview) => lines.extend(preview_lines(theme, preview)),
        None => lines.push(Line::from(span(
            theme,
            Tone::Muted,
            if form.waiting || app.overview.loading {
                " preview         counting…"
            } else {
                " preview         change a rule or the source to count"
            },
        ))),
    }
    lines.push(Line::default());
    let export = match &form.export {
        ExportStatus::Idle => None,
        ExportStatus::Writing { written, total } => Some((
            format!("writing {} of {} …", thousands(*written), thousands(*total)),
            Tone::Warn,
        )),
        ExportStatus::Done {
            path,
            written,
            sha256,
            seconds,
        } => Some((
            format!(
                "wrote {} records to {} in {seconds:.2} s · sha256 {} · manifest beside it",
                thousands(*written),
                path.display(),
                &sha256[..sha256.len().min(12)]
            ),
            Tone::Pass,
        )),
        ExportStatus::Exists { path, .. } => Some((
            format!(
                "{} exists: enter on Export again replaces it (its manifest too), or change the path",
                path.display()
            ),
            Tone::Warn,
        )),
        ExportStatus::Failed(message) => Some((format!("failed: {message}"), Tone::Fail)),
    };
    if let Some((text, tone)) = export {
        lines.push(Line::from(vec![
            span(theme, Tone::Accent, format!(" {:<16}", "export")),
            span(theme, tone, inert(&text).into_owned()),
        ]));
    }
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
