//! The trajectory screen: a header with the task, the list of sections (prompt, turns,
//! outcome) and the current section, or the token view.

use super::outcome_pane;
use super::tokens;
use super::widgets::{gauge, label_letters, label_marks, line, pane, shown_labels, span};
use crate::text::{clip, inert};
use crate::tui::app::App;
use crate::tui::content::Section;
use crate::tui::layout;
use crate::tui::rich::{RichLine, Tone};
use crate::tui::state::trajectory::OpenTrajectory;
use crate::tui::theme::Theme;
use crate::tui::wrap::{marked_window, wrap_spans};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use unicode_width::UnicodeWidthStr;

/// Draws the trajectory screen.
pub fn draw(frame: &mut Frame, area: Rect, app: &App) {
    let theme = &app.theme;
    let state = &app.tabs.rollouts.trajectory;
    let Some(open) = &state.open else {
        let text = if state.loading.is_some() {
            " loading… "
        } else {
            " no trajectory open "
        };
        frame.render_widget(
            pane(theme, Line::from(span(theme, Tone::Muted, text)), true),
            area,
        );
        return;
    };
    let areas = layout::trajectory(area);
    let blind = app.tabs.rollouts.blind;
    draw_header(
        frame,
        areas.header,
        theme,
        open,
        state.loading.is_some(),
        blind,
    );
    let components = open
        .trajectory()
        .reward
        .as_ref()
        .map_or(0, |reward| reward.components.len() as u16);
    let outcome_height = (components + 5).min(10);
    let (turns, outcome) = if areas.turns.height >= outcome_height + 8 {
        let [turns, outcome] =
            Layout::vertical([Constraint::Fill(1), Constraint::Length(outcome_height)])
                .areas(areas.turns);
        (turns, Some(outcome))
    } else {
        (areas.turns, None)
    };
    draw_sections(frame, turns, app, open);
    if let Some(outcome) = outcome {
        outcome_pane::draw(frame, outcome, theme, open, blind);
    }
    if state.tokens.is_some() {
        tokens::draw(frame, areas.pane, app, open);
    } else if !state.per_turn {
        super::transcript::draw(frame, areas.pane, app, open);
    } else {
        draw_pane(frame, areas.pane, app, open);
    }
}

/// The task, the trajectory's coordinates (only its id when labelling `blind`), its reward
/// and stop reason, and the question.
fn draw_header(
    frame: &mut Frame,
    area: Rect,
    theme: &Theme,
    open: &OpenTrajectory,
    loading: bool,
    blind: bool,
) {
    if area.height == 0 {
        return;
    }
    let trajectory = open.trajectory();
    let mut title = vec![span(
        theme,
        Tone::Accent,
        format!(" {} ", inert(&trajectory.task_name())),
    )];
    let mut facts = vec![trajectory.id.short(8)];
    if blind {
        facts.push("blind".into());
    } else if let Some(run) = &trajectory.run {
        let run = inert(run);
        facts.push(match trajectory.policy_version {
            Some(step) => format!("{run} step {step}"),
            None => run.into_owned(),
        });
    }
    if let Some(group) = trajectory.group.filter(|_| !blind) {
        facts.push(format!("group {group}"));
    }
    if let Some(sample) = trajectory.sample.filter(|_| !blind) {
        facts.push(format!("sample {}", sample + 1));
    }
    if let Some(origin) = trajectory.fork.as_ref().filter(|_| !blind) {
        facts.push(format!(
            "fork of {} from t{}",
            origin.parent.short(8),
            origin.turn
        ));
    }
    title.push(span(
        theme,
        Tone::Muted,
        format!("· {} ", facts.join(" · ")),
    ));
    if let Some(reward) = &trajectory.reward {
        let tone = if reward.is_pass() {
            Tone::Pass
        } else {
            Tone::Fail
        };
        title.push(span(theme, tone, format!("· reward {:.2} ", reward.total)));
    }
    if let Some(advantage) = trajectory.advantage.filter(|_| !blind) {
        title.push(span(
            theme,
            Tone::Muted,
            format!("· advantage {advantage:+.2} "),
        ));
    }
    title.push(span(
        theme,
        Tone::Muted,
        format!("· {} ", inert(trajectory.stop_reason.as_str())),
    ));
    if loading {
        title.push(span(theme, Tone::Warn, "· loading next… "));
    }
    let question = open
        .loaded
        .task
        .as_ref()
        .map(|task| task.question().to_string())
        .or_else(|| {
            trajectory
                .prompt_messages()
                .iter()
                .rev()
                .find(|message| message.role == crate::trajectory::Role::User)
                .map(|message| message.content.clone())
        })
        .unwrap_or_default();
    let first = question.lines().next().unwrap_or("");
    let room = usize::from(area.width.saturating_sub(30));
    let mut body = vec![
        span(theme, Tone::Accent, "Task  "),
        span(theme, Tone::Text, inert(&clip(first, room)).into_owned()),
    ];
    if let Some(truth) = open
        .loaded
        .task
        .as_ref()
        .and_then(|task| task.ground_truth.as_deref())
    {
        body.push(span(theme, Tone::Muted, "   ground truth "));
        body.push(span(
            theme,
            Tone::Pass,
            inert(&clip(truth, 20)).into_owned(),
        ));
    }
    frame.render_widget(
        Paragraph::new(Line::from(body)).block(pane(theme, Line::from(title), false)),
        area,
    );
}

fn draw_sections(frame: &mut Frame, area: Rect, app: &App, open: &OpenTrajectory) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    let theme = &app.theme;
    let trajectory = open.trajectory();
    let rows = usize::from(area.height.saturating_sub(2)).max(1);
    let selected = app.tabs.rollouts.trajectory.section;
    let top = selected.saturating_sub(rows - 1);
    let lines: Vec<Line> = open
        .sections
        .iter()
        .enumerate()
        .skip(top)
        .take(rows)
        .map(|(index, section)| {
            let mut spans = match section.section {
                Section::Prompt => vec![span(theme, Tone::Muted, " prompt")],
                Section::Outcome => {
                    let (text, tone) = match &trajectory.reward {
                        Some(reward) if reward.is_pass() => {
                            (format!(" outcome {:.2}", reward.total), Tone::Pass)
                        }
                        Some(reward) => (format!(" outcome {:.2}", reward.total), Tone::Fail),
                        None => (" outcome".to_string(), Tone::Muted),
                    };
                    vec![span(theme, tone, text)]
                }
                Section::Step(step) => {
                    let mut spans = vec![span(theme, Tone::Text, format!(" t{:<4}", step + 1))];
                    let score = trajectory
                        .scores_of_step(step as u32)
                        .map(|score| score.value)
                        .min_by(f64::total_cmp)
                        .filter(|_| !app.tabs.rollouts.blind);
                    spans.push(match score {
                        Some(value) => span(theme, Tone::of_score(value), format!("{value:.2} ")),
                        None => span(theme, Tone::Dim, "  –  "),
                    });
                    let labels = shown_labels(
                        trajectory.labels_of_step(step as u32),
                        app.tabs.rollouts.blind,
                    );
                    spans.extend(label_letters(theme, &labels));
                    let used: usize = spans.iter().map(|item| item.content.width()).sum();
                    let room = usize::from(area.width.saturating_sub(3)).saturating_sub(used);
                    if let Some(brief) = section.brief.as_deref().filter(|_| room > 2) {
                        // Short of room, a shell's or file editor's command says more than its
                        // name (`cat ./src/rules/L055.py`, not `bash: …`).
                        let brief = match brief.split_once(": ") {
                            Some((tool, argument))
                                if brief.chars().count() > room - 2
                                    && crate::tui::render::tool_call::runs_commands(tool) =>
                            {
                                argument
                            }
                            _ => brief,
                        };
                        let brief = clip(brief, room - 2);
                        spans.push(span(theme, Tone::CodeKey, format!(" {}", inert(&brief))));
                    }
                    spans
                }
            };
            if index == selected {
                spans = spans
                    .into_iter()
                    .map(|item| Span::styled(item.content, theme.selected()))
                    .collect();
            }
            Line::from(spans)
        })
        .collect();
    let title = Line::from(span(
        theme,
        Tone::Muted,
        format!(" {} steps ", open.sections.len().saturating_sub(2)),
    ));
    frame.render_widget(Paragraph::new(lines).block(pane(theme, title, false)), area);
}

fn draw_pane(frame: &mut Frame, area: Rect, app: &App, open: &OpenTrajectory) {
    let theme = &app.theme;
    let state = &app.tabs.rollouts.trajectory;
    let Some(content) = open.sections.get(state.section) else {
        return;
    };
    let trajectory = open.trajectory();
    let steps = open.sections.len().saturating_sub(2);
    let title = match content.section {
        Section::Prompt => " prompt · system and task · not trained ".to_string(),
        Section::Outcome => " outcome ".to_string(),
        Section::Step(step) => format!(" turn {} of {steps} · assistant ", step + 1),
    };
    let mut lines: Vec<Line> = Vec::new();
    if let Section::Step(step) = content.section {
        let blind = app.tabs.rollouts.blind;
        for score in trajectory.scores_of_step(step as u32).filter(|_| !blind) {
            let mut spans = vec![span(theme, Tone::Muted, "PRM ")];
            spans.extend(gauge(theme, score.value, 10));
            spans.push(span(
                theme,
                Tone::Muted,
                format!(" {}", inert(score.source.as_str())),
            ));
            if let Some(note) = &score.note {
                spans.push(span(
                    theme,
                    Tone::Muted,
                    format!(" — {}", inert(&clip(note, 120))),
                ));
            }
            lines.push(Line::from(spans));
        }
        let labels = shown_labels(trajectory.labels_of_step(step as u32), blind);
        if !labels.is_empty() {
            let mut spans = vec![span(theme, Tone::Muted, "Label ")];
            for label in &labels {
                spans.extend(label_marks(theme, &app.label_kinds, &[label]));
                if let Some(author) = &label.author {
                    spans.push(span(
                        theme,
                        Tone::Muted,
                        format!(
                            "({}, {}) ",
                            inert(&clip(author, 24)),
                            label_time(label.time)
                        ),
                    ));
                }
                if let Some(note) = &label.note {
                    spans.push(span(
                        theme,
                        Tone::Muted,
                        format!("— {} ", inert(&clip(note, 120))),
                    ));
                }
            }
            if labels
                .iter()
                .any(|label| label.status == crate::trajectory::LabelStatus::Suggested)
            {
                spans.push(span(
                    theme,
                    Tone::Accent,
                    format!(
                        " {} accept",
                        app.keymap.first_key(crate::tui::action::Action::Accept)
                    ),
                ));
            }
            lines.push(Line::from(spans));
        }
        if let Some(note) = app
            .pending_note
            .as_ref()
            .filter(|note| note.id == trajectory.id && note.step == step as u32)
        {
            lines.push(Line::from(vec![
                span(theme, Tone::Muted, "Note "),
                span(
                    theme,
                    Tone::Text,
                    inert(&clip(&note.text, 120)).into_owned(),
                ),
                span(theme, Tone::Warn, "  kept: 1–4 labels the turn with it"),
            ]));
        }
        if !lines.is_empty() {
            lines.push(Line::default());
        }
    }
    let rows = usize::from(area.height.saturating_sub(2));
    let columns = usize::from(area.width.saturating_sub(2));
    let mut lines: Vec<Line> = lines
        .iter()
        .flat_map(|head| wrap_spans(head, columns))
        .collect();
    let room = rows.saturating_sub(lines.len());
    let scroll = state.scroll.min(state.rows.len().saturating_sub(1));
    let shown: Vec<RichLine> = state
        .rows
        .iter()
        .skip(scroll)
        .take(room)
        .map(|row| {
            let across = if row.code { state.across } else { 0 };
            marked_window(&row.pieces, across, columns)
        })
        .collect();
    lines.extend(shown.iter().map(|rich| line(theme, rich)));
    let mut position = String::new();
    if state.rows.len() > room {
        position = format!(" {}/{} ", scroll + 1, state.rows.len());
    }
    if state.across > 0 {
        position = format!(" ← col {}{position}", state.across + 1);
    }
    let block = pane(theme, Line::from(span(theme, Tone::Accent, title)), true)
        .title_bottom(Line::from(span(theme, Tone::Muted, position)).right_aligned());
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// When a label was set, in UTC, as `12-01 21:50`.
fn label_time(millis: i64) -> String {
    chrono::DateTime::from_timestamp_millis(millis).map_or_else(String::new, |time| {
        time.format("%m-%d %H:%M UTC").to_string()
    })
}
