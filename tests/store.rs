//! The store: round trips, indexes, labels, deletes, compaction, the holder lock, schema
//! migrations, and durability under SIGKILL.

#[path = "store/checkpoint.rs"]
mod checkpoint;
#[path = "support/copy_dir.rs"]
mod copy_dir;
#[path = "store/crash.rs"]
mod crash;
#[path = "store/labels.rs"]
mod labels;
#[path = "store/listing.rs"]
mod listing;
#[path = "store/ranges.rs"]
mod ranges;
#[path = "store/schema.rs"]
mod schema;
#[path = "store/search.rs"]
mod search;

use rollscope::store::{Filter, Outcome, Query, SortKey, Store, StoreError};
use rollscope::synthetic::{self, SyntheticSpec};
use rollscope::trajectory::{ErrorKind, Trajectory};

fn spec(count: u64) -> SyntheticSpec {
    SyntheticSpec {
        count,
        trace_tokens: 200,
        per_step: 16,
        ..SyntheticSpec::default()
    }
}

fn filled(dir: &std::path::Path, count: u64) -> (Store, Vec<Trajectory>) {
    let spec = spec(count);
    let trajectories: Vec<_> = (0..count)
        .map(|i| synthetic::trajectory(i, &spec))
        .collect();
    let store = Store::open(dir).unwrap();
    store.put_trajectories(&trajectories).unwrap();
    (store, trajectories)
}

fn all(store: &Store, filter: Filter) -> Vec<rollscope::store::Summary> {
    store
        .query(&Query {
            filter,
            ..Query::default()
        })
        .unwrap()
}

#[test]
fn trajectories_round_trip_through_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let (store, trajectories) = filled(&path, 40);
    drop(store);
    let store = Store::open(&path).unwrap();
    assert_eq!(store.trajectory_count().unwrap(), 40);
    for trajectory in &trajectories {
        assert_eq!(store.get(trajectory.id).unwrap().as_ref(), Some(trajectory));
    }
    let without = store
        .get_without_trace(trajectories[0].id)
        .unwrap()
        .unwrap();
    assert!(without.token_trace.is_none());
    assert!(trajectories[0].token_trace.is_some());
}

#[test]
fn queries_agree_with_a_scan_of_the_records() {
    let dir = tempfile::tempdir().unwrap();
    let (store, trajectories) = filled(&dir.path().join("store"), 200);
    let check = |filter: Filter, expected: &dyn Fn(&Trajectory) -> bool| {
        let mut got: Vec<_> = all(&store, filter.clone())
            .into_iter()
            .map(|s| s.id)
            .collect();
        let mut want: Vec<_> = trajectories
            .iter()
            .filter(|t| expected(t))
            .map(|t| t.id)
            .collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "filter {}", filter.describe());
        assert!(
            !want.is_empty() || filter.text.is_some(),
            "empty expectation for {}",
            filter.describe()
        );
    };
    check(
        Filter {
            outcome: Some(Outcome::Fail),
            ..Filter::default()
        },
        &|t| t.passed() == Some(false),
    );
    for kind in ErrorKind::ALL {
        check(
            Filter {
                label: Some(kind),
                outcome: Some(Outcome::Fail),
                ..Filter::default()
            },
            &|t| t.passed() == Some(false) && t.labels.iter().any(|l| l.kind == kind),
        );
    }
    check(
        Filter {
            run: Some("grpo-0001".into()),
            step: Some(3),
            ..Filter::default()
        },
        &|t| t.policy_version == Some(3),
    );
    check(
        Filter {
            task: Some("arith-00004".into()),
            ..Filter::default()
        },
        &|t| t.task_id.as_deref() == Some("arith-00004"),
    );
    check(
        Filter {
            unlabelled_failures: true,
            ..Filter::default()
        },
        &|t| t.passed() == Some(false) && !t.has_confirmed_error(None),
    );
    check(
        Filter {
            reward_min: Some(0.5),
            ..Filter::default()
        },
        &|t| t.reward.as_ref().is_some_and(|r| r.total >= 0.5),
    );
    check(
        Filter {
            text: Some("ARITH-0000".into()),
            ..Filter::default()
        },
        &|t| {
            t.task_id
                .as_deref()
                .is_some_and(|id| id.starts_with("arith-0000"))
        },
    );
}

#[test]
fn sorting_and_windows() {
    let dir = tempfile::tempdir().unwrap();
    let (store, trajectories) = filled(&dir.path().join("store"), 60);
    let page = store
        .query(&Query {
            offset: 10,
            limit: Some(5),
            ..Query::default()
        })
        .unwrap();
    let ids: Vec<_> = page.iter().map(|s| s.id).collect();
    let expected: Vec<_> = trajectories[10..15].iter().map(|t| t.id).collect();
    assert_eq!(ids, expected, "stored order is insertion order");
    let by_turns = store
        .query(&Query {
            sort: SortKey::Turns,
            descending: true,
            ..Query::default()
        })
        .unwrap();
    assert!(by_turns.windows(2).all(|w| w[0].turns >= w[1].turns));
    assert_eq!(by_turns.len(), 60);
}

#[test]
fn rewriting_an_id_replaces_instead_of_duplicating() {
    let dir = tempfile::tempdir().unwrap();
    let (store, trajectories) = filled(&dir.path().join("store"), 10);
    let mut changed = trajectories[3].clone();
    changed.reward = Some(rollscope::trajectory::Reward::scalar(0.25));
    store
        .put_trajectories(&[changed.clone(), changed.clone()])
        .unwrap();
    assert_eq!(store.trajectory_count().unwrap(), 10);
    let hits = all(
        &store,
        Filter {
            reward_min: Some(0.2),
            reward_max: Some(0.3),
            ..Filter::default()
        },
    );
    assert_eq!(
        hits.iter().map(|s| s.id).collect::<Vec<_>>(),
        vec![changed.id]
    );
    assert_eq!(
        store.summary_of(changed.id).unwrap().unwrap().seq,
        all(&store, Filter::default())[3].seq
    );
}

#[test]
fn a_large_batch_keeps_the_last_version_of_each_id_and_a_bad_one_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let (store, stored) = filled(&path, 150);
    let spec = spec(400);
    let mut batch: Vec<Trajectory> = (100..300)
        .map(|i| synthetic::trajectory(i, &spec))
        .collect();
    for trajectory in &mut batch[..50] {
        trajectory.reward = Some(rollscope::trajectory::Reward::scalar(-1.0));
    }
    let mut repeated = batch[120].clone();
    repeated.reward = Some(rollscope::trajectory::Reward::scalar(-2.0));
    batch.push(repeated.clone());
    store.put_trajectories(&batch).unwrap();
    assert_eq!(store.trajectory_count().unwrap(), 300);
    assert_eq!(all(&store, Filter::default()).len(), 300);

    let mut bad: Vec<Trajectory> = (300..400)
        .map(|i| synthetic::trajectory(i, &spec))
        .collect();
    let traced = bad.iter().position(|t| t.token_trace.is_some()).unwrap();
    bad[traced].token_trace.as_mut().unwrap().loss_mask.pop();
    let error = store.put_trajectories(&bad).unwrap_err();
    assert!(error.to_string().contains(&bad[traced].id.to_string()));
    store.close().unwrap();

    let store = Store::open(&path).unwrap();
    assert_eq!(store.trajectory_count().unwrap(), 300);
    assert!(store.get(bad[0].id).unwrap().is_none());
    for expected in stored[..100]
        .iter()
        .chain(&batch[..120])
        .chain(&batch[121..])
    {
        let got = store.get(expected.id).unwrap().unwrap();
        assert_eq!(got.reward, expected.reward, "trajectory {}", expected.id);
        assert_eq!(got.messages, expected.messages);
        assert_eq!(got.token_trace, expected.token_trace);
    }
    let rewritten = all(
        &store,
        Filter {
            reward_max: Some(-0.5),
            ..Filter::default()
        },
    );
    assert_eq!(rewritten.len(), 51);
}

#[test]
fn delete_then_compact_reclaims_space_and_keeps_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let (store, trajectories) = filled(&path, 2_500);
    let failing: Vec<_> = all(
        &store,
        Filter {
            outcome: Some(Outcome::Fail),
            ..Filter::default()
        },
    )
    .into_iter()
    .map(|s| s.id)
    .collect();
    assert_eq!(store.delete_trajectories(&failing).unwrap(), failing.len());
    assert!(
        all(
            &store,
            Filter {
                outcome: Some(Outcome::Fail),
                ..Filter::default()
            }
        )
        .is_empty()
    );
    let live_share = 1.0 - failing.len() as f64 / trajectories.len() as f64;
    let (store, report) = store.compact().unwrap();
    let kept = report.log_after as f64 / report.log_before as f64;
    assert!(
        (kept - live_share).abs() < 0.1,
        "{report:?}: kept {kept:.2} of the log for {live_share:.2} live"
    );
    for trajectory in trajectories.iter().filter(|t| t.passed() == Some(true)) {
        assert_eq!(store.get(trajectory.id).unwrap().as_ref(), Some(trajectory));
    }
    assert_eq!(
        store.trajectory_count().unwrap(),
        trajectories.len() - failing.len()
    );
}

#[test]
fn a_second_holder_is_refused_at_once_with_the_holders_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let _first = Store::open(&path).unwrap();
    match Store::open(&path) {
        Err(StoreError::Locked { holder, .. }) => {
            assert!(
                holder.contains(&format!("process {}", std::process::id())),
                "{holder}"
            )
        }
        Err(other) => panic!("unexpected error {other}"),
        Ok(_) => panic!("a second open must fail"),
    }
}

#[test]
fn ids_resolve_from_unique_prefixes() {
    let dir = tempfile::tempdir().unwrap();
    let (store, trajectories) = filled(&dir.path().join("store"), 20);
    let id = trajectories[5].id;
    assert_eq!(store.resolve(&id.to_string()[..8]).unwrap(), id);
    assert_eq!(store.resolve(&id.to_string()).unwrap(), id);
    assert!(matches!(
        store.resolve("0"),
        Ok(_) | Err(StoreError::Ambiguous { .. }) | Err(StoreError::NotFound(_))
    ));
    assert!(matches!(store.resolve("zz"), Err(StoreError::Invalid(_))));
}

#[test]
fn runs_take_the_name_asked_made_safe_and_unique_or_a_number_of_their_kind() {
    use rollscope::trajectory::{RunInfo, RunKind};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("store")).unwrap();
    let create = |name: &str, kind| {
        let run = RunInfo::new(name.to_string(), kind, 0, "m".into(), 0);
        store.create_run(&run).unwrap()
    };
    assert_eq!(create("", RunKind::Grpo), "grpo-0001");
    assert_eq!(
        create("verl_grpo_gsm8k", RunKind::Import),
        "verl_grpo_gsm8k"
    );
    assert_eq!(
        create("verl_grpo_gsm8k", RunKind::Import),
        "verl_grpo_gsm8k-2"
    );
    assert_eq!(
        create("verl_grpo_gsm8k", RunKind::Import),
        "verl_grpo_gsm8k-3"
    );
    assert_eq!(create("../../etc/passwd", RunKind::Import), "etc-passwd");
    assert_eq!(create("qwen 2.5 run:7", RunKind::Import), "qwen-2.5-run-7");
    assert_eq!(create("...", RunKind::Import), "import-0007");
    assert_eq!(create(&"x".repeat(300), RunKind::Import), "x".repeat(48));
    assert_eq!(create("", RunKind::Sft), "sft-0009");
    let ids: Vec<String> = store.runs().unwrap().into_iter().map(|r| r.id).collect();
    assert_eq!(ids.len(), 9);
}
