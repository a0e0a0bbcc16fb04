//! A listing read whole by id (what the TUI's engine holds) and the summaries of a window.

use super::filled;
use rollscope::store::{Filter, ListedIds, Outcome, Query, SortKey};
use rollscope::trajectory::TrajectoryId;

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
