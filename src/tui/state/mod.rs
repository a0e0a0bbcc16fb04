//! The UI's state, one struct per tab (each updated by its own module's functions), and
//! the pieces the tabs share: the status bar and the overview counts. Rendering lives in
//! `view`, routing in `app`.

pub mod curate;
pub mod group;
pub mod list;
pub mod open_trajectory;
pub mod overview;
pub mod rollouts;
pub mod run_charts;
mod run_words;
pub mod runs;
pub mod stats;
pub mod status;
pub mod step_cursor;
pub mod trajectory;
pub mod transcript;

use curate::CurateTab;
use rollouts::RolloutsTab;
use runs::RunsTab;
use stats::StatsTab;

/// The four tabs.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    strum::EnumIter,
    strum::IntoStaticStr,
)]
#[serde(rename_all = "lowercase")]
pub enum Tab {
    /// Browse, open and label rollouts.
    #[default]
    Rollouts,
    /// Runs and their metrics.
    Runs,
    /// Error kinds and outcomes.
    Stats,
    /// Best-of-N selection preview.
    Curate,
}

impl Tab {
    /// The tab's name.
    pub fn title(self) -> &'static str {
        self.into()
    }

    /// The next tab (forward) or the previous one, wrapping around.
    pub fn cycled(self, forward: bool) -> Self {
        let all: Vec<Tab> = <Tab as strum::IntoEnumIterator>::iter().collect();
        crate::tui::cycle::cycled(&all, self, forward)
    }
}

/// Every tab's state.
#[derive(Default)]
pub struct Tabs {
    /// The Rollouts tab: the list, the trajectory and the group screens.
    pub rollouts: RolloutsTab,
    /// The Runs tab.
    pub runs: RunsTab,
    /// The Stats tab.
    pub stats: StatsTab,
    /// The Curate tab.
    pub curate: CurateTab,
}
