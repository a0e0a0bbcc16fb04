//! `rollscope runs`: what trains where, read from the records real processes wrote, and
//! `runs pause|resume|stop` steering a run from another process through the store.

use super::common::*;
use rollscope::run::this_process;
use rollscope::trajectory::{RunInfo, RunKind, RunProcess, RunRequest, RunStatus};

fn record(id: &str, status: RunStatus, process: RunProcess) -> RunInfo {
    RunInfo {
        id: id.into(),
        status,
        step: 3,
        process: Some(process),
        ..RunInfo::new(String::new(), RunKind::Grpo, 0, "models/base".into(), 50)
    }
}

#[test]
fn runs_lists_who_trains_what_and_steers_a_run_another_process_trains() {
    let root = tempfile::tempdir().unwrap();
    let paths = session(root.path());
    let store = connect(&paths);
    let me = RunProcess {
        log: Some("jobs/1.log".into()),
        ..this_process()
    };
    let gone = RunProcess {
        started_ticks: me.started_ticks + 1,
        log: None,
        ..me.clone()
    };
    store
        .put_run(&record("grpo-0001", RunStatus::Running, me.clone()))
        .unwrap();
    store
        .put_run(&record("grpo-0002", RunStatus::Running, gone))
        .unwrap();
    store
        .put_run(&record("grpo-0003", RunStatus::Done, me.clone()))
        .unwrap();

    let listed = stdout(cli(root.path(), "alice", &["runs"]).output().unwrap());
    let line = |id: &str| {
        listed
            .lines()
            .find(|line| line.starts_with(id))
            .unwrap_or_else(|| panic!("{id} listed:\n{listed}"))
            .to_string()
    };
    assert!(line("grpo-0001").contains("running"), "{listed}");
    assert!(line("grpo-0001").contains(&format!("process {} on {}", me.pid, me.host)));
    assert!(line("grpo-0001").contains("log jobs/1.log") && line("grpo-0001").contains("3/50"));
    assert!(line("grpo-0002").contains("interrupted"), "{listed}");
    assert!(line("grpo-0002").contains("`rollscope train grpo --resume grpo-0002` continues it"));
    assert!(line("grpo-0003").contains("done"));

    let json = stdout(
        cli(root.path(), "alice", &["runs", "--json"])
            .output()
            .unwrap(),
    );
    let statuses: Vec<String> = json
        .lines()
        .map(|line| {
            serde_json::from_str::<RunInfo>(line)
                .unwrap()
                .status
                .as_str()
                .to_string()
        })
        .collect();
    assert_eq!(statuses, ["running", "interrupted", "done"]);

    let said = stdout(
        cli(root.path(), "alice", &["runs", "pause", "grpo-0001"])
            .output()
            .unwrap(),
    );
    assert!(
        said.contains("grpo-0001 pauses after its current step"),
        "{said}"
    );
    assert_eq!(
        store.run_request("grpo-0001").unwrap(),
        Some(RunRequest::Pause)
    );
    stdout(
        cli(root.path(), "alice", &["runs", "stop", "grpo-0001"])
            .output()
            .unwrap(),
    );
    assert_eq!(
        store.run_request("grpo-0001").unwrap(),
        Some(RunRequest::Stop)
    );

    let refused = cli(root.path(), "alice", &["runs", "stop", "grpo-0002"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let error = String::from_utf8_lossy(&refused.stderr);
    assert!(
        error.contains("grpo-0002 is interrupted") && error.contains("--resume grpo-0002"),
        "{error}"
    );
    assert_eq!(
        store.run_request("grpo-0002").unwrap(),
        None,
        "nothing stored"
    );
    let unknown = cli(root.path(), "alice", &["runs", "resume", "grpo-0009"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no run `grpo-0009`"));
}

#[test]
fn watch_follows_a_session_run_through_the_store_without_a_metrics_file() {
    let root = tempfile::tempdir().unwrap();
    let paths = session(root.path());
    let store = connect(&paths);
    store
        .put_run(&record("grpo-0001", RunStatus::Done, this_process()))
        .unwrap();
    for step in 0..=3 {
        let values = [("reward".to_string(), step as f64 / 10.0)].into();
        store
            .put_metrics(&rollscope::trajectory::MetricsRow {
                run: "grpo-0001".into(),
                step,
                time: 0,
                values,
            })
            .unwrap();
    }
    assert!(!paths.run_dir("grpo-0001").join("metrics.jsonl").exists());
    let output = cli(root.path(), "alice", &["watch", "grpo-0001"])
        .output()
        .unwrap();
    let printed = stdout(output.clone());
    let steps: Vec<&str> = printed
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|first| first.parse::<u64>().is_ok())
        .collect();
    assert_eq!(steps, ["0", "1", "2", "3"], "{printed}");
    assert!(
        printed
            .lines()
            .any(|line| line.split_whitespace().eq(["3", "0.3"])),
        "{printed}"
    );
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("grpo-0001 done at step 3/50"),
        "it ends with the run: {said}"
    );
}
