//! The keys of each view with what they do there: the `?` overlay's tables, in the keymap's
//! actions (the keys themselves come from the user's keymap).

use crate::tui::action::Action;
use crate::tui::app::{App, Screen, Tab};

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
        "search what was said (words, prefix*, \"phrase\", tool:NAME, role:R)",
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
    (Action::Top, "first message"),
    (Action::Bottom, "last message"),
    (
        Action::Transcript,
        "whole conversation in one pane / one turn per pane",
    ),
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
    (
        Action::Repair,
        "repair a failure: sample again from its first labelled error",
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

/// The keys that work in every view.
pub(super) const EVERYWHERE: &[(Action, &str)] = &[
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
