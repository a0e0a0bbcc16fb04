//! The orders a listing can take (`s` in the TUI cycles through them).

use super::summary::Summary;
use serde::{Deserialize, Serialize};

/// The order of a list.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    strum::EnumIter,
    strum::IntoStaticStr,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum SortKey {
    /// The order they were stored in.
    #[default]
    Stored,
    /// By outcome reward.
    Reward,
    /// By number of turns.
    Turns,
    /// By lowest process score.
    #[strum(serialize = "prm")]
    PrmMin,
    /// By task id.
    Task,
    /// By run, step, group and sample.
    Step,
    /// By trajectory id: ids are content hashes, so runs and policies come mixed (the
    /// order of blind labelling).
    Id,
}

impl SortKey {
    /// The key's name, as typed and shown.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Sorts summaries by this key (stable; ties keep stored order).
    pub fn sort(self, summaries: &mut [Summary], descending: bool) {
        let by_option = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => a.total_cmp(&b),
            (a, b) => a.is_some().cmp(&b.is_some()),
        };
        match self {
            Self::Stored => summaries.sort_by_key(|s| s.seq),
            Self::Reward => summaries.sort_by(|a, b| by_option(a.reward, b.reward)),
            Self::Turns => summaries.sort_by_key(|s| s.turns),
            Self::PrmMin => summaries.sort_by(|a, b| by_option(a.prm_min, b.prm_min)),
            Self::Task => summaries.sort_by(|a, b| a.task_id.cmp(&b.task_id)),
            Self::Step => summaries.sort_by(|a, b| {
                (&a.run, a.step, a.group, a.sample).cmp(&(&b.run, b.step, b.group, b.sample))
            }),
            Self::Id => summaries.sort_by_key(|s| s.id),
        }
        if descending {
            summaries.reverse();
        }
    }
}

impl std::str::FromStr for SortKey {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        use strum::IntoEnumIterator;
        crate::text::parse_choice(text, "sort key", Self::iter())
    }
}
