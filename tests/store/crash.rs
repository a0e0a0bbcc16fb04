//! SIGKILL at random moments: every write reported saved must survive, and the store must open.

use rand::{Rng, SeedableRng};
use rollscope::store::Store;
use rollscope::synthetic::{self, SyntheticSpec};
use rollscope::trajectory::{ErrorKind, Label, LabelStatus};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

const DIR_VAR: &str = "ROLLSCOPE_CRASH_DIR";
const OFFSET_VAR: &str = "ROLLSCOPE_CRASH_OFFSET";
const BATCH: u64 = 8;
/// Every third batch: large enough that the store writes its blobs on a second thread.
const LARGE_BATCH: u64 = 72;

fn spec() -> SyntheticSpec {
    SyntheticSpec {
        count: u64::MAX,
        trace_tokens: 300,
        ..SyntheticSpec::default()
    }
}

/// The child: writes batches and labels forever, printing each one after its flush.
#[test]
#[ignore = "run by kill_at_random_moments_loses_nothing_reported_saved as a child process"]
fn child_writer() {
    let Some(dir) = std::env::var_os(DIR_VAR) else {
        return;
    };
    let offset: u64 = std::env::var(OFFSET_VAR).unwrap().parse().unwrap();
    let store = Store::open(std::path::Path::new(&dir)).unwrap();
    let spec = spec();
    let mut start = offset;
    for batch in 0..10_000u64 {
        let size = if batch % 3 == 2 { LARGE_BATCH } else { BATCH };
        let trajectories: Vec<_> = (start..start + size)
            .map(|index| synthetic::trajectory(index, &spec))
            .collect();
        store.put_trajectories(&trajectories).unwrap();
        println!("saved-trajectories {start} {}", start + size);
        if batch % 2 == 1 {
            let target = &trajectories[0];
            let kind = ErrorKind::ALL[(batch % 4) as usize];
            store
                .add_label(
                    target.id,
                    Label {
                        step: 0,
                        kind,
                        status: LabelStatus::Confirmed,
                        note: Some(format!("batch {batch}")),
                        author: None,
                        time: batch as i64,
                    },
                )
                .unwrap();
            println!("saved-label {start} {}", kind.as_str());
        }
        start += size;
    }
}

#[test]
fn kill_at_random_moments_loses_nothing_reported_saved() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    let spec = spec();
    let mut saved_ranges = Vec::new();
    let mut saved_labels = Vec::new();
    for round in 0..6u64 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "crash::child_writer",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(DIR_VAR, &path)
            .env(OFFSET_VAR, (round * 1_000_000).to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
                .filter(|line| line.starts_with("saved-"))
                .collect::<Vec<_>>()
        });
        std::thread::sleep(Duration::from_millis(rng.random_range(150..900)));
        child.kill().unwrap();
        child.wait().unwrap();
        let lines = reader.join().unwrap();
        assert!(
            !lines.is_empty(),
            "round {round}: the child saved nothing before the kill"
        );
        for line in lines {
            let parts: Vec<_> = line.split(' ').collect();
            match parts[0] {
                "saved-trajectories" => saved_ranges.push((
                    parts[1].parse::<u64>().unwrap(),
                    parts[2].parse::<u64>().unwrap(),
                )),
                "saved-label" => saved_labels.push((
                    parts[1].parse::<u64>().unwrap(),
                    parts[2].parse::<ErrorKind>().unwrap(),
                )),
                _ => unreachable!(),
            }
        }
        let store = Store::open(&path).expect("the store opens cleanly after SIGKILL");
        for &(start, end) in &saved_ranges {
            for index in start..end {
                let expected = synthetic::trajectory(index, &spec);
                let stored = store
                    .get(expected.id)
                    .unwrap()
                    .unwrap_or_else(|| panic!("trajectory {index} lost"));
                assert_eq!(stored.messages, expected.messages);
                assert_eq!(stored.token_trace, expected.token_trace);
                assert_eq!(stored.reward, expected.reward);
            }
        }
        for &(index, kind) in &saved_labels {
            let id = synthetic::trajectory(index, &spec).id;
            let stored = store.get(id).unwrap().unwrap();
            assert!(
                stored
                    .labels
                    .iter()
                    .any(|l| l.kind == kind && l.status == LabelStatus::Confirmed),
                "label {kind} on trajectory {index} lost"
            );
        }
        assert_eq!(
            store.trajectory_count().unwrap(),
            store.query(&Default::default()).unwrap().len(),
            "summaries agree with the count"
        );
    }
    assert!(saved_ranges.len() >= 6);
}
