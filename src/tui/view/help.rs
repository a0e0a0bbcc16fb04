//! The `?` overlay (the keys of the current view, from the keymap) and the key hints of the
//! bottom bar.

use super::widgets::{line, pane, span};
use crate::tui::action::Action;
use crate::tui::app::{App, Screen, Tab};
use crate::tui::help_page::{HELP_WIDTH, HelpPage, inner_size};
use crate::tui::layout;
use crate::tui::rich::{Fold, Tone};
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Clear, Paragraph, Wrap};

/// The short hints of the bottom bar: (keys, what).
pub fn hints(app: &App) -> Vec<(String, &'static str)> {
    let keys = |action| app.keymap.first_key(action);
    let pair = |a, b| format!("{}/{}", keys(a), keys(b));
    let mut hints = match (app.tab, app.screen()) {
        (Tab::Rollouts, Screen::List) => vec![
            (pair(Action::Down, Action::Up), "move"),
            (keys(Action::Open), "open"),
            (keys(Action::Group), "group"),
            (keys(Action::Search), "search"),
            (keys(Action::Outcome), "fail/pass"),
            (keys(Action::Sort), "sort"),
            (keys(Action::NextBadcase), "next badcase"),
            (label_keys(app), "label"),
        ],
        (Tab::Rollouts, Screen::Trajectory) if app.tabs.rollouts.trajectory.tokens.is_some() => {
            vec![
                (pair(Action::Left, Action::Right), "token"),
                (pair(Action::Down, Action::Up), "line"),
                (keys(Action::Entropy), "log-prob/entropy"),
                (keys(Action::Tokens), "turns"),
                (label_keys(app), "label"),
                (keys(Action::Back), "back"),
            ]
        }
        (Tab::Rollouts, Screen::Trajectory) => vec![
            (pair(Action::Left, Action::Right), "turn"),
            (pair(Action::Down, Action::Up), "scroll"),
            (keys(Action::Tokens), "tokens"),
            (
                keys(Action::Transcript),
                if app.tabs.rollouts.trajectory.per_turn {
                    "whole"
                } else {
                    "one turn"
                },
            ),
            (label_keys(app), "label"),
            (keys(Action::Note), "note"),
            (keys(Action::Undo), "undo"),
            (keys(Action::NextBadcase), "next badcase"),
            (keys(Action::Fork), "fork"),
            (keys(Action::Repair), "repair"),
            (keys(Action::Back), "back"),
        ],
        (Tab::Rollouts, Screen::Group) => vec![
            (pair(Action::Down, Action::Up), "sample"),
            (keys(Action::Pin), "pin"),
            (keys(Action::Reference), "vs reference"),
            (keys(Action::Open), "open"),
            (keys(Action::Back), "back"),
        ],
        (Tab::Runs, _) if app.tabs.runs.form.is_some() => {
            return vec![
                ("tab/↑↓".to_string(), "field"),
                ("enter".to_string(), "launch"),
                ("esc".to_string(), "cancel"),
            ];
        }
        (Tab::Runs, _) => vec![
            (pair(Action::Down, Action::Up), "run"),
            (pair(Action::Left, Action::Right), "step"),
            (keys(Action::Open), "rollouts"),
            (keys(Action::NewRun), "new run"),
            (keys(Action::FollowRun), "follow"),
            (keys(Action::PauseRun), "pause"),
            (keys(Action::ResumeRun), "resume"),
            (keys(Action::StopRun), "stop"),
            (keys(Action::Pin), "overlay"),
            (keys(Action::ChooseCharts), "charts"),
            (keys(Action::RunTable), "table"),
            (keys(Action::Smoothing), "smoothing"),
        ],
        (Tab::Stats, _) => vec![
            (pair(Action::Down, Action::Up), "version"),
            (keys(Action::Pin), "pin before"),
            (keys(Action::Refresh), "recount"),
        ],
        (Tab::Curate, _) => vec![
            (pair(Action::Down, Action::Up), "field"),
            (pair(Action::Left, Action::Right), "change"),
            (keys(Action::Open), "edit / export"),
            (keys(Action::Refresh), "recount"),
        ],
    };
    let trajectory = &app.tabs.rollouts.trajectory;
    if (app.tab, app.screen()) == (Tab::Rollouts, Screen::Trajectory)
        && trajectory.tokens.is_none()
        && !trajectory.hits.is_empty()
    {
        hints.insert(0, (pair(Action::PrevHit, Action::NextHit), "hit"));
    }
    if (app.tab, app.screen()) == (Tab::Rollouts, Screen::Trajectory)
        && trajectory.tokens.is_none()
        && trajectory
            .current()
            .is_some_and(|section| section.lines.iter().any(|line| line.fold != Fold::Never))
    {
        let verb = if trajectory.unfolded {
            "fold"
        } else {
            "unfold"
        };
        hints.insert(3, (keys(Action::Fold), verb));
    }
    hints.push((keys(Action::Help), "help"));
    hints.push((keys(Action::Quit), "quit"));
    hints
}

/// Draws the help overlay: the page's rows from its scroll on, and where that is.
pub fn draw(frame: &mut Frame, area: Rect, app: &App, page: &HelpPage) {
    let theme = &app.theme;
    let (columns, rows) = inner_size(area.width, area.height);
    let wrapped = page.wrapped(columns);
    let first = page.scroll.min(wrapped.len().saturating_sub(rows));
    let shown: Vec<Line> = wrapped
        .iter()
        .skip(first)
        .take(rows)
        .map(|row| line(theme, row))
        .collect();
    let title = if wrapped.len() > rows {
        format!(
            " keys · {}–{} of {} · ↑↓ PgUp PgDn scroll · any other key closes ",
            first + 1,
            first + shown.len(),
            wrapped.len()
        )
    } else {
        " keys · any key closes ".to_string()
    };
    let height = shown.len() as u16 + 2;
    let box_area = layout::centered(area, HELP_WIDTH, height);
    frame.render_widget(Clear, box_area);
    frame.render_widget(
        Paragraph::new(shown).style(theme.base_style()).block(pane(
            theme,
            Line::from(span(theme, Tone::Accent, title)),
            true,
        )),
        box_area,
    );
}

/// The label keys in use: `1-4`, or up to the session's highest key.
fn label_keys(app: &App) -> String {
    let last = app
        .label_kinds
        .kinds()
        .last()
        .map_or(4, |kind| kind.digit());
    format!("1-{last}")
}

/// A box of `lines` centred in `area`, `width` columns wide, over what is drawn there.
fn draw_box(
    frame: &mut Frame,
    area: Rect,
    theme: &Theme,
    title: Line,
    lines: Vec<Line>,
    width: u16,
) {
    let box_area = layout::centered(area, width, lines.len() as u16 + 2);
    frame.render_widget(Clear, box_area);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .style(theme.base_style())
            .block(pane(theme, title, true)),
        box_area,
    );
}

/// The quit question: the runs launched here that still train, and the two ways out.
pub fn draw_quit_prompt(frame: &mut Frame, area: Rect, app: &App) {
    let theme = &app.theme;
    let mut lines: Vec<Line> = app
        .tabs
        .runs
        .training_here()
        .into_iter()
        .map(|run| {
            Line::from(span(
                theme,
                Tone::Pass,
                format!(
                    "{} {}",
                    crate::text::inert(&run.id),
                    crate::tui::state::runs::describe(run)
                ),
            ))
        })
        .collect();
    lines.push(Line::default());
    for (key, what) in [
        (
            "b",
            "keep them going in the background, and quit (any TUI shows them)",
        ),
        (
            "s",
            "stop after the current step, with a checkpoint, and quit",
        ),
        ("esc", "stay"),
    ] {
        lines.push(Line::from(vec![
            span(theme, Tone::Accent, format!("{key:>5}  ")),
            span(theme, Tone::Text, what),
        ]));
    }
    let title = Line::from(span(
        theme,
        Tone::Warn,
        " quit? runs launched here still train ",
    ));
    draw_box(frame, area, theme, title, lines, 72);
}
