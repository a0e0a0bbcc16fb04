//! Arithmetic claims in text, checked exactly: GSM8K's calculator annotations
//! (`<<48/2=24>>`) and equations written in prose (`0.2 x 50 = $10`, `5 + 3 + 2 = 10`).
//!
//! A claim holds when every side of its chain has the same exact value. A side written as
//! one decimal literal may be rounded to its last written place (`10/3 = 3.33`) or, with
//! `...`, truncated. Where `%` occurs, a claim holds if it holds with `%` meaning /100 or
//! with `%` read as a unit (`0.8 * 100 = 80%`).

mod prose;
pub mod report;

use super::arith::{self, ArithError, Evaluated, PercentMode, Spanned, display, evaluate};
use num_rational::BigRational;
use num_traits::Signed;

/// Where a claim was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimOrigin {
    /// Inside a GSM8K `<<…>>` annotation.
    Annotation,
    /// In the prose.
    Text,
}

/// The outcome of checking a claim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every side has the same value.
    Holds,
    /// The sides differ; `computed` is the exact value of the first side, `stated` the
    /// first side that differs from it, as written.
    Fails {
        /// The first side's value, written out.
        computed: String,
        /// The side that disagrees, as written.
        stated: String,
    },
    /// A side is not arithmetic that can be evaluated (an annotation only; prose that does
    /// not parse is not a claim).
    Unparsed {
        /// Why.
        reason: String,
    },
}

/// One arithmetic claim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    /// The claim as written, e.g. `48/2=24`.
    pub text: String,
    /// Annotation or prose.
    pub origin: ClaimOrigin,
    /// The outcome.
    pub verdict: Verdict,
}

impl Claim {
    /// Whether the claim was checked and is false.
    pub fn fails(&self) -> bool {
        matches!(self.verdict, Verdict::Fails { .. })
    }
}

/// Every claim in a text: annotations first, then the prose with annotations removed.
pub fn extract_claims(text: &str) -> Vec<Claim> {
    let (annotations, prose) = split_annotations(text);
    let mut claims: Vec<Claim> = annotations
        .into_iter()
        .map(|inner| Claim {
            verdict: check_annotation(inner),
            text: inner.to_string(),
            origin: ClaimOrigin::Annotation,
        })
        .collect();
    for line in prose.lines() {
        claims.extend(prose::claims(line));
    }
    claims
}

/// The contents of `<<…>>` annotations, and the text with them removed.
pub fn split_annotations(text: &str) -> (Vec<&str>, String) {
    let mut annotations = Vec::new();
    let mut prose = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("<<") {
        let Some(close) = rest[open + 2..].find(">>") else {
            break;
        };
        let inner = &rest[open + 2..open + 2 + close];
        if inner.contains("<<") {
            prose.push_str(&rest[..open + 2]);
            rest = &rest[open + 2..];
            continue;
        }
        prose.push_str(&rest[..open]);
        annotations.push(inner);
        rest = &rest[open + 2 + close + 2..];
    }
    prose.push_str(rest);
    (annotations, prose)
}

/// Checks the inside of a `<<…>>` annotation: a chain of whole expressions.
pub fn check_annotation(inner: &str) -> Verdict {
    let sides: Vec<&str> = inner.split('=').collect();
    if sides.len() < 2 || sides.iter().any(|side| side.trim().is_empty()) {
        return Verdict::Unparsed {
            reason: "an annotation needs `expression=result`".into(),
        };
    }
    let mut tokens = Vec::new();
    for side in &sides {
        match arith::tokenize(side) {
            Ok(side_tokens) => tokens.push(side_tokens),
            Err((at, found)) => {
                return Verdict::Unparsed {
                    reason: ArithError::NotArithmetic {
                        column: ArithError::column(side, at),
                        found,
                    }
                    .to_string(),
                };
            }
        }
    }
    let sides: Vec<Side<'_>> = sides
        .iter()
        .zip(&tokens)
        .map(|(side, tokens)| Side {
            text: side,
            tokens,
            shown: side.trim(),
        })
        .collect();
    judge(&sides)
}

/// One side of a claim: tokens with spans into `text`, and the side as written.
pub(super) struct Side<'a> {
    /// The text the token spans refer to.
    pub text: &'a str,
    /// The side's tokens.
    pub tokens: &'a [Spanned],
    /// The side as written.
    pub shown: &'a str,
}

/// The verdict on a chain of sides.
pub(super) fn judge(sides: &[Side<'_>]) -> Verdict {
    let mut evaluations = Vec::new();
    for mode in [PercentMode::Fraction, PercentMode::Unit] {
        let mut values = Vec::new();
        for side in sides {
            match evaluate(side.text, side.tokens, mode) {
                Ok(value) => values.push(value),
                Err(error) => {
                    return Verdict::Unparsed {
                        reason: error.to_string(),
                    };
                }
            }
        }
        if chain_holds(&values) {
            return Verdict::Holds;
        }
        let has_percent = values.iter().any(|value| value.has_percent);
        evaluations.push(values);
        if !has_percent {
            break;
        }
    }
    let values = &evaluations[0];
    let differing = (1..values.len())
        .find(|&index| !sides_agree(&values[index - 1], &values[index]))
        .unwrap_or(1);
    Verdict::Fails {
        computed: display(&values[0].value),
        stated: sides[differing].shown.to_string(),
    }
}

fn chain_holds(values: &[Evaluated]) -> bool {
    values
        .windows(2)
        .all(|pair| sides_agree(&pair[0], &pair[1]))
}

fn sides_agree(left: &Evaluated, right: &Evaluated) -> bool {
    let difference: BigRational = (&left.value - &right.value).abs();
    difference <= &left.tolerance + &right.tolerance
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdicts(text: &str) -> Vec<(String, bool)> {
        extract_claims(text)
            .into_iter()
            .map(|claim| (claim.text, claim.verdict == Verdict::Holds))
            .collect()
    }

    #[test]
    fn prose_claims_are_found_between_words() {
        assert_eq!(
            verdicts("Weng earns 12/60 = $<<12/60=0.2>>0.2 per minute."),
            vec![("12/60=0.2".into(), true), ("12/60 = $0.2".into(), true)]
        );
        assert_eq!(
            verdicts("So 0.2 x 50 = 11 dollars."),
            vec![("0.2 x 50 = 11".into(), false)]
        );
        assert_eq!(verdicts("apples - 4 = 32"), Vec::<(String, bool)>::new());
        assert_eq!(verdicts("Total = 5+3 = 8."), vec![("5+3 = 8".into(), true)]);
    }

    #[test]
    fn rounding_and_percent_readings() {
        assert_eq!(verdicts("10/3 = 3.33"), vec![("10/3 = 3.33".into(), true)]);
        assert_eq!(verdicts("10/3 = 3.3"), vec![("10/3 = 3.3".into(), true)]);
        assert_eq!(verdicts("10/3 = 3"), vec![("10/3 = 3".into(), false)]);
        assert_eq!(
            verdicts("0.8 * 100 = 80%"),
            vec![("0.8 * 100 = 80%".into(), true)]
        );
        assert_eq!(
            verdicts("20% * 50 = 10"),
            vec![("20% * 50 = 10".into(), true)]
        );
    }
}
