//! The `?` overlay (the keys of the current view, from the keymap) and the key hints of the
//! bottom bar.

use super::widgets::{pane, span};
use crate::tui::action::Action;
use crate::tui::app::{App, Screen, Tab};
use crate::tui::layout;
use crate::tui::rich::Tone;
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Clear, Paragraph, Wrap};

const LIST: &[(Action, &str)] = &[
    (Action::Down, "next row"),
    (Action::Up, "previous row"),
    (Action::PageDown, "page down"),
    (Action::PageUp, "page up"),
    (Action::Top, "first row"),
    (Action::Bottom, "last row"),
    (Action::Open, "open the trajectory"),
    (Action::Group, "its GRPO group"),
    (
        Action::Search,
        "search what was said (words, \"a phrase\", tool:NAME, role:ROLE)",
    ),
    (Action::Outcome, "all / failures / passes"),
    (Action::Unlabelled, "unlabelled failures only"),
    (Action::Sort, "next sort key"),
    (Action::Reverse, "reverse the order"),
    (Action::NextBadcase, "next unlabelled failure"),
    (Action::PrevBadcase, "previous unlabelled failure"),
    (Action::LabelCalculation, "calculation (first low-PRM turn)"),
    (Action::LabelReasoning, "reasoning"),
    (Action::LabelUnderstanding, "understanding"),
    (Action::LabelFormat, "format"),
    (Action::Accept, "accept suggestion"),
    (Action::Undo, "undo label change"),
];

const TRAJECTORY: &[(Action, &str)] = &[
    (Action::Right, "next turn"),
    (Action::Left, "previous turn"),
    (Action::Down, "scroll down"),
    (Action::Up, "scroll up"),
    (Action::PageDown, "page down"),
    (Action::PageUp, "page up"),
    (Action::ScrollRight, "scroll code and JSON right"),
    (Action::ScrollLeft, "scroll code and JSON left"),
    (
        Action::Fold,
        "unfold / fold reasoning (<think>, reasoning_content)",
    ),
    (Action::Tokens, "tokens (trained vs masked)"),
    (Action::Group, "its GRPO group"),
    (Action::LabelCalculation, "calculation error on this turn"),
    (Action::LabelReasoning, "reasoning error"),
    (Action::LabelUnderstanding, "understanding error"),
    (Action::LabelFormat, "format error"),
    (Action::Accept, "accept the turn's suggestion"),
    (Action::Note, "note on the turn's label"),
    (Action::Undo, "undo label change"),
    (Action::NextBadcase, "next unlabelled failure"),
    (Action::PrevBadcase, "previous unlabelled failure"),
    (Action::NextHit, "next turn the search matched"),
    (Action::PrevHit, "previous turn the search matched"),
    (
        Action::Fork,
        "fork: sample again from this turn (N, an edited tool result)",
    ),
    (Action::Branch, "open the next child of its branches"),
    (Action::ForkParent, "open the trajectory it forks"),
    (Action::Back, "back to the list"),
];

const TOKENS: &[(Action, &str)] = &[
    (Action::Right, "next token"),
    (Action::Left, "previous token"),
    (Action::Down, "next row of tokens"),
    (Action::Up, "previous row of tokens"),
    (Action::PageDown, "ten rows on"),
    (Action::PageUp, "ten rows back"),
    (Action::Top, "first token"),
    (Action::Bottom, "last token"),
    (Action::Entropy, "shade by log-prob / entropy"),
    (Action::Tokens, "back to the turn's text"),
    (Action::LabelCalculation, "calculation error on this turn"),
    (Action::LabelReasoning, "reasoning error"),
    (Action::LabelUnderstanding, "understanding error"),
    (Action::LabelFormat, "format error"),
    (Action::Back, "back to the turn's text"),
];

const GROUP: &[(Action, &str)] = &[
    (Action::Down, "next sample"),
    (Action::Up, "previous sample"),
    (Action::Pin, "pin as the diff's left side"),
    (Action::Reference, "diff against the reference solution"),
    (Action::PageDown, "scroll the diff"),
    (Action::PageUp, "scroll the diff back"),
    (Action::Right, "scroll the diff right"),
    (Action::Left, "scroll the diff left"),
    (Action::Open, "open the sample"),
    (Action::Back, "back"),
];

const RUNS: &[(Action, &str)] = &[
    (Action::Down, "next run"),
    (Action::Up, "previous run"),
    (Action::Smoothing, "smooth the charts"),
    (
        Action::Pin,
        "pin this run: its curves overlay the selected run's (again: unpin)",
    ),
    (Action::Left, "step cursor to the previous step"),
    (
        Action::Right,
        "step cursor to the next step (past the newest: follow it)",
    ),
    (
        Action::Open,
        "the cursor's step's rollouts by GRPO group (the whole run's until it moved)",
    ),
    (
        Action::NewRun,
        "launch a GRPO run (form); it trains in the background",
    ),
    (
        Action::FollowRun,
        "follow a TRL / verl / other run's files or folder as it trains",
    ),
    (
        Action::PauseRun,
        "pause the run after its step (any process's)",
    ),
    (
        Action::ResumeRun,
        "resume: paused, stopped / interrupted from its checkpoint, a follow",
    ),
    (Action::StopRun, "stop after its step, with a checkpoint"),
    (Action::Refresh, "reload"),
];

const STATS: &[(Action, &str)] = &[
    (Action::Down, "next policy version (B, after)"),
    (Action::Up, "previous policy version"),
    (Action::PageDown, "ten versions on"),
    (Action::PageUp, "ten versions back"),
    (Action::Pin, "pin as A (before); again to unpin"),
    (Action::Refresh, "recount"),
];

const CURATE: &[(Action, &str)] = &[
    (Action::Down, "next field"),
    (Action::Up, "previous field"),
    (Action::Right, "more / on / next choice"),
    (Action::Left, "less / off / previous choice"),
    (Action::Pin, "toggle or cycle"),
    (Action::Open, "edit the source or path; run the export"),
    (Action::Refresh, "recount"),
];

const EVERYWHERE: &[(Action, &str)] = &[
    (Action::NextTab, "next tab"),
    (Action::PrevTab, "previous tab"),
    (Action::TabRollouts, "rollouts"),
    (Action::TabRuns, "runs"),
    (Action::TabStats, "stats"),
    (Action::TabCurate, "curate"),
    (Action::Command, "command prompt"),
    (Action::Help, "this help"),
    (Action::Quit, "quit"),
];

/// The actions of the view on screen, with what they do there.
pub fn view_keys(app: &App) -> &'static [(Action, &'static str)] {
    match app.tab {
        Tab::Rollouts => match app.screen() {
            Screen::List => LIST,
            Screen::Trajectory if app.tabs.rollouts.trajectory.tokens.is_some() => TOKENS,
            Screen::Trajectory => TRAJECTORY,
            Screen::Group => GROUP,
        },
        Tab::Runs => RUNS,
        Tab::Stats => STATS,
        Tab::Curate => CURATE,
    }
}

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
                (pair(Action::Down, Action::Up), "row"),
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
            (label_keys(app), "label"),
            (keys(Action::Note), "note"),
            (keys(Action::Undo), "undo"),
            (keys(Action::NextBadcase), "next badcase"),
            (keys(Action::Fork), "fork"),
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
            .is_some_and(|section| section.lines.iter().any(|line| line.reasoning))
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

/// Draws the help overlay.
pub fn draw(frame: &mut Frame, area: Rect, app: &App) {
    let theme = &app.theme;
    let mut lines: Vec<Line> = Vec::new();
    let labels_here = view_keys(app)
        .iter()
        .any(|(action, _)| *action == Action::LabelFormat);
    for (action, what) in view_keys(app).iter().chain(EVERYWHERE) {
        let keys: Vec<String> = app
            .keymap
            .keys_for(*action)
            .iter()
            .map(ToString::to_string)
            .collect();
        lines.push(Line::from(vec![
            span(theme, Tone::Accent, format!("{:>16}  ", keys.join(" "))),
            span(theme, Tone::Text, *what),
        ]));
        if labels_here && *action == Action::LabelFormat {
            lines.extend(session_kind_lines(app));
        }
    }
    lines.push(Line::default());
    for (command, what) in crate::tui::app::COMMANDS {
        lines.push(Line::from(vec![
            span(theme, Tone::Accent, format!("{command:>22}  ")),
            span(theme, Tone::Muted, what),
        ]));
    }
    let title = Line::from(span(theme, Tone::Accent, " keys · any key closes "));
    draw_box(frame, area, theme, title, lines, 96);
}

/// The session's own label kinds (`[[labels]]`): key, name and description.
fn session_kind_lines<'a>(app: &'a App) -> impl Iterator<Item = Line<'a>> {
    let kinds = &app.label_kinds;
    kinds
        .kinds()
        .into_iter()
        .filter(|kind| !kind.is_builtin())
        .map(move |kind| {
            let what = match kinds.description(kind) {
                Some(description) => format!("{} — {description}", kinds.name(kind)),
                None => kinds.name(kind).to_string(),
            };
            Line::from(vec![
                span(&app.theme, Tone::Accent, format!("{:>16}  ", kind.digit())),
                span(
                    &app.theme,
                    Tone::Text,
                    crate::text::inert(&what).into_owned(),
                ),
            ])
        })
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
