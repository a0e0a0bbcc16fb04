//! Every number a request carries is checked or saturates: windows past the end, limits up
//! to 2⁶⁴−1, label steps up to 2³²−1 answer sensibly and name the value, never wrap.

use super::filled;
use proptest::prelude::*;
use rollscope::store::{Query, SortKey, StoreError};
use rollscope::trajectory::{ErrorKind, Label, LabelStatus};

const STORED: u64 = 24;

fn sort_key() -> impl Strategy<Value = SortKey> {
    prop_oneof![
        Just(SortKey::Stored),
        Just(SortKey::Reward),
        Just(SortKey::Turns),
        Just(SortKey::Task),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A query's window is `offset..offset+limit` clipped to the matches, whatever the
    /// numbers (2⁶⁴−1 included), in every order.
    #[test]
    fn any_window_is_clipped_to_the_matches(
        offset in prop_oneof![0usize..40, Just(usize::MAX), any::<usize>()],
        limit in prop_oneof![Just(None), (0usize..40).prop_map(Some), Just(Some(usize::MAX)), any::<usize>().prop_map(Some)],
        sort in sort_key(),
        descending in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let (store, _) = filled(dir.path(), STORED);
        let query = Query { offset, limit, sort, descending, ..Query::default() };
        let rows = store.query(&query).unwrap();
        let available = (STORED as usize).saturating_sub(offset);
        let expected = limit.map_or(available, |limit| limit.min(available));
        prop_assert_eq!(rows.len(), expected);
        prop_assert_eq!(store.listed_ids(&query).unwrap().ids.len(), expected);
    }

    /// A label on a step that does not exist is refused naming that step (as `show` numbers
    /// it, 1-based), up to the largest step a request can carry.
    #[test]
    fn a_label_past_the_last_step_is_refused_naming_it(step in prop_oneof![4u32..64, Just(u32::MAX), any::<u32>()]) {
        let dir = tempfile::tempdir().unwrap();
        let (store, trajectories) = filled(dir.path(), 2);
        let target = &trajectories[0];
        let steps = target.steps().len() as u32;
        prop_assume!(step >= steps);
        let label = Label {
            step,
            kind: ErrorKind::Calculation,
            status: LabelStatus::Confirmed,
            note: None,
            author: Some("probe".into()),
            time: 0,
        };
        match store.add_label(target.id, label) {
            Err(StoreError::Invalid(message)) => {
                let named = format!("step {} does not exist", u64::from(step) + 1);
                prop_assert!(message.contains(&named), "{}", message);
            }
            other => prop_assert!(false, "a label on step {} was {:?}", step, other.map(|_| ())),
        }
    }
}
