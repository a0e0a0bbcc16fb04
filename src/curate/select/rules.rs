//! The rules of a rejection-sampling selection and how candidates are ranked.

use crate::store::Summary;
use crate::trajectory::ErrorKind;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// The `extra` key that marks a trajectory a person corrected (its value names who).
pub const CORRECTED_BY: &str = "corrected_by";

/// How to pick the samples to train on, per task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SelectionRules {
    /// Samples kept per task at most.
    pub per_task: usize,
    /// Keep only samples the verifier passed.
    pub require_pass: bool,
    /// Leave out samples with a confirmed error label.
    pub exclude_confirmed_errors: bool,
    /// Also keep samples a person corrected (`extra.corrected_by`), whatever their verdict
    /// and labels.
    pub include_corrected: bool,
    /// Keep one of several samples of a task with the same completion.
    pub dedup: bool,
    /// Keep as many tasks of each difficulty level as the level with fewest has.
    pub balance_difficulty: bool,
    /// Leave out samples whose lowest process score is below this, or that have none: a
    /// right answer the steps do not support (a lucky guess, a tool result not used) is not
    /// a demonstration.
    pub min_prm: Option<f64>,
    /// Leave out samples with a suggested error label of these kinds too (kinds whose
    /// suggestions are precise enough to trust without a person's look).
    pub exclude_suggested: Vec<ErrorKind>,
    /// Rank a task's samples by their lowest process score before their length (off: the
    /// shortest first, as a selection by the verifier alone does).
    pub rank_by_prm: bool,
}

impl Default for SelectionRules {
    fn default() -> Self {
        Self {
            per_task: 1,
            require_pass: true,
            exclude_confirmed_errors: true,
            include_corrected: false,
            dedup: true,
            balance_difficulty: false,
            min_prm: None,
            exclude_suggested: Vec::new(),
            rank_by_prm: true,
        }
    }
}

impl SelectionRules {
    /// The verifier alone: passing samples, whatever their labels and process scores, the
    /// shortest first.
    pub fn verifier_only(per_task: usize) -> Self {
        Self {
            per_task,
            exclude_confirmed_errors: false,
            rank_by_prm: false,
            ..Self::default()
        }
    }

    /// Whether a sample's labels leave it out: a confirmed error label (when the rules say
    /// so), or a suggested one of a kind the rules trust.
    pub fn excluded_by_labels(&self, summary: &Summary) -> bool {
        (self.exclude_confirmed_errors && summary.confirmed != 0)
            || summary
                .suggested_kinds()
                .any(|kind| self.exclude_suggested.contains(&kind))
    }

    /// The rules in words, e.g. `verifier pass · no confirmed error label · highest PRM ·
    /// then shortest · ≤ 1 per task`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.require_pass {
            parts.push("verifier pass".to_string());
        }
        if self.exclude_confirmed_errors {
            parts.push("no confirmed error label".to_string());
        }
        if !self.exclude_suggested.is_empty() {
            let kinds: Vec<String> = self
                .exclude_suggested
                .iter()
                .map(|k| k.to_string())
                .collect();
            parts.push(format!("no suggested {} label", kinds.join("/")));
        }
        if let Some(min) = self.min_prm {
            parts.push(format!("PRM ≥ {min}"));
        }
        if self.include_corrected {
            parts.push("or corrected by a person".to_string());
        }
        parts.push(if self.rank_by_prm {
            "highest PRM · then shortest".to_string()
        } else {
            "shortest".to_string()
        });
        if self.dedup {
            parts.push("no duplicate completions".to_string());
        }
        parts.push(format!("≤ {} per task", self.per_task));
        if self.balance_difficulty {
            parts.push("balanced by difficulty".to_string());
        }
        parts.join(" · ")
    }

    /// Best first: verifier pass (or corrected), then highest PRM minimum when the rules
    /// rank by it (samples without process scores last), then shortest (tokens when both
    /// have a trace, else turns), then step, group and sample (the same choice however the
    /// rollouts' finishing order stored them), then stored order.
    pub fn rank(&self, a: &Candidate<'_>, b: &Candidate<'_>) -> Ordering {
        let prm = |candidate: &Candidate<'_>| candidate.summary.prm_min;
        let by_prm = match (prm(a), prm(b)) {
            _ if !self.rank_by_prm => Ordering::Equal,
            (Some(x), Some(y)) => y.total_cmp(&x),
            (x, y) => y.is_some().cmp(&x.is_some()),
        };
        let (sa, sb) = (a.summary, b.summary);
        let by_length = if sa.tokens > 0 && sb.tokens > 0 {
            sa.tokens.cmp(&sb.tokens)
        } else {
            sa.turns.cmp(&sb.turns)
        };
        b.verified()
            .cmp(&a.verified())
            .then(by_prm)
            .then(by_length)
            .then((sa.step, sa.group, sa.sample).cmp(&(sb.step, sb.group, sb.sample)))
            .then(sa.seq.cmp(&sb.seq))
    }
}

/// A sample that may be kept, with what ranks it.
#[derive(Clone, Debug)]
pub struct Candidate<'a> {
    /// Its summary.
    pub summary: &'a Summary,
    /// Whether a person corrected it.
    pub corrected: bool,
}

impl Candidate<'_> {
    fn verified(&self) -> bool {
        self.corrected || self.summary.passed == Some(true)
    }
}
