//! The rules of a rejection-sampling selection and how candidates are ranked.

use crate::store::Summary;
pub use crate::trajectory::SelectionRules;
use std::cmp::Ordering;

/// The `extra` key that marks a trajectory a person corrected (its value names who).
pub const CORRECTED_BY: &str = "corrected_by";

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
