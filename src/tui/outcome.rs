//! What a view's handler did with an action, for the app to act on.

use crate::engine::{Command, GroupKey};
use crate::trajectory::TrajectoryId;

/// The result of offering an action to a view.
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
    /// Tell the user something.
    Notice(String),
}
