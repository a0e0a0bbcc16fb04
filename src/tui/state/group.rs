//! The group screen's state: the G samples of a GRPO group, the selected and pinned ones,
//! and the diff between them (or against the task's reference solution).

use crate::engine::{GroupKey, LoadedGroup, Tag};
use crate::text::clip;
use crate::trajectory::{Role, Trajectory};
use crate::tui::action::Action;
use crate::tui::outcome::Outcome;
use crate::tui::rich::{RichLine, Tone, piece};
use crate::tui::wrap::width;
use similar::{ChangeTag, TextDiff};
use std::time::Duration;

/// Columns one sideways scroll moves the diff by.
const SIDE_STEP: usize = 8;

/// Most characters of one message a transcript keeps for diffing.
const TRANSCRIPT_MESSAGE_CHARS: usize = 4000;

/// How long a diff may take before it settles for a coarser answer.
const DIFF_DEADLINE: Duration = Duration::from_millis(200);

/// The group screen's state.
#[derive(Clone, Debug, Default)]
pub struct GroupState {
    /// The load in flight.
    pub tag: Tag,
    /// The group being loaded.
    pub loading: Option<GroupKey>,
    /// The group shown.
    pub group: Option<Box<LoadedGroup>>,
    /// The selected sample (right side of the diff).
    pub selected: usize,
    /// The pinned sample (left side of the diff).
    pub pinned: usize,
    /// Diff the selected sample against the task's reference solution instead.
    pub reference: bool,
    /// The diff's lines.
    pub diff: Vec<RichLine>,
    /// The first diff line shown.
    pub scroll: usize,
    /// The first diff column shown (long lines scroll sideways).
    pub across: usize,
}

impl GroupState {
    /// Starts loading a group.
    pub fn start_loading(&mut self, key: GroupKey, tag: Tag) {
        self.loading = Some(key);
        self.tag = tag;
    }

    /// Takes a loaded group if it is the one awaited; selects `focus` when it is a member.
    pub fn receive(
        &mut self,
        tag: Tag,
        group: LoadedGroup,
        focus: Option<crate::trajectory::TrajectoryId>,
    ) -> bool {
        if tag != self.tag || self.loading.as_ref() != Some(&group.key) {
            return false;
        }
        self.loading = None;
        self.selected = focus
            .and_then(|id| group.members.iter().position(|member| member.id == id))
            .unwrap_or(0);
        self.pinned = usize::from(self.selected == 0 && group.members.len() > 1);
        self.reference = false;
        self.group = Some(Box::new(group));
        self.rediff();
        true
    }

    /// The rewards of the samples (0 for a sample without one).
    pub fn rewards(&self) -> Vec<f64> {
        self.group.as_ref().map_or_else(Vec::new, |group| {
            group
                .members
                .iter()
                .map(|member| member.reward.as_ref().map_or(0.0, |reward| reward.total))
                .collect()
        })
    }

    /// Mean and (population) standard deviation of the rewards.
    pub fn reward_stats(&self) -> (f64, f64) {
        let rewards = self.rewards();
        let count = rewards.len().max(1) as f64;
        let mean = rewards.iter().sum::<f64>() / count;
        let variance = rewards.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / count;
        (mean, variance.sqrt())
    }

    /// Whether every sample got the same reward: such a group carries no learning signal.
    pub fn zero_variance(&self) -> bool {
        let rewards = self.rewards();
        rewards.len() > 1 && rewards.iter().all(|r| (r - rewards[0]).abs() < 1e-12)
    }

    /// The selected sample.
    pub fn selected_member(&self) -> Option<&Trajectory> {
        self.group.as_ref()?.members.get(self.selected)
    }

    /// Handles an action; `page` is the diff pane's height.
    pub fn on_action(&mut self, action: Action, page: usize) -> Outcome {
        let Some(group) = &self.group else {
            return Outcome::Ignored;
        };
        let count = group.members.len();
        let last_line = self.diff.len().saturating_sub(1);
        match action {
            Action::Down if self.selected + 1 < count => {
                self.selected += 1;
                self.rediff();
            }
            Action::Up if self.selected > 0 => {
                self.selected -= 1;
                self.rediff();
            }
            Action::Pin => {
                self.pinned = self.selected;
                self.reference = false;
                self.rediff();
            }
            Action::Reference => {
                if group
                    .task
                    .as_ref()
                    .and_then(|task| task.reference_solution.as_ref())
                    .is_none()
                {
                    return Outcome::Notice("the task has no reference solution".into());
                }
                self.reference = !self.reference;
                self.rediff();
            }
            Action::PageDown => self.scroll = (self.scroll + page.max(1)).min(last_line),
            Action::PageUp => self.scroll = self.scroll.saturating_sub(page.max(1)),
            Action::Right | Action::ScrollRight => {
                let widest = self.diff.iter().map(width).max().unwrap_or(0);
                self.across = (self.across + SIDE_STEP).min(widest.saturating_sub(SIDE_STEP));
            }
            Action::Left | Action::ScrollLeft => {
                self.across = self.across.saturating_sub(SIDE_STEP);
            }
            Action::Open => {
                return self
                    .selected_member()
                    .map_or(Outcome::Ignored, |member| Outcome::Open(member.id));
            }
            Action::Up | Action::Down => {}
            _ => return Outcome::Ignored,
        }
        Outcome::Commands(Vec::new())
    }

    /// Recomputes the diff: pinned ⇄ selected, or reference ⇄ selected.
    fn rediff(&mut self) {
        self.scroll = 0;
        self.across = 0;
        let Some(group) = &self.group else {
            self.diff.clear();
            return;
        };
        let Some(selected) = group.members.get(self.selected) else {
            self.diff.clear();
            return;
        };
        let left = if self.reference {
            group
                .task
                .as_ref()
                .and_then(|task| task.reference_solution.clone())
                .unwrap_or_default()
        } else {
            group
                .members
                .get(self.pinned)
                .map(transcript)
                .unwrap_or_default()
        };
        self.diff = diff_lines(&left, &transcript(selected));
    }
}

/// What a trajectory did, as lines to diff: its messages after the prompt, tool calls as
/// `→ name arguments`, observations as `= output`.
pub fn transcript(trajectory: &Trajectory) -> String {
    transcript_from(trajectory, trajectory.prompt_messages().len())
}

/// What a trajectory did from message `first` on, as `transcript` writes it.
pub fn transcript_from(trajectory: &Trajectory, first: usize) -> String {
    let mut lines = Vec::new();
    for message in &trajectory.messages[first.min(trajectory.messages.len())..] {
        let text = clip(&message.content, TRANSCRIPT_MESSAGE_CHARS);
        match message.role {
            Role::Assistant => {
                lines.extend(text.lines().map(str::to_string));
                for call in &message.tool_calls {
                    lines.push(format!("→ {} {}", call.name, clip(&call.arguments, 400)));
                }
            }
            _ => lines.extend(text.lines().map(|line| format!("= {line}"))),
        }
    }
    lines.join("\n")
}

/// A line diff as toned lines: `  ` same, `- ` only left, `+ ` only right.
pub fn diff_lines(left: &str, right: &str) -> Vec<RichLine> {
    let diff = TextDiff::configure()
        .timeout(DIFF_DEADLINE)
        .diff_lines(left, right);
    diff.iter_all_changes()
        .map(|change| {
            let (sign, tone) = match change.tag() {
                ChangeTag::Equal => ("  ", Tone::Text),
                ChangeTag::Delete => ("- ", Tone::DiffRemove),
                ChangeTag::Insert => ("+ ", Tone::DiffAdd),
            };
            let text = change.value().trim_end_matches(['\n', '\r']);
            vec![piece(tone, &format!("{sign}{text}"))]
        })
        .collect()
}
