//! Label counts per error kind, for the whole selection and per group (run, task source).

use crate::store::Summary;
use crate::trajectory::ErrorKind;
use serde::ser::{Serialize, SerializeMap, Serializer};

/// Trajectories with a label of each kind: confirmed, or only suggested.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KindCounts {
    /// With a confirmed label of the kind, in `ErrorKind::EVERY` order.
    pub confirmed: [usize; ErrorKind::COUNT],
    /// With only a suggested label of the kind.
    pub suggested: [usize; ErrorKind::COUNT],
}

impl KindCounts {
    /// Counts a summary's labels.
    pub fn add(&mut self, summary: &Summary) {
        for kind in summary.confirmed_kinds() {
            self.confirmed[kind.index() as usize] += 1;
        }
        for kind in summary.suggested_kinds() {
            self.suggested[kind.index() as usize] += 1;
        }
    }

    /// Trajectories with a confirmed label of `kind`.
    pub fn confirmed(&self, kind: ErrorKind) -> usize {
        self.confirmed[kind.index() as usize]
    }

    /// Trajectories with only a suggested label of `kind`.
    pub fn suggested(&self, kind: ErrorKind) -> usize {
        self.suggested[kind.index() as usize]
    }
}

impl Serialize for KindCounts {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let used =
            |kind: ErrorKind| kind.is_builtin() || self.confirmed(kind) + self.suggested(kind) > 0;
        for kind in ErrorKind::EVERY.into_iter().filter(|&kind| used(kind)) {
            map.serialize_entry(
                kind.as_str(),
                &serde_json::json!({
                    "confirmed": self.confirmed(kind),
                    "suggested": self.suggested(kind),
                }),
            )?;
        }
        map.end()
    }
}

/// Outcomes and labels of one group of trajectories.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct GroupCounts {
    /// The group's name: a run id, a task source.
    pub name: String,
    /// Trajectories in it.
    pub trajectories: usize,
    /// Of which passed.
    pub passed: usize,
    /// Of which failed.
    pub failed: usize,
    /// Labels per kind.
    pub kinds: KindCounts,
}

impl GroupCounts {
    /// An empty group.
    pub fn named(name: &str) -> Self {
        Self {
            name: name.to_string(),
            ..Self::default()
        }
    }

    /// Counts a summary.
    pub fn add(&mut self, summary: &Summary) {
        self.trajectories += 1;
        self.passed += usize::from(summary.passed == Some(true));
        self.failed += usize::from(summary.passed == Some(false));
        self.kinds.add(summary);
    }
}

/// Groups summaries by a key, counting each group; groups in key order.
pub fn group_by<'a>(
    summaries: &'a [Summary],
    key: impl Fn(&'a Summary) -> &'a str,
) -> Vec<GroupCounts> {
    let mut groups: std::collections::BTreeMap<&str, GroupCounts> = Default::default();
    for summary in summaries {
        let name = key(summary);
        groups
            .entry(name)
            .or_insert_with(|| GroupCounts::named(name))
            .add(summary);
    }
    groups.into_values().collect()
}
