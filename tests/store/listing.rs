//! A listing read whole by id (what the TUI's engine holds) and the summaries of a window.

use super::filled;
use rollscope::store::{Filter, ListedIds, Outcome, Query, SortKey};
use rollscope::trajectory::{ErrorKind, Label, LabelStatus, TrajectoryId};

#[test]
fn a_listing_by_id_keeps_the_order_and_its_failures() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = filled(&dir.path().join("store"), 60);
    let query = Query {
        sort: SortKey::Reward,
        descending: true,
        ..Query::default()
    };
    let summaries = store.query(&query).unwrap();
    let listed = store.listed_ids(&query).unwrap();
    let expected: Vec<_> = summaries.iter().map(|summary| summary.id).collect();
    assert_eq!(listed.ids, expected, "the query's order");
    let failures: Vec<u32> = (0..summaries.len() as u32)
        .filter(|&row| summaries[row as usize].is_unlabelled_failure())
        .collect();
    assert!(!failures.is_empty(), "the fixture has unlabelled failures");
    assert_eq!(listed.unlabelled_failures, failures);
    let mut window = listed.ids[40..45].to_vec();
    window.insert(2, TrajectoryId(u64::MAX));
    let read = store.summaries_of(&window).unwrap();
    assert_eq!(
        read,
        summaries[40..45],
        "in the order asked, the unknown id skipped"
    );
}

#[test]
fn a_listing_in_stored_order_agrees_with_the_query_in_every_window() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = filled(&dir.path().join("store"), 60);
    let failed = Filter {
        outcome: Some(Outcome::Fail),
        ..Filter::default()
    };
    for filter in [Filter::default(), failed] {
        for descending in [false, true] {
            for (offset, limit) in [(0, None), (0, Some(7)), (11, Some(9)), (55, Some(20))] {
                let query = Query {
                    filter: filter.clone(),
                    descending,
                    offset,
                    limit,
                    ..Query::default()
                };
                let expected = ListedIds::of(&store.query(&query).unwrap());
                assert!(offset >= 55 || !expected.ids.is_empty());
                assert_eq!(store.listed_ids(&query).unwrap(), expected, "{query:?}");
            }
        }
    }
}

/// Searches of what was said: one every trajectory matches, one only some do.
const SEARCHES: [&str; 2] = ["apples", "\"Step 3\""];

/// Every filter the listing rows answer (searches with them too), and one they do not.
fn row_filters() -> Vec<Filter> {
    let mut filters = vec![
        Filter::default(),
        Filter {
            unlabelled_failures: true,
            ..Filter::default()
        },
        Filter {
            run: Some("grpo-0001".into()),
            outcome: Some(Outcome::Fail),
            ..Filter::default()
        },
    ];
    for outcome in [None, Some(Outcome::Fail), Some(Outcome::Pass)] {
        filters.push(Filter {
            outcome,
            ..Filter::default()
        });
        for kind in ErrorKind::ALL {
            for label_status in [
                None,
                Some(LabelStatus::Confirmed),
                Some(LabelStatus::Suggested),
            ] {
                filters.push(Filter {
                    label: Some(kind),
                    label_status,
                    outcome,
                    ..Filter::default()
                });
            }
        }
    }
    for search in SEARCHES {
        let searched = Filter {
            full_text: Some(search.into()),
            ..Filter::default()
        };
        for outcome in [None, Some(Outcome::Fail)] {
            filters.push(Filter {
                outcome,
                ..searched.clone()
            });
        }
        filters.push(Filter {
            unlabelled_failures: true,
            ..searched.clone()
        });
        filters.push(Filter {
            label: Some(ErrorKind::ALL[0]),
            ..searched
        });
    }
    filters
}

fn assert_listings_agree(store: &rollscope::store::Store, when: &str) {
    for filter in row_filters() {
        for (offset, limit) in [(0, None), (3, Some(4))] {
            let query = Query {
                filter: filter.clone(),
                offset,
                limit,
                ..Query::default()
            };
            let expected = ListedIds::of(&store.query(&query).unwrap());
            assert_eq!(
                store.listed_ids(&query).unwrap(),
                expected,
                "{when}: {query:?}"
            );
            if offset == 0 && limit.is_none() {
                assert_eq!(store.count(&filter).unwrap(), expected.ids.len());
            }
        }
    }
}

#[test]
fn listings_by_label_outcome_and_queue_follow_labels_replacements_and_deletions() {
    let dir = tempfile::tempdir().unwrap();
    let (store, trajectories) = filled(&dir.path().join("store"), 80);
    let some = Filter {
        full_text: Some(SEARCHES[1].into()),
        ..Filter::default()
    };
    assert!((1..80).contains(&store.count(&some).unwrap()), "{some:?}");
    assert_listings_agree(&store, "as imported");
    let queue = Filter {
        unlabelled_failures: true,
        ..Filter::default()
    };
    let before = store.count(&queue).unwrap();
    let failed: Vec<_> = trajectories
        .iter()
        .filter(|trajectory| trajectory.reward.as_ref().and_then(|r| r.passed) == Some(false))
        .collect();
    for (trajectory, kind) in failed.iter().take(6).zip(ErrorKind::ALL.iter().cycle()) {
        store
            .add_label(
                trajectory.id,
                Label {
                    step: 1,
                    kind: *kind,
                    status: LabelStatus::Confirmed,
                    note: None,
                    author: Some("tester".into()),
                    time: 2,
                },
            )
            .unwrap();
    }
    assert!(
        store.count(&queue).unwrap() < before,
        "labelled failures leave the queue"
    );
    assert_listings_agree(&store, "after labelling");
    let mut replaced = failed[10].clone();
    replaced.reward.as_mut().unwrap().passed = Some(true);
    store.put_trajectories(&[replaced]).unwrap();
    let deleted: Vec<_> = trajectories.iter().step_by(7).map(|t| t.id).collect();
    store.delete_trajectories(&deleted).unwrap();
    assert_listings_agree(&store, "after a replacement and deletions");
}
