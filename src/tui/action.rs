//! Everything a key can do. Keymap files name these in snake_case (`page_down = ["ctrl-d"]`).

use serde::Deserialize;

/// Where a key binding applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// In every view (unless a view's own binding of the key shadows it).
    Everywhere,
    /// In the Runs tab only.
    Runs,
}

/// A user action, independent of the key that triggers it. Views interpret the movement
/// actions in their own terms (rows in a list, turns in a trajectory, samples in a group).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Leave Rollscope.
    Quit,
    /// Close the current screen or overlay and go back.
    Back,
    /// Show the keys of the current view.
    Help,
    /// Open the `:` command prompt.
    Command,
    /// Search what was said (messages, tool calls, tool results) with the full-text index.
    Search,
    /// In a trajectory, go to the next turn the search matched.
    NextHit,
    /// In a trajectory, go to the previous turn the search matched.
    PrevHit,
    /// Next tab.
    NextTab,
    /// Previous tab.
    PrevTab,
    /// The Rollouts tab.
    TabRollouts,
    /// The Runs tab.
    TabRuns,
    /// The Stats tab.
    TabStats,
    /// The Curate tab.
    TabCurate,
    /// Move up: previous row, scroll up.
    Up,
    /// Move down: next row, scroll down.
    Down,
    /// Move left: previous turn, previous token.
    Left,
    /// Move right: next turn, next token.
    Right,
    /// Scroll code and diffs left by a few columns.
    ScrollLeft,
    /// Scroll code and diffs right by a few columns.
    ScrollRight,
    /// A page up.
    PageUp,
    /// A page down.
    PageDown,
    /// To the first row.
    Top,
    /// To the last row.
    Bottom,
    /// Open the selected trajectory.
    Open,
    /// Open the selected trajectory's GRPO group.
    Group,
    /// Cycle the sort key.
    Sort,
    /// Reverse the sort order.
    Reverse,
    /// Cycle the outcome filter: all, failures, passes.
    Outcome,
    /// Show only unlabelled failures, or everything again.
    Unlabelled,
    /// Swap the turn pane for the token view and back.
    Tokens,
    /// In the token view, shade by entropy instead of log-prob and back.
    Entropy,
    /// In the trajectory view, show reasoning blocks whole, or folded to a line again.
    Fold,
    /// In the trajectory view, the whole conversation in one pane, or one turn per pane.
    Transcript,
    /// In the group view, pin the selected sample as the left side of the diff.
    Pin,
    /// In the group view, diff against the task's reference solution and back.
    Reference,
    /// Label the current turn a calculation error (always `1`).
    LabelCalculation,
    /// Label the current turn a reasoning error (always `2`).
    LabelReasoning,
    /// Label the current turn an understanding error (always `3`).
    LabelUnderstanding,
    /// Label the current turn a format error (always `4`).
    LabelFormat,
    /// Label the current turn with the session's kind of key `5` (`[[labels]]`; always `5`).
    LabelKind5,
    /// Label the current turn with the session's kind of key `6` (always `6`).
    LabelKind6,
    /// Label the current turn with the session's kind of key `7` (always `7`).
    LabelKind7,
    /// Label the current turn with the session's kind of key `8` (always `8`).
    LabelKind8,
    /// Label the current turn with the session's kind of key `9` (always `9`).
    LabelKind9,
    /// Write a note on the current turn's label.
    Note,
    /// Undo the last label change.
    Undo,
    /// Accept the suggested labels of the current turn.
    Accept,
    /// Open the next unlabelled failure of the list.
    NextBadcase,
    /// Open the previous unlabelled failure of the list.
    PrevBadcase,
    /// Smooth the run charts or show the raw values.
    Smoothing,
    /// Reload what the current tab shows from the store.
    Refresh,
    /// In the Runs tab, open the form that launches a GRPO run.
    NewRun,
    /// In the Runs tab, follow another stack's run: asks for its files or run folders.
    FollowRun,
    /// Fork the open trajectory from the current turn: asks how many continuations.
    Fork,
    /// Repair the open failure: fork from the turn of its first labelled error (a person's
    /// label before a suggestion), its correct turns kept.
    Repair,
    /// Open the next child of the open trajectory's branches (or the next sibling).
    Branch,
    /// Open the trajectory the open one forks.
    ForkParent,
    /// In the Runs tab, pause the selected run after its current step.
    PauseRun,
    /// In the Runs tab, resume the selected run (paused, or stopped from its checkpoint).
    ResumeRun,
    /// In the Runs tab, stop the selected run after its current step, with a checkpoint.
    StopRun,
    /// In the Runs tab, choose the metrics charted: a picker of every metric recorded.
    ChooseCharts,
    /// In the Runs tab, show the selected and pinned runs side by side in a table, or the
    /// charts again.
    RunTable,
}

impl Action {
    /// A few words for the help overlay and the key hints.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Quit => "quit",
            Self::Back => "back",
            Self::Help => "help",
            Self::Command => "command",
            Self::Search => "search",
            Self::NextHit => "next search hit",
            Self::PrevHit => "previous search hit",
            Self::NextTab => "next tab",
            Self::PrevTab => "previous tab",
            Self::TabRollouts => "rollouts",
            Self::TabRuns => "runs",
            Self::TabStats => "stats",
            Self::TabCurate => "curate",
            Self::Up => "up",
            Self::Down => "down",
            Self::Left => "left",
            Self::Right => "right",
            Self::ScrollLeft => "scroll left",
            Self::ScrollRight => "scroll right",
            Self::PageUp => "page up",
            Self::PageDown => "page down",
            Self::Top => "first",
            Self::Bottom => "last",
            Self::Open => "open",
            Self::Group => "group",
            Self::Sort => "sort",
            Self::Reverse => "reverse order",
            Self::Outcome => "all/fail/pass",
            Self::Unlabelled => "unlabelled only",
            Self::Tokens => "tokens",
            Self::Entropy => "log-prob/entropy",
            Self::Fold => "fold reasoning",
            Self::Transcript => "whole conversation / one turn",
            Self::Pin => "pin for diff",
            Self::Reference => "diff vs reference",
            Self::LabelCalculation => "calculation",
            Self::LabelReasoning => "reasoning",
            Self::LabelUnderstanding => "understanding",
            Self::LabelFormat => "format",
            Self::LabelKind5 => "session kind 5",
            Self::LabelKind6 => "session kind 6",
            Self::LabelKind7 => "session kind 7",
            Self::LabelKind8 => "session kind 8",
            Self::LabelKind9 => "session kind 9",
            Self::Note => "note",
            Self::Undo => "undo",
            Self::Accept => "accept suggestion",
            Self::NextBadcase => "next badcase",
            Self::PrevBadcase => "previous badcase",
            Self::Smoothing => "smoothing",
            Self::Refresh => "reload",
            Self::NewRun => "new run",
            Self::FollowRun => "follow a run",
            Self::Fork => "fork from this turn",
            Self::Repair => "repair from the first error",
            Self::Branch => "next branch",
            Self::ForkParent => "fork's parent",
            Self::PauseRun => "pause run",
            Self::ResumeRun => "resume run",
            Self::StopRun => "stop run",
            Self::ChooseCharts => "choose charts",
            Self::RunTable => "table of runs",
        }
    }

    /// Where the action's keys apply: the Runs tab's own keys shadow global keys there only.
    pub fn scope(self) -> Scope {
        match self {
            Self::NewRun
            | Self::FollowRun
            | Self::PauseRun
            | Self::ResumeRun
            | Self::StopRun
            | Self::ChooseCharts
            | Self::RunTable => Scope::Runs,
            _ => Scope::Everywhere,
        }
    }

    /// The error kind a label action sets.
    pub fn label_kind(self) -> Option<crate::trajectory::ErrorKind> {
        use crate::trajectory::{ErrorKind, KindKey};
        let session = |digit| KindKey::new(digit).map(ErrorKind::Session);
        match self {
            Self::LabelCalculation => Some(ErrorKind::Calculation),
            Self::LabelReasoning => Some(ErrorKind::Reasoning),
            Self::LabelUnderstanding => Some(ErrorKind::Understanding),
            Self::LabelFormat => Some(ErrorKind::Format),
            Self::LabelKind5 => session(5),
            Self::LabelKind6 => session(6),
            Self::LabelKind7 => session(7),
            Self::LabelKind8 => session(8),
            Self::LabelKind9 => session(9),
            _ => None,
        }
    }
}
