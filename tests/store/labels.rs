//! Labels: kept per author, reflected in summaries and indexes, rewritten compare-and-swap.

use super::{all, filled};
use rollscope::store::{Filter, Store, StoreError};
use rollscope::trajectory::{ErrorKind, Label, LabelStatus};

#[test]
fn labels_update_records_summaries_and_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let (store, trajectories) = filled(&dir.path().join("store"), 30);
    let target = trajectories.iter().find(|t| t.labels.is_empty()).unwrap();
    let label = |kind, status| Label {
        step: 1,
        kind,
        status,
        note: Some("17+52 should be 17+25".into()),
        author: Some("tester".into()),
        time: 1,
    };
    store
        .add_label(
            target.id,
            label(ErrorKind::Calculation, LabelStatus::Suggested),
        )
        .unwrap();
    let summary = store.summary_of(target.id).unwrap().unwrap();
    assert_eq!(
        summary.suggested_kinds().collect::<Vec<_>>(),
        vec![ErrorKind::Calculation]
    );
    store
        .add_label(
            target.id,
            label(ErrorKind::Calculation, LabelStatus::Confirmed),
        )
        .unwrap();
    let saved = store.get(target.id).unwrap().unwrap();
    assert_eq!(saved.labels.len(), 1, "accepting replaces the suggestion");
    assert_eq!(saved.labels[0].status, LabelStatus::Confirmed);
    assert_eq!(
        saved.token_trace, target.token_trace,
        "labelling keeps the trace"
    );
    let confirmed = all(
        &store,
        Filter {
            label: Some(ErrorKind::Calculation),
            label_status: Some(LabelStatus::Confirmed),
            ..Filter::default()
        },
    );
    assert!(confirmed.iter().any(|s| s.id == target.id));
    store
        .remove_labels(target.id, 1, None, Some("tester"))
        .unwrap();
    let confirmed = all(
        &store,
        Filter {
            label: Some(ErrorKind::Calculation),
            label_status: Some(LabelStatus::Confirmed),
            ..Filter::default()
        },
    );
    assert!(confirmed.iter().all(|s| s.id != target.id));
    let too_far = Label {
        step: 99,
        ..label(ErrorKind::Format, LabelStatus::Confirmed)
    };
    assert!(matches!(
        store.add_label(target.id, too_far),
        Err(StoreError::Invalid(_))
    ));
}

#[test]
fn labels_are_kept_per_author_and_rewrites_are_compare_and_swap() {
    let dir = tempfile::tempdir().unwrap();
    let (store, trajectories) = filled(&dir.path().join("store"), 20);
    let id = trajectories
        .iter()
        .find(|t| t.labels.is_empty())
        .unwrap()
        .id;
    let by = |author: &str, kind, note: &str| Label {
        step: 0,
        kind,
        status: LabelStatus::Confirmed,
        note: Some(note.into()),
        author: Some(author.into()),
        time: 1,
    };
    let authors = |store: &Store| {
        let mut found: Vec<(String, ErrorKind, String)> = store
            .get(id)
            .unwrap()
            .unwrap()
            .labels
            .into_iter()
            .map(|label| (label.author.unwrap(), label.kind, label.note.unwrap()))
            .collect();
        found.sort_by_key(|(author, kind, _)| (author.clone(), kind.index()));
        found
    };
    store
        .add_label(id, by("alice", ErrorKind::Calculation, "a1"))
        .unwrap();
    store
        .add_label(id, by("bob", ErrorKind::Calculation, "b1"))
        .unwrap();
    store
        .add_label(id, by("alice", ErrorKind::Calculation, "a2"))
        .unwrap();
    assert_eq!(
        authors(&store),
        [
            ("alice".into(), ErrorKind::Calculation, "a2".into()),
            ("bob".into(), ErrorKind::Calculation, "b1".into())
        ],
        "a label replaces its author's own, never a teammate's"
    );
    store
        .remove_labels(id, 0, Some(ErrorKind::Calculation), Some("alice"))
        .unwrap();
    assert_eq!(
        authors(&store),
        [("bob".into(), ErrorKind::Calculation, "b1".into())]
    );
    let read = store.get(id).unwrap().unwrap().labels;
    store
        .add_label(id, by("carol", ErrorKind::Format, "c1"))
        .unwrap();
    let stale = rollscope::store::LabelEdit::Swap {
        expected: read,
        labels: Vec::new(),
    };
    assert!(matches!(
        store.edit_labels(id, stale),
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(authors(&store).len(), 2, "a stale swap writes nothing");
    let rewritten = store
        .rewrite_labels(id, |labels| {
            labels
                .iter()
                .filter(|label| label.kind != ErrorKind::Format)
                .cloned()
                .collect()
        })
        .unwrap()
        .unwrap();
    assert_eq!(rewritten.labels.len(), 1);
}
