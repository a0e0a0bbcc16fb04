//! SIGKILL of the session server while a client labels and writes metrics rows: every write
//! the server acknowledged is there once after it restarts; clients reconnect by themselves.
//! Three kills here; `cargo test --release --test session -- --ignored` runs the 25-kill soak.

use super::common::{connect, demo, server_pid, session};
use rollscope::store::Filter;
use rollscope::trajectory::{ErrorKind, Label, LabelStatus, MetricsRow, TrajectoryId};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What the writers had acknowledged when they stopped.
#[derive(Default)]
struct Acknowledged {
    labels: Vec<(TrajectoryId, ErrorKind)>,
    rows: Vec<u64>,
    failed: usize,
}

fn kill_the_server_repeatedly(kills: usize) {
    let root = tempfile::tempdir().unwrap();
    let paths = session(root.path());
    demo(root.path(), 200);
    let store = Arc::new(connect(&paths));
    let ids = store.ids(&Filter::default()).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let labeller = std::thread::spawn({
        let (store, stop, ids) = (Arc::clone(&store), Arc::clone(&stop), ids.clone());
        move || {
            let mut done = Acknowledged::default();
            for (n, id) in ids.iter().cycle().enumerate() {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let kind = ErrorKind::ALL[(n / ids.len()) % ErrorKind::ALL.len()];
                let label = Label {
                    step: 0,
                    kind,
                    status: LabelStatus::Confirmed,
                    note: None,
                    author: Some("soak".into()),
                    time: n as i64,
                };
                match store.add_label(*id, label) {
                    Ok(_) => done.labels.push((*id, kind)),
                    Err(_) => done.failed += 1,
                }
            }
            done
        }
    });
    let writer = std::thread::spawn({
        let (store, stop) = (Arc::clone(&store), Arc::clone(&stop));
        move || {
            let mut done = Acknowledged::default();
            for step in 0.. {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let row = MetricsRow {
                    run: "soak-run".into(),
                    step,
                    time: 0,
                    values: [("reward".to_string(), step as f64)].into(),
                };
                match store.put_metrics(&row) {
                    Ok(()) => done.rows.push(step),
                    Err(_) => done.failed += 1,
                }
            }
            done
        }
    });
    let mut killed = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(240);
    while killed.len() < kills && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(60 + 37 * (killed.len() as u64 % 5)));
        let Some(pid) = server_pid(&paths) else {
            continue;
        };
        if killed.last() == Some(&pid) {
            continue;
        }
        // SAFETY: sending SIGKILL to a process id has no memory-safety preconditions.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0, "kill {pid}");
        killed.push(pid);
    }
    std::thread::sleep(Duration::from_millis(200));
    stop.store(true, Ordering::SeqCst);
    let labels = labeller.join().unwrap();
    let rows = writer.join().unwrap();
    assert_eq!(killed.len(), kills, "servers killed: {killed:?}");

    let fresh = connect(&paths);
    let mut stored: BTreeMap<TrajectoryId, Vec<ErrorKind>> = BTreeMap::new();
    for id in &ids {
        let trajectory = fresh.get_without_trace(*id).unwrap().unwrap();
        let mine = trajectory
            .labels
            .iter()
            .filter(|label| label.author.as_deref() == Some("soak"))
            .map(|label| label.kind);
        stored.entry(*id).or_default().extend(mine);
    }
    let lost = labels
        .labels
        .iter()
        .filter(|(id, kind)| !stored[id].contains(kind))
        .count();
    let duplicated: usize = stored
        .values()
        .map(|kinds| kinds.len() - kinds.iter().collect::<BTreeSet<_>>().len())
        .sum();
    let stored_rows: Vec<u64> = fresh
        .metrics("soak-run")
        .unwrap()
        .iter()
        .map(|row| row.step)
        .collect();
    let rows_lost = rows
        .rows
        .iter()
        .filter(|step| !stored_rows.contains(step))
        .count();
    let unique_rows: BTreeSet<_> = stored_rows.iter().collect();
    eprintln!(
        "{kills} server kills: {} labels and {} metrics rows acknowledged, {} requests failed; \
         lost {lost} labels and {rows_lost} rows; {duplicated} duplicate labels, {} duplicate rows",
        labels.labels.len(),
        rows.rows.len(),
        labels.failed + rows.failed,
        stored_rows.len() - unique_rows.len()
    );
    assert!(!labels.labels.is_empty() && !rows.rows.is_empty());
    assert_eq!((lost, rows_lost), (0, 0), "acknowledged writes lost");
    assert_eq!(duplicated, 0, "labels stored twice");
    assert_eq!(stored_rows.len(), unique_rows.len(), "rows stored twice");
}

#[test]
fn killing_the_server_loses_no_acknowledged_label_or_row() {
    kill_the_server_repeatedly(3);
}

#[test]
#[ignore = "a soak: 25 server kills, about a minute"]
fn soak_twenty_five_server_kills() {
    kill_the_server_repeatedly(25);
}
