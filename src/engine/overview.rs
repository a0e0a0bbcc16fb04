//! What the Stats and Curate tabs show: the error analysis of the stored rollouts and what a
//! best-of-N selection with the default rules would keep.

use crate::curate::TaskIndex;
use crate::curate::analysis::{Analysis, analyse_summaries};
use crate::curate::select::{SelectionPreview, SelectionRules, select_from};
use crate::store::{Filter, Query, Store, Summary};

/// Everything the Stats and Curate tabs show.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Overview {
    /// The error analysis.
    pub analysis: Analysis,
    /// The rules of the selection preview.
    pub rules: SelectionRules,
    /// What a selection with those rules keeps.
    pub selection: SelectionPreview,
}

impl Overview {
    /// The figures summaries alone give (no record read; the selection uses rules that need
    /// none): what tests and quick views use.
    pub fn of(summaries: &[Summary]) -> Self {
        let rules = SelectionRules::default();
        let tasks = TaskIndex::default();
        let selection = select_from(summaries, &tasks, &rules, &mut |id| {
            anyhow::bail!("trajectory {id}: records are not read for this preview")
        })
        .map(|selection| selection.preview)
        .unwrap_or_default();
        Self {
            analysis: Analysis::of_summaries(summaries, &tasks),
            rules,
            selection,
        }
    }

    /// Every figure over the trajectories a filter selects: summaries, then each record once.
    pub fn compute(store: &Store, filter: &Filter) -> anyhow::Result<Self> {
        let summaries = store.query(&Query {
            filter: filter.clone(),
            ..Query::default()
        })?;
        let tasks = TaskIndex::load(store)?;
        let analysis = analyse_summaries(store, &summaries, &tasks)?;
        let rules = SelectionRules::default();
        let selection = select_from(&summaries, &tasks, &rules, &mut |id| {
            store
                .get_without_trace(id)?
                .ok_or_else(|| anyhow::anyhow!("trajectory {id} vanished"))
        })?;
        Ok(Self {
            analysis,
            rules,
            selection: selection.preview,
        })
    }
}
