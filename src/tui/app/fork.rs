//! Forks from the trajectory screen: `F` asks how many continuations (and an edited tool
//! result) and starts `rollscope fork` in the background; `R` repairs a labelled failure
//! (forks from its first labelled error's turn); `b` walks the branches made from
//! the open trajectory (and a branch's siblings), `B` goes up to the trajectory it forks.

use super::App;
use crate::curate::repair::{LabelSource, first_error_label};
use crate::engine::{Command, ForkLaunch};
use crate::trajectory::{Role, Trajectory, TrajectoryId};
use crate::tui::action::Action;
use crate::tui::prompt::{Prompt, PromptKind};

/// Continuations a fork asks for unless told otherwise.
const DEFAULT_CONTINUATIONS: usize = 8;

impl App {
    /// `F`, `b` and `B`; `None` when not one of them.
    pub(super) fn on_fork_action(&mut self, action: Action) -> Option<Vec<Command>> {
        if !matches!(
            action,
            Action::Fork | Action::Repair | Action::Branch | Action::ForkParent
        ) {
            return None;
        }
        if self.tabs.rollouts.blind {
            self.notify(super::BLIND_ONLY);
            return Some(Vec::new());
        }
        let Some(open) = self.open_trajectory_now() else {
            self.notify("open a trajectory to fork it or walk its branches");
            return Some(Vec::new());
        };
        let next_branch = BranchWalk::next(self.branch_walk.as_ref(), open);
        let parent = open.fork.as_ref().map(|origin| origin.parent);
        Some(match action {
            Action::Fork => {
                if self.fork_turn().is_some() {
                    let offered = DEFAULT_CONTINUATIONS.to_string();
                    self.prompt = Some(Prompt::with_input(PromptKind::Fork, &offered));
                } else {
                    self.notify("go to a turn (h/l) to fork from it");
                }
                Vec::new()
            }
            Action::Repair => {
                let plan = repair_launch(open);
                match plan {
                    Ok((fork, words)) => {
                        self.notify(words);
                        vec![Command::ForkTrajectory(fork)]
                    }
                    Err(message) => {
                        self.warn(message);
                        Vec::new()
                    }
                }
            }
            Action::Branch => match next_branch {
                Some(walk) => {
                    let id = walk.children[walk.at];
                    self.notify(format!(
                        "branch child {} of {} from {}; b the next, B back up",
                        walk.at + 1,
                        walk.children.len(),
                        walk.parent.short(8)
                    ));
                    self.branch_walk = Some(walk);
                    self.open_trajectory(id, false)
                }
                None => {
                    self.notify("no branches here yet: F forks from the current turn");
                    Vec::new()
                }
            },
            _ => match parent {
                Some(parent) => self.open_trajectory(parent, false),
                None => {
                    self.notify("this trajectory is not a fork: it has no parent");
                    Vec::new()
                }
            },
        })
    }

    /// The fork typed at the prompt: `N`, then optionally `obs=TEXT` (the tool result just
    /// before the turn replaced) and `policy=DIR|STEP`.
    pub(super) fn submit_fork(&mut self, input: &str) -> Vec<Command> {
        let (Some(open), Some(turn)) = (self.open_trajectory_now(), self.fork_turn()) else {
            self.notify("open a trajectory and go to a turn to fork from it");
            return Vec::new();
        };
        let result_before = has_result_before(open, turn);
        match parse_fork(input, open.id, turn) {
            Ok(fork) => {
                if fork.observation.is_some() && !result_before {
                    self.warn(format!(
                        "no tool result comes just before t{turn} to replace"
                    ));
                    return Vec::new();
                }
                self.notify(format!(
                    "forking t{turn} × {} in the background; ctrl-r shows its branch here when it ends, b opens it",
                    fork.n
                ));
                vec![Command::ForkTrajectory(fork)]
            }
            Err(message) => {
                self.warn(message);
                Vec::new()
            }
        }
    }

    fn open_trajectory_now(&self) -> Option<&Trajectory> {
        let state = &self.tabs.rollouts;
        let open = state.trajectory.open.as_ref()?;
        (state.screen() == crate::tui::Screen::Trajectory).then(|| open.trajectory())
    }

    /// The turn (1-based) of the current step.
    fn fork_turn(&self) -> Option<usize> {
        let state = &self.tabs.rollouts.trajectory;
        let open = state.open.as_ref()?.trajectory();
        open.turn_of_step(state.current_step()?)
    }
}

/// Where `b` is in the children of one trajectory's branches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BranchWalk {
    /// The trajectory forked.
    pub parent: TrajectoryId,
    /// The children of its branches, newest branch first.
    pub children: Vec<TrajectoryId>,
    /// The child open now.
    pub at: usize,
}

impl BranchWalk {
    /// The walk after `b` on `open`: in a child of the walk, its next sibling (round);
    /// elsewhere, the first child of the newest branch of `open`.
    fn next(walk: Option<&Self>, open: &Trajectory) -> Option<Self> {
        if let Some(walk) = walk
            && open.fork.as_ref().map(|origin| origin.parent) == Some(walk.parent)
            && open.branches.is_empty()
        {
            return Some(Self {
                at: (walk.at + 1) % walk.children.len(),
                ..walk.clone()
            });
        }
        let children: Vec<TrajectoryId> = open
            .branches
            .iter()
            .rev()
            .flat_map(|branch| branch.children.iter().copied())
            .collect();
        (!children.is_empty()).then_some(Self {
            parent: open.id,
            children,
            at: 0,
        })
    }
}

/// The fork that repairs `open`, with the words that say so; why not, when it cannot.
fn repair_launch(open: &Trajectory) -> Result<(ForkLaunch, String), String> {
    if open.passed() != Some(false) {
        return Err("repair is for failures: this trajectory did not fail".into());
    }
    let label = first_error_label(&open.labels)
        .ok_or("label the first wrong turn (1-4) first: a repair resamples from it")?;
    let turn = open
        .turn_of_step(label.step as usize)
        .ok_or("the first label names a step this trajectory does not have")?;
    let source = match LabelSource::of(label) {
        LabelSource::Hand => "labelled",
        LabelSource::Suggested => "suggested",
    };
    let fork = ForkLaunch {
        id: open.id,
        turn,
        n: DEFAULT_CONTINUATIONS,
        observation: None,
        policy: None,
    };
    let words = format!(
        "repairing from t{turn} ({source} {} error) × {}, the turns before kept; b opens the branch when it ends",
        label.kind, fork.n
    );
    Ok((fork, words))
}

fn has_result_before(open: &Trajectory, turn: usize) -> bool {
    let assistants = open.turn_messages();
    turn >= 2
        && open.messages[assistants[turn - 2] + 1..assistants[turn - 1]]
            .iter()
            .any(|message| message.role == Role::Tool)
}

/// `8`, `16 obs=42`, `4 policy=models/sft-0001 obs="a b"` for a fork of `id` from `turn`.
fn parse_fork(input: &str, id: TrajectoryId, turn: usize) -> Result<ForkLaunch, String> {
    let words = shlex::split(input).ok_or_else(|| format!("`{input}` has an unclosed quote"))?;
    let mut words = words.into_iter();
    let n = match words.next() {
        None => DEFAULT_CONTINUATIONS,
        Some(word) => word
            .parse::<usize>()
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| format!("`{word}`: first the number of continuations, e.g. 8"))?,
    };
    let mut fork = ForkLaunch {
        id,
        turn,
        n,
        observation: None,
        policy: None,
    };
    for word in words {
        match word.split_once('=') {
            Some(("obs", text)) => fork.observation = Some(text.to_string()),
            Some(("policy", policy)) => fork.policy = Some(policy.to_string()),
            _ => {
                return Err(format!(
                    "`{word}`: write obs=TEXT (the tool result before this turn) or policy=DIR|STEP"
                ));
            }
        }
    }
    Ok(fork)
}
