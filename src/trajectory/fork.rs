//! Where a forked trajectory came from: its parent, the turn it was continued from, what was
//! edited before continuing, and the seed of its sampler.

use super::TrajectoryId;
use serde::{Deserialize, Serialize};

/// The origin of a trajectory sampled from the middle of another one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ForkOrigin {
    /// The trajectory it continues.
    pub parent: TrajectoryId,
    /// The turn it was sampled from, 1-based: turns before it are the parent's.
    pub turn: u32,
    /// Its index among the continuations of one fork, 0-based.
    pub index: u32,
    /// The seed of its sampler.
    pub seed: u64,
    /// Messages of the prefix replaced before continuing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edits: Vec<MessageEdit>,
    /// The model folder or endpoint that sampled the continuation.
    pub policy: String,
    /// How the prefix was given to the policy.
    pub prefix: PrefixKind,
}

/// A fork made from a trajectory, recorded on it so its branches can be listed and opened.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ForkBranch {
    /// The rollout run holding the children.
    pub run: String,
    /// The turn they continue from, 1-based.
    pub turn: u32,
    /// The children, in index order.
    pub children: Vec<TrajectoryId>,
    /// How many of them passed.
    pub passed: u32,
    /// Whether the messages before the turn were edited.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub edited: bool,
}

/// One message of the prefix replaced by new text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageEdit {
    /// Its index in the child's messages.
    pub message: usize,
    /// The text the parent had there.
    pub original: String,
}

/// How a fork's prefix reached the policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PrefixKind {
    /// The parent's tokens, kept token for token (a local policy on a trace it can read).
    Tokens,
    /// The prefix messages rendered again through the policy's chat template.
    Rendered,
    /// The prefix messages sent to an endpoint.
    Messages,
}

impl PrefixKind {
    /// How a message names it.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Tokens => "the parent's tokens, kept token for token",
            Self::Rendered => "the prefix rendered again through the chat template",
            Self::Messages => "the prefix messages, sent to the endpoint",
        }
    }
}

/// One trajectory of a fork tree as the tree overview shows it, in depth-first order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ForkNode {
    /// The trajectory.
    pub id: TrajectoryId,
    /// How far below the root (the first trajectory not forked from another), 0 for it.
    pub depth: u32,
    /// The turn it was sampled from and its index among that fork's continuations; `None`
    /// for the root.
    pub origin: Option<(u32, u32)>,
    /// Whether it passed, where known.
    pub passed: Option<bool>,
    /// Its outcome reward, where known.
    pub reward: Option<f64>,
    /// Whether it is the last child of its parent (the overview draws `└─`, else `├─`).
    pub last: bool,
}
