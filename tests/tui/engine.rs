//! The engine through its real channels against a store in a temporary folder.

use crate::common::*;
use rollscope::engine::{
    Command, Engine, EngineConfig, GroupKey, LabelDraft, Listing, Tag, Update, demo,
};
use rollscope::store::{Filter, Outcome, SortKey, Store};
use rollscope::trajectory::{ErrorKind, LabelStatus, MetricsRow};
use std::sync::Arc;
use std::sync::mpsc::Receiver;
use std::time::Duration;

/// The next update that is not a state change.
pub fn next(updates: &Receiver<Update>) -> Update {
    loop {
        match updates
            .recv_timeout(Duration::from_secs(20))
            .expect("an update")
        {
            Update::State(_) => continue,
            update => return update,
        }
    }
}

#[test]
fn a_saved_label_is_in_the_store_after_reopening() {
    let (dir, store) = demo_store(64);
    let id = trajectory(9).id;
    let (engine, updates) = Engine::spawn(
        store,
        EngineConfig {
            annotator: Some("tester".into()),
            ..EngineConfig::default()
        },
    )
    .unwrap();
    let draft = LabelDraft {
        step: 1,
        kind: ErrorKind::Understanding,
        status: LabelStatus::Confirmed,
        note: Some("misread".into()),
    };
    assert!(engine.send(Command::SaveLabel { id, draft }));
    let Update::LabelsSaved {
        id: saved,
        labels,
        summary,
    } = next(&updates)
    else {
        panic!("expected LabelsSaved")
    };
    assert_eq!(saved, id);
    assert!(summary.confirmed & (1 << ErrorKind::Understanding.index()) != 0);
    let label = labels
        .iter()
        .find(|label| label.kind == ErrorKind::Understanding)
        .unwrap();
    assert_eq!(
        (label.author.as_deref(), label.note.as_deref()),
        (Some("tester"), Some("misread"))
    );
    engine.shutdown();
    drop(updates);
    let reopened = Store::open(&dir.path().join("store")).expect("the engine released the store");
    let stored = reopened.get(id).unwrap().unwrap();
    assert!(
        stored
            .labels
            .iter()
            .any(|label| label.kind == ErrorKind::Understanding
                && label.step == 1
                && label.status == LabelStatus::Confirmed)
    );
}

#[test]
fn undo_and_removal_go_through_the_store() {
    let (_dir, store) = demo_store(64);
    let id = trajectory(3).id;
    let before = store.get(id).unwrap().unwrap().labels;
    let (engine, updates) = Engine::spawn(Arc::clone(&store), EngineConfig::default()).unwrap();
    let draft = LabelDraft {
        step: 0,
        kind: ErrorKind::Format,
        status: LabelStatus::Confirmed,
        note: None,
    };
    engine.send(Command::SaveLabel { id, draft });
    engine.send(Command::RemoveLabels {
        id,
        step: 0,
        kind: Some(ErrorKind::Format),
    });
    engine.send(Command::SetLabels {
        id,
        labels: before.clone(),
    });
    let mut counts = Vec::new();
    for _ in 0..3 {
        let Update::LabelsSaved { labels, .. } = next(&updates) else {
            panic!("expected LabelsSaved")
        };
        counts.push(labels.len());
    }
    assert_eq!(counts, vec![before.len() + 1, before.len(), before.len()]);
    engine.shutdown();
    assert_eq!(store.get(id).unwrap().unwrap().labels, before);
}

#[test]
fn listings_arrive_first_fast_then_counted_with_their_queue() {
    let (_dir, store) = demo_store(512);
    let (engine, updates) = Engine::spawn(store, EngineConfig::default()).unwrap();
    let listing = Listing {
        filter: Filter {
            outcome: Some(Outcome::Fail),
            ..Filter::default()
        },
        ..Listing::default()
    };
    engine.send(Command::List {
        tag: Tag(1),
        listing,
        window: 0..10,
    });
    let Update::Window(first) = next(&updates) else {
        panic!("expected a Window")
    };
    assert_eq!(
        (first.tag, first.matching, first.rows.len()),
        (Tag(1), None, 10)
    );
    let Update::Window(counted) = next(&updates) else {
        panic!("expected a Window")
    };
    let failures = summaries(512)
        .iter()
        .filter(|summary| summary.passed == Some(false))
        .count();
    assert_eq!(counted.matching, Some(failures));
    assert_eq!(counted.stored, Some(512));
    assert_eq!(counted.rows, first.rows);
    let Update::Queue { entries, .. } = next(&updates) else {
        panic!("expected the Queue")
    };
    let unlabelled = summaries(512)
        .iter()
        .filter(|summary| summary.is_unlabelled_failure())
        .count();
    assert_eq!(entries.len(), unlabelled);
    engine.send(Command::Page {
        tag: Tag(1),
        window: failures - 5..failures + 50,
    });
    let Update::Window(page) = next(&updates) else {
        panic!("expected a Window")
    };
    assert_eq!(
        (page.start, page.rows.len()),
        (failures - 5, 5),
        "the window is clipped to the listing"
    );
    engine.send(Command::Page {
        tag: Tag(7),
        window: 0..5,
    });
    assert!(
        matches!(
            next(&updates),
            Update::Failed {
                tag: Some(Tag(7)),
                ..
            }
        ),
        "an unknown listing is an error, not a panic"
    );
}

#[test]
fn sorted_listings_locate_groups_runs_metrics_and_overview() {
    let (_dir, store) = demo_store(512);
    let (engine, updates) = Engine::spawn(store, EngineConfig::default()).unwrap();
    let listing = Listing {
        sort: SortKey::Reward,
        descending: true,
        ..Listing::default()
    };
    engine.send(Command::List {
        tag: Tag(2),
        listing,
        window: 0..5,
    });
    let Update::Window(window) = next(&updates) else {
        panic!("expected a Window")
    };
    assert_eq!(
        window.matching,
        Some(512),
        "a sorted listing arrives counted"
    );
    assert!(window.rows.iter().all(|row| row.reward == Some(1.0)));
    let _queue = next(&updates);
    let target = trajectory(77).id;
    engine.send(Command::Locate {
        tag: Tag(3),
        listing: Tag(2),
        prefix: target.short(10),
    });
    let Update::Located { id, index, .. } = next(&updates) else {
        panic!("expected Located")
    };
    assert_eq!(id, target);
    assert!(index.is_some());
    engine.send(Command::LoadGroup {
        tag: Tag(4),
        key: GroupKey::Grpo {
            run: demo::DEMO_RUN.into(),
            step: 2,
            group: 2,
        },
    });
    let Update::Group { group, .. } = next(&updates) else {
        panic!("expected Group")
    };
    let samples: Vec<u32> = group
        .members
        .iter()
        .map(|member| member.sample.unwrap())
        .collect();
    assert_eq!(samples, (0..8).collect::<Vec<_>>());
    assert!(group.task.as_ref().unwrap().reference_solution.is_some());
    engine.send(Command::LoadTrajectory {
        tag: Tag(5),
        id: trajectory(0).id,
    });
    let Update::Trajectory { loaded, .. } = next(&updates) else {
        panic!("expected Trajectory")
    };
    assert!(
        loaded.trajectory.token_trace.is_some(),
        "loads come with the token trace"
    );
    engine.send(Command::LoadRuns);
    let Update::Runs(runs) = next(&updates) else {
        panic!("expected Runs")
    };
    assert_eq!(runs[0].id, demo::DEMO_RUN);
    engine.send(Command::LoadMetrics {
        run: demo::DEMO_RUN.into(),
    });
    let Update::Metrics { rows, .. } = next(&updates) else {
        panic!("expected Metrics")
    };
    assert_eq!(rows.len() as u64, runs[0].total_steps);
    let row = MetricsRow {
        run: demo::DEMO_RUN.into(),
        step: 999,
        time: 0,
        values: [("reward".to_string(), 0.9)].into(),
    };
    engine.send(Command::RecordMetrics(row.clone()));
    assert_eq!(
        next(&updates),
        Update::MetricsAppended {
            run: demo::DEMO_RUN.into(),
            rows: vec![row]
        }
    );
    engine.send(Command::LoadOverview {
        filter: Filter::default(),
    });
    let Update::Overview(overview) = next(&updates) else {
        panic!("expected Overview")
    };
    assert_eq!(overview.analysis.trajectories, 512);
    assert!(overview.analysis.from_records);
    assert_eq!(overview.selection.tasks, 64);
    assert_eq!(
        overview.selection.tasks_kept
            + overview.selection.tasks_no_pass
            + overview.selection.tasks_excluded_by_labels,
        64
    );
    engine.send(Command::Locate {
        tag: Tag(6),
        listing: Tag(2),
        prefix: "zz".into(),
    });
    assert!(matches!(
        next(&updates),
        Update::Failed {
            tag: Some(Tag(6)),
            ..
        }
    ));
}

#[test]
fn the_live_app_labels_through_the_engine_and_the_list_shows_it() {
    let mut live = Live::new(512, 120, 40);
    live.act(&[rollscope::tui::Action::Outcome]);
    live.settle(|app| {
        app.tabs.rollouts.list.matching.is_some() && app.tabs.rollouts.list.preview.is_some()
    });
    let first = live.app.tabs.rollouts.list.selected().unwrap().clone();
    assert_eq!(first.passed, Some(false));
    live.act(&[rollscope::tui::Action::Open, rollscope::tui::Action::Right]);
    live.settle(|app| app.tabs.rollouts.trajectory.open.is_some());
    live.act(&[rollscope::tui::Action::LabelReasoning]);
    live.settle(|app| app.tabs.rollouts.list.rows[0].confirmed & 0b10 != 0);
    let open = live.app.tabs.rollouts.trajectory.open.as_ref().unwrap();
    assert!(
        open.trajectory()
            .labels
            .iter()
            .any(|label| label.kind == ErrorKind::Reasoning && label.step == 1)
    );
    assert!(
        live.app
            .status
            .notice
            .as_ref()
            .unwrap()
            .text
            .contains("saved")
    );
}

#[test]
fn tau_bench_trials_of_one_task_open_as_a_group_of_attempts() {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/formats/tau_bench_airline_one.json");
    let records: Vec<serde_json::Value> =
        serde_json::from_slice(&std::fs::read(fixture).unwrap()).unwrap();
    let mut second = records[0].clone();
    second["trial"] = serde_json::json!(1);
    second["reward"] = serde_json::json!(1.0);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("trials.json");
    std::fs::write(&file, serde_json::to_vec(&[&records[0], &second]).unwrap()).unwrap();
    let store = Store::open(&dir.path().join("store")).unwrap();
    rollscope::ingest::import_into(&store, &file, Default::default(), &mut || {}).unwrap();
    let rows = store.query(&Default::default()).unwrap();
    assert_eq!(rows.len(), 2);
    let key = GroupKey::of(
        Some(&rows[0].run),
        rows[0].step,
        rows[0].group,
        Some(&rows[0].task_id),
    )
    .expect("a task's attempts make a group");
    assert_eq!(
        key,
        GroupKey::Task {
            task: rows[1].task_id.clone()
        }
    );
    let (engine, updates) = Engine::spawn(Arc::new(store), EngineConfig::default()).unwrap();
    engine.send(Command::LoadGroup { tag: Tag(3), key });
    let Update::Group { group, .. } = next(&updates) else {
        panic!("expected Group")
    };
    let rewards: Vec<f64> = group
        .members
        .iter()
        .map(|member| member.reward.as_ref().unwrap().total)
        .collect();
    assert_eq!(rewards.len(), 2);
    assert!(
        rewards.contains(&1.0) && rewards.contains(&0.0),
        "{rewards:?}"
    );
    assert_eq!(group.task.unwrap().id, rows[0].task_id);
}
