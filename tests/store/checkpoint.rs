//! Closing a store after many writes leaves sled a checkpoint (its page table as of now),
//! so the next open reads it instead of replaying every write; a few writes close at once.

use rollscope::store::Store;
use rollscope::synthetic::{self, SyntheticSpec};

fn sled_checkpoints(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|entry| {
            let name = entry.as_ref().unwrap().file_name();
            name.to_string_lossy().starts_with("snap.")
        })
        .count()
}

fn close_after_writing(count: u64) -> (tempfile::TempDir, usize) {
    let dir = tempfile::tempdir().unwrap();
    let store_dir = dir.path().join("store");
    let spec = SyntheticSpec {
        count,
        trace_tokens: 0,
        ..SyntheticSpec::default()
    };
    let store = Store::open(&store_dir).unwrap();
    let trajectories: Vec<_> = (0..count)
        .map(|index| synthetic::trajectory(index, &spec))
        .collect();
    for batch in trajectories.chunks(1000) {
        store.put_trajectories(batch).unwrap();
    }
    store.close().unwrap();
    let checkpoints = sled_checkpoints(&store_dir);
    let reopened = Store::open(&store_dir).unwrap();
    assert_eq!(reopened.trajectory_count().unwrap(), count as usize);
    assert_eq!(
        reopened.get(trajectories[0].id).unwrap().as_ref(),
        Some(&trajectories[0])
    );
    (dir, checkpoints)
}

#[test]
fn closing_after_ten_thousand_writes_leaves_a_checkpoint() {
    let (_dir, checkpoints) = close_after_writing(10_000);
    assert_eq!(checkpoints, 1, "sled's checkpoint after the writes");
}

#[test]
fn closing_after_a_few_writes_takes_no_checkpoint() {
    let (_dir, checkpoints) = close_after_writing(50);
    assert_eq!(
        checkpoints, 0,
        "no checkpoint: the replay at the next open is short"
    );
}
