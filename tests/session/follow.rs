//! Following another stack's run as it is written: TRL's files copied into a followed folder
//! one by one, JSONL appended in chunks that split lines, the store checked after each poll;
//! and `rollscope import --follow` as a real process, stopped and resumed.

use super::common::*;
use rollscope::ingest::Follower;
use rollscope::store::{Filter, Store};
use rollscope::trajectory::RunStatus;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/formats")
        .join(name)
}

/// The ids of a run's trajectories, and how many there are (a duplicate would show).
fn stored(store: &Store, run: &str) -> (usize, BTreeSet<rollscope::trajectory::TrajectoryId>) {
    let filter = Filter {
        run: Some(run.to_string()),
        ..Filter::default()
    };
    let ids = store.ids(&filter).unwrap();
    (ids.len(), ids.into_iter().collect())
}

#[test]
fn a_followed_trl_folder_gains_each_step_once_and_its_metrics() {
    let root = tempfile::tempdir().unwrap();
    let store = connect(&session(root.path()));
    let run_dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(run_dir.path().join("completions")).unwrap();
    let mut follower = Follower::start(&store, &[run_dir.path().to_path_buf()], None).unwrap();
    let run = follower.run().to_string();
    assert!(
        !follower.poll(&store).unwrap().stored(),
        "an empty folder stores nothing"
    );
    let mut steps: Vec<PathBuf> = std::fs::read_dir(fixture("trl/completions"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    steps.sort();
    for (index, step) in steps.iter().enumerate() {
        let target = run_dir
            .path()
            .join("completions")
            .join(step.file_name().unwrap());
        std::fs::copy(step, &target).unwrap();
        let poll = follower.poll(&store).unwrap();
        assert_eq!(poll.trajectories, 4, "step {} adds its group", index + 1);
        assert!(poll.problems.is_empty(), "{:?}", poll.problems);
        let (count, ids) = stored(&store, &run);
        assert_eq!(count, 4 * (index + 1));
        assert_eq!(ids.len(), count, "no duplicates");
        assert_eq!(
            follower.poll(&store).unwrap().trajectories,
            0,
            "a second read adds nothing"
        );
    }
    let checkpoint = run_dir.path().join("checkpoint-4");
    std::fs::create_dir(&checkpoint).unwrap();
    std::fs::copy(
        fixture("trl/checkpoint-4/trainer_state.json"),
        checkpoint.join("trainer_state.json"),
    )
    .unwrap();
    let poll = follower.poll(&store).unwrap();
    let state: serde_json::Value = serde_json::from_slice(
        &std::fs::read(fixture("trl/checkpoint-4/trainer_state.json")).unwrap(),
    )
    .unwrap();
    let logged: BTreeSet<u64> = state["log_history"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|row| row["step"].as_u64())
        .collect();
    assert_eq!(poll.metrics_rows, logged.len());
    let rows: BTreeSet<u64> = store
        .metrics(&run)
        .unwrap()
        .iter()
        .map(|row| row.step)
        .collect();
    assert_eq!(rows, logged, "every logged step has its row");
    let record = store.get_run(&run).unwrap().unwrap();
    assert_eq!(record.step, state["global_step"].as_u64().unwrap());
    follower.finish(&store, RunStatus::Stopped).unwrap();

    let mut again = Follower::start(&store, &[run_dir.path().to_path_buf()], None).unwrap();
    assert_eq!(again.run(), run, "the same paths resume the same run");
    let poll = again.poll(&store).unwrap();
    assert_eq!(
        (poll.trajectories, poll.metrics_rows),
        (0, 0),
        "nothing read twice"
    );
    assert_eq!(stored(&store, &run).0, 16);
}

#[test]
fn appended_chunks_that_split_lines_import_every_record_once() {
    let root = tempfile::tempdir().unwrap();
    let store = connect(&session(root.path()));
    let dir = tempfile::tempdir().unwrap();
    let followed = dir.path().join("rollouts.jsonl");
    let text = std::fs::read_to_string(fixture("openai_chat_tools.jsonl")).unwrap();
    let mut whole = Vec::new();
    for copy in 0..3 {
        for line in text.lines() {
            let mut record: serde_json::Value = serde_json::from_str(line).unwrap();
            record["copy"] = serde_json::json!(copy);
            whole.extend_from_slice(format!("{record}\n").as_bytes());
        }
    }
    let records = whole.iter().filter(|&&byte| byte == b'\n').count();
    std::fs::write(&followed, b"").unwrap();
    let mut follower = Follower::start(&store, std::slice::from_ref(&followed), None).unwrap();
    let run = follower.run().to_string();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&followed)
        .unwrap();
    let chunk = whole.len() / 7 + 1;
    let mut written = 0;
    for piece in whole.chunks(chunk) {
        file.write_all(piece).unwrap();
        file.flush().unwrap();
        written += piece.len();
        let poll = follower.poll(&store).unwrap();
        assert!(
            poll.problems.is_empty(),
            "a half-written line is retried, not reported: {:?}",
            poll.problems
        );
        let complete = whole[..written]
            .iter()
            .filter(|&&byte| byte == b'\n')
            .count();
        let (count, ids) = stored(&store, &run);
        assert_eq!(
            count, complete,
            "every complete line, nothing of the cut one"
        );
        assert_eq!(ids.len(), count);
    }
    assert_eq!(stored(&store, &run).0, records);
    assert_eq!(
        std::fs::read(&followed).unwrap(),
        whole,
        "the followed file is only read"
    );
}

/// How many trajectories a one-shot import of `path` yields.
fn trajectories_in(path: &Path) -> usize {
    let mut count = 0;
    let mut tally = |item: rollscope::formats::Item| {
        count += usize::from(matches!(item, rollscope::formats::Item::Trajectory(_)));
        Ok(())
    };
    rollscope::formats::import_file(path, Default::default(), &mut tally).unwrap();
    count
}

#[test]
fn a_followed_inspect_log_folder_reads_each_log_once_it_is_whole() {
    let root = tempfile::tempdir().unwrap();
    let store = connect(&session(root.path()));
    let logs = tempfile::tempdir().unwrap();
    let mut follower = Follower::start(&store, &[logs.path().to_path_buf()], None).unwrap();
    let run = follower.run().to_string();
    let eval = fixture("log_message_deduplication.eval");
    let json = fixture("log_formats.json");
    let (in_eval, in_json) = (trajectories_in(&eval), trajectories_in(&json));
    assert!(in_eval > 0 && in_json > 0);

    let bytes = std::fs::read(&eval).unwrap();
    let target = logs.path().join(eval.file_name().unwrap());
    std::fs::write(&target, &bytes[..bytes.len() / 2]).unwrap();
    let poll = follower.poll(&store).unwrap();
    assert_eq!(poll.trajectories, 0, "half a zip archive is not read");
    assert!(poll.problems.is_empty() && poll.unreadable.is_empty());
    assert_eq!(poll.waiting, 1, "it is read again at the next poll");
    std::fs::write(&target, &bytes).unwrap();
    assert_eq!(follower.poll(&store).unwrap().trajectories, in_eval);

    std::fs::copy(&json, logs.path().join(json.file_name().unwrap())).unwrap();
    assert_eq!(follower.poll(&store).unwrap().trajectories, in_json);
    assert_eq!(follower.poll(&store).unwrap().trajectories, 0);
    let (count, ids) = stored(&store, &run);
    assert_eq!((count, ids.len()), (in_eval + in_json, in_eval + in_json));
    assert_eq!(
        std::fs::read(&target).unwrap(),
        bytes,
        "the logs are only read"
    );
}

#[test]
fn import_follow_runs_until_ctrl_c_and_the_same_command_resumes() {
    let root = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("completions")).unwrap();
    let folder = dir.path().to_str().unwrap().to_string();
    let start = || {
        cli(
            root.path(),
            "follower",
            &["import", "--follow", &folder, "--every", "0.2"],
        )
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
    };
    let store = connect(&session(root.path()));
    let count = |store: &Store| store.count(&Filter::default()).unwrap();
    let wait_for = |store: &Store, want: usize| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while count(store) < want {
            assert!(
                std::time::Instant::now() < deadline,
                "{} of {want} records",
                count(store)
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    };
    let copy = |step: u32| {
        let name = format!("completions_{step:05}.parquet");
        std::fs::copy(
            fixture("trl/completions").join(&name),
            dir.path().join("completions").join(&name),
        )
        .unwrap();
    };
    let child = start();
    copy(1);
    wait_for(&store, 4);
    let run = store.runs().unwrap().into_iter().next().unwrap();
    assert_eq!(run.status, RunStatus::Running);
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        store.get_run(&run.id).unwrap().unwrap().status,
        RunStatus::Stopped
    );
    copy(2);
    copy(3);
    let child = start();
    wait_for(&store, 12);
    std::thread::sleep(std::time::Duration::from_millis(600));
    assert_eq!(count(&store), 12, "resumed where it stopped, nothing twice");
    assert_eq!(store.runs().unwrap().len(), 1, "the same run");
    stdout(
        cli(root.path(), "me", &["runs", "stop", &run.id])
            .output()
            .unwrap(),
    );
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "a stop from another terminal ends the follow"
    );
}
