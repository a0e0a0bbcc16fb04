//! The fork tree an opened trajectory carries: root first, depth first, drawn in its outcome.

use super::engine::next;
use rollscope::engine::{Command, Engine, EngineConfig, Tag, Update};
use rollscope::store::Store;
use std::sync::Arc;

#[test]
fn an_opened_fork_carries_its_whole_tree_which_the_outcome_draws() {
    use rollscope::trajectory::{
        ForkBranch, ForkOrigin, Message, PrefixKind, Reward, Trajectory, TrajectoryId,
    };
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(&dir.path().join("store")).unwrap());
    let node = |id: u64, parent: Option<(u64, u32, u32)>, children: &[u64], reward: f64| {
        let mut trajectory = Trajectory::new(
            TrajectoryId(id),
            vec![
                Message::user("q"),
                Message::assistant("a"),
                Message::assistant("b"),
            ],
        );
        trajectory.reward = Some(Reward::scalar(reward));
        trajectory.fork = parent.map(|(parent, turn, index)| ForkOrigin {
            parent: TrajectoryId(parent),
            turn,
            index,
            seed: 0,
            edits: Vec::new(),
            policy: "m".into(),
            prefix: PrefixKind::Rendered,
        });
        if !children.is_empty() {
            trajectory.branches.push(ForkBranch {
                run: "rollout-0002".into(),
                turn: 1,
                children: children.iter().map(|&child| TrajectoryId(child)).collect(),
                passed: 0,
                edited: false,
            });
        }
        trajectory
    };
    store
        .put_trajectories(&[
            node(0x10, None, &[0x20, 0x30], 0.0),
            node(0x20, Some((0x10, 1, 0)), &[0x40], 0.0),
            node(0x30, Some((0x10, 1, 1)), &[], 1.0),
            node(0x40, Some((0x20, 2, 0)), &[], 1.0),
            node(0x50, None, &[], 1.0),
        ])
        .unwrap();
    let (engine, updates) = Engine::spawn(store, EngineConfig::default()).unwrap();
    engine.send(Command::LoadTrajectory {
        tag: Tag(1),
        id: TrajectoryId(0x40),
    });
    let Update::Trajectory { loaded, .. } = next(&updates) else {
        panic!("expected the trajectory")
    };
    let shape: Vec<(u64, u32, bool)> = loaded
        .tree
        .iter()
        .map(|node| (node.id.0, node.depth, node.last))
        .collect();
    assert_eq!(
        shape,
        vec![
            (0x10, 0, true),
            (0x20, 1, false),
            (0x40, 2, true),
            (0x30, 1, true)
        ],
        "root first, then depth first, each child marked when it is its parent's last"
    );
    let text: Vec<String> =
        rollscope::tui::fork_lines::tree_lines(&loaded.tree, TrajectoryId(0x40))
            .iter()
            .map(|line| line.iter().map(|piece| piece.text.as_str()).collect())
            .collect();
    assert!(text[1].contains("4 trajectories, 2 pass"), "{text:?}");
    assert!(
        text[2].starts_with("  00000000") && text[2].contains("root fail 0.00"),
        "{text:?}"
    );
    assert!(
        text[3].starts_with("  ├─ ") && text[3].contains("t1 #0 fail"),
        "{text:?}"
    );
    assert!(
        text[4].starts_with("  │  └─ ") && text[4].contains("t2 #0 pass 1.00  ◀ open"),
        "{text:?}"
    );
    assert!(
        text[5].starts_with("  └─ ") && text[5].contains("t1 #1 pass"),
        "{text:?}"
    );
    engine.send(Command::LoadTrajectory {
        tag: Tag(2),
        id: TrajectoryId(0x50),
    });
    let Update::Trajectory { loaded, .. } = next(&updates) else {
        panic!("expected the trajectory")
    };
    assert!(
        loaded.tree.is_empty(),
        "a trajectory outside any fork has no tree"
    );
}
