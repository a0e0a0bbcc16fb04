//! What a tab's or screen's handler did with an action, for the app to act on.

use super::prompt::Prompt;
use crate::engine::{Command, GroupKey, Listing};
use crate::trajectory::TrajectoryId;

/// The result of offering an action to a tab or a screen.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The view does not use this action.
    Ignored,
    /// Done; these commands go to the engine.
    Commands(Vec<Command>),
    /// Open this trajectory in the trajectory screen.
    Open(TrajectoryId),
    /// Open this group in the group screen.
    OpenGroup(GroupKey),
    /// Show this listing in the Rollouts tab's list.
    List(Listing),
    /// Open this prompt.
    Prompt(Prompt),
    /// Tell the user something.
    Notice(String),
}
