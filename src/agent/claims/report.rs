//! Measuring the claim checker on GSM8K-shaped solutions: how many calculator annotations
//! and prose equations it verifies, and which ones fail.

use super::{Claim, ClaimOrigin, Verdict, extract_claims};
use crate::formats::gsm8k;

/// Counts of claims by outcome.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Claims found.
    pub claims: usize,
    /// Claims that hold.
    pub hold: usize,
    /// Claims that are false.
    pub fail: usize,
    /// Claims that could not be evaluated.
    pub unparsed: usize,
}

impl Tally {
    fn count(&mut self, claim: &Claim) {
        self.claims += 1;
        match claim.verdict {
            Verdict::Holds => self.hold += 1,
            Verdict::Fails { .. } => self.fail += 1,
            Verdict::Unparsed { .. } => self.unparsed += 1,
        }
    }

    /// The share of claims verified, 0 to 1 (1 when there are none).
    pub fn share_verified(&self) -> f64 {
        if self.claims == 0 {
            1.0
        } else {
            self.hold as f64 / self.claims as f64
        }
    }
}

/// A claim that did not hold, with the line it is on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocatedClaim {
    /// 1-based line of the file.
    pub line: usize,
    /// The claim.
    pub claim: Claim,
}

/// What the checker found in a file of solutions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClaimReport {
    /// Solutions read.
    pub solutions: usize,
    /// `<<…>>` annotations.
    pub annotations: Tally,
    /// Equations in the prose.
    pub prose: Tally,
    /// Every claim that did not hold, annotations first.
    pub not_verified: Vec<LocatedClaim>,
}

/// Checks every claim of the `answer` field of each line of a GSM8K-shaped JSONL text.
pub fn check_gsm8k(text: &str, origin: &str) -> anyhow::Result<ClaimReport> {
    let mut report = ClaimReport::default();
    let mut prose_failures = Vec::new();
    for (line, row) in gsm8k::rows(text, origin).map_err(anyhow::Error::msg)? {
        let answer = row.answer.as_str();
        report.solutions += 1;
        for claim in extract_claims(answer) {
            let (tally, failures) = match claim.origin {
                ClaimOrigin::Annotation => (&mut report.annotations, &mut report.not_verified),
                ClaimOrigin::Text => (&mut report.prose, &mut prose_failures),
            };
            tally.count(&claim);
            if claim.verdict != Verdict::Holds {
                failures.push(LocatedClaim { line, claim });
            }
        }
    }
    report.not_verified.extend(prose_failures);
    Ok(report)
}
