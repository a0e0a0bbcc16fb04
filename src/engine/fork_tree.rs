//! The fork tree an open trajectory belongs to: up through its parents to the root, then
//! down through every branch's children, depth first, bounded so a huge tree stays cheap.

use crate::store::Store;
use crate::trajectory::{ForkNode, Trajectory, TrajectoryId};

/// Most trajectories one overview loads.
pub const MAX_NODES: usize = 200;

/// Most parents followed up to the root.
const MAX_DEPTH: usize = 64;

/// The tree `trajectory` belongs to, depth first from its root (at most `MAX_NODES`
/// trajectories, each read only when it is drawn); empty when it neither forks nor was
/// forked.
pub fn fork_tree(store: &Store, trajectory: &Trajectory) -> anyhow::Result<Vec<ForkNode>> {
    if trajectory.fork.is_none() && trajectory.branches.is_empty() {
        return Ok(Vec::new());
    }
    let mut root = trajectory.clone();
    for _ in 0..MAX_DEPTH {
        let Some(origin) = &root.fork else { break };
        match store.get_without_trace(origin.parent)? {
            Some(parent) => root = parent,
            None => break,
        }
    }
    let mut nodes = Vec::new();
    let mut stack: Vec<(TrajectoryId, u32, bool)> = vec![(root.id, 0, true)];
    let mut next = Some(root);
    while let Some((id, depth, last)) = stack.pop() {
        if nodes.len() == MAX_NODES {
            break;
        }
        let node = match next.take() {
            Some(node) => node,
            None => match store.get_without_trace(id)? {
                Some(node) => node,
                None => continue,
            },
        };
        nodes.push(ForkNode {
            id: node.id,
            depth,
            origin: node.fork.as_ref().map(|origin| (origin.turn, origin.index)),
            passed: node.passed(),
            reward: node.reward.as_ref().map(|reward| reward.total),
            last,
        });
        let children: Vec<TrajectoryId> = node
            .branches
            .iter()
            .flat_map(|branch| branch.children.iter().copied())
            .collect();
        let count = children.len();
        for (index, child) in children.into_iter().enumerate().rev() {
            stack.push((child, depth + 1, index + 1 == count));
        }
    }
    Ok(nodes)
}
