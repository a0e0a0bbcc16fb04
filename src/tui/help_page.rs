//! The `?` overlay's page: the keys of each view with what they do there (in the keymap's
//! actions; the keys themselves come from the user's keymap), the session's label kinds and
//! the prompt's commands, as toned rows that scroll.

use crate::curate::labels::LabelKinds;
use crate::tui::action::Action;
use crate::tui::keymap::Keymap;
use crate::tui::rich::{RichLine, Tone, piece};
use crate::tui::state::Tab;
use crate::tui::state::rollouts::Screen;
use crate::tui::wrap::wrap;

const LIST: &[(Action, &str)] = &[
    (Action::Down, "next row"),
    (Action::Up, "previous row"),
    (Action::PageDown, "page down"),
    (Action::PageUp, "page up"),
    (Action::Top, "first row"),
    (Action::Bottom, "last row"),
    (Action::Open, "open the trajectory"),
    (
        Action::Group,
        "its GRPO group, or every attempt at its task",
    ),
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
    (
        Action::Group,
        "its GRPO group, or every attempt at its task",
    ),
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
    (Action::Down, "the token below (the tokens flow like text)"),
    (Action::Up, "the token above"),
    (Action::PageDown, "ten lines on"),
    (Action::PageUp, "ten lines back"),
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
        "pin this run: its curves overlay the selected run's (again: unpin; up to 4)",
    ),
    (
        Action::ChooseCharts,
        "choose the metrics charted: type to narrow, enter adds or removes one",
    ),
    (
        Action::RunTable,
        "the selected and pinned runs side by side: final and best of each chart",
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

/// The actions of a view, with what they do there: the tab, its screen, and whether the
/// trajectory shows its tokens.
pub fn view_keys(tab: Tab, screen: Screen, tokens: bool) -> &'static [(Action, &'static str)] {
    match tab {
        Tab::Rollouts => match screen {
            Screen::List => LIST,
            Screen::Trajectory if tokens => TOKENS,
            Screen::Trajectory => TRAJECTORY,
            Screen::Group => GROUP,
        },
        Tab::Runs => RUNS,
        Tab::Stats => STATS,
        Tab::Curate => CURATE,
    }
}

/// The help overlay while it is open: its rows and how far it is scrolled.
#[derive(Clone, Debug, PartialEq)]
pub struct HelpPage {
    /// The rows, unwrapped: a key column and what the key does.
    pub rows: Vec<RichLine>,
    /// The first row shown, in wrapped rows.
    pub scroll: usize,
}

/// The overlay's width at most, borders included.
pub const HELP_WIDTH: u16 = 96;

impl HelpPage {
    /// The page of a view's `keys`: each with its keys from `keymap` (the session's label
    /// kinds after the format key), then the prompt's `commands`.
    pub fn new(
        keys: &[(Action, &str)],
        keymap: &Keymap,
        kinds: &LabelKinds,
        commands: &[(&str, &str)],
    ) -> Self {
        let mut rows: Vec<RichLine> = Vec::new();
        let labels_here = keys
            .iter()
            .any(|(action, _)| *action == Action::LabelFormat);
        for (action, what) in keys.iter().chain(EVERYWHERE) {
            let chords: Vec<String> = keymap
                .keys_for(*action)
                .iter()
                .map(ToString::to_string)
                .collect();
            rows.push(vec![
                piece(Tone::Accent, &format!("{:>16}  ", chords.join(" "))),
                piece(Tone::Text, what),
            ]);
            if labels_here && *action == Action::LabelFormat {
                rows.extend(session_kind_rows(kinds));
            }
        }
        rows.push(Vec::new());
        for (command, what) in commands {
            rows.push(vec![
                piece(Tone::Accent, &format!("{command:>22}  ")),
                piece(Tone::Muted, what),
            ]);
        }
        Self { rows, scroll: 0 }
    }

    /// The rows as they fit `columns` cells, long ones wrapped.
    pub fn wrapped(&self, columns: usize) -> Vec<RichLine> {
        self.rows
            .iter()
            .flat_map(|row| {
                if row.is_empty() {
                    vec![Vec::new()]
                } else {
                    wrap(row, columns.max(1))
                }
            })
            .collect()
    }

    /// Scrolls by `delta` rows within a screen of `width` × `height` cells, never past the
    /// last page.
    pub fn scroll_by(&mut self, delta: isize, width: u16, height: u16) {
        let (columns, rows) = inner_size(width, height);
        let last = self.wrapped(columns).len().saturating_sub(rows);
        self.scroll = self.scroll.saturating_add_signed(delta).min(last);
    }

    /// The rows one page holds on a screen `height` cells high.
    pub fn page(height: u16) -> usize {
        inner_size(HELP_WIDTH, height).1.max(1)
    }
}

/// The columns and rows inside the overlay's borders on a screen of `width` × `height`.
pub fn inner_size(width: u16, height: u16) -> (usize, usize) {
    (
        usize::from(width.min(HELP_WIDTH).saturating_sub(2)),
        usize::from(height.saturating_sub(2)),
    )
}

/// The session's own label kinds (`[[labels]]`): key, name and description.
fn session_kind_rows(kinds: &LabelKinds) -> impl Iterator<Item = RichLine> + '_ {
    kinds
        .kinds()
        .into_iter()
        .filter(|kind| !kind.is_builtin())
        .map(move |kind| {
            let what = match kinds.description(kind) {
                Some(description) => format!("{} — {description}", kinds.name(kind)),
                None => kinds.name(kind).to_string(),
            };
            vec![
                piece(Tone::Accent, &format!("{:>16}  ", kind.digit())),
                piece(Tone::Text, &what),
            ]
        })
}
