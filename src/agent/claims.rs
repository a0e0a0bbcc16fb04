//! Arithmetic claims in text, checked exactly: GSM8K's calculator annotations
//! (`<<48/2=24>>`) and equations written in prose (`0.2 x 50 = $10`, `5 + 3 + 2 = 10`).
//!
//! A claim holds when every side of its chain has the same exact value. A side written as
//! one decimal literal may be rounded to its last written place (`10/3 = 3.33`) or, with
//! `...`, truncated. Where `%` occurs, a claim holds if it holds with `%` meaning /100 or
//! with `%` read as a unit (`0.8 * 100 = 80%`).

use super::arith::{
    self, ArithError, Evaluated, PercentMode, Spanned, Token, display, evaluate, token_at,
};
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
        claims.extend(prose_claims(line));
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
struct Side<'a> {
    text: &'a str,
    tokens: &'a [Spanned],
    shown: &'a str,
}

/// The verdict on a chain of sides.
fn judge(sides: &[Side<'_>]) -> Verdict {
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

/// Claims written in one line of prose.
fn prose_claims(line: &str) -> Vec<Claim> {
    let mut claims = Vec::new();
    for run in runs(line) {
        let Some(segments) = segments(line, &run) else {
            continue;
        };
        let checkable = segments.iter().any(|segment| {
            segment
                .iter()
                .enumerate()
                .any(|(index, spanned)| match spanned.token {
                    Token::Plus | Token::Times | Token::Divide | Token::Power | Token::Of => true,
                    Token::Percent => true,
                    Token::Minus => index > 0,
                    _ => false,
                })
        });
        if !checkable {
            continue;
        }
        let sides: Vec<Side<'_>> = segments
            .iter()
            .map(|segment| Side {
                text: line,
                tokens: segment,
                shown: &line[segment[0].start..segment[segment.len() - 1].end],
            })
            .collect();
        let verdict = judge(&sides);
        if matches!(verdict, Verdict::Unparsed { .. }) {
            continue;
        }
        let start = segments[0][0].start;
        let end = segments[segments.len() - 1]
            .last()
            .map_or(start, |last| last.end);
        claims.push(Claim {
            text: line[start..end].to_string(),
            origin: ClaimOrigin::Text,
            verdict,
        });
    }
    claims
}

/// A maximal run of arithmetic tokens in a line.
struct Run {
    tokens: Vec<Spanned>,
    /// Whether it touches other arithmetic without a word between (`19(2)`, `1 1/2`) or a
    /// number is glued to a letter (`3x`, `2S`): then it is not a whole claim.
    tainted: bool,
}

fn ends_operand(token: &Token) -> bool {
    matches!(token, Token::Number(_) | Token::Close | Token::Percent)
}

/// Whether byte `pos` follows `<digit>:` (a clock time such as `6:48`).
fn is_clock(line: &str, pos: usize) -> bool {
    line[..pos]
        .strip_suffix(':')
        .is_some_and(|head| head.ends_with(|c: char| c.is_ascii_digit()))
        && line[pos..].starts_with(|c: char| c.is_ascii_digit())
}

/// The runs of a line that hold an `=`: words, punctuation and two operands in a row end
/// a run.
fn runs(line: &str) -> Vec<Run> {
    let mut runs = Vec::new();
    let mut current = Run {
        tokens: Vec::new(),
        tainted: false,
    };
    let mut pos = 0;
    while let Some(c) = line[pos..].chars().next() {
        if c.is_whitespace() {
            pos += c.len_utf8();
            continue;
        }
        let previous = current.tokens.last().map(|spanned| &spanned.token);
        match token_at(line, pos, previous) {
            Some((token, end)) => {
                if previous.is_some_and(ends_operand)
                    && matches!(token, Token::Number(_) | Token::Open)
                {
                    let ended = std::mem::replace(
                        &mut current,
                        Run {
                            tokens: Vec::new(),
                            tainted: true,
                        },
                    );
                    runs.push(Run {
                        tainted: true,
                        ..ended
                    });
                }
                if current.tokens.is_empty() && is_clock(line, pos) {
                    current.tainted = true;
                }
                current.tokens.push(Spanned {
                    token,
                    start: pos,
                    end,
                });
                pos = end;
            }
            None => {
                let touches_operand = current
                    .tokens
                    .last()
                    .is_some_and(|last| last.end == pos && ends_operand(&last.token));
                let glued =
                    touches_operand && (c.is_alphabetic() || is_clock(line, pos + c.len_utf8()));
                current.tainted |= glued;
                runs.push(std::mem::replace(
                    &mut current,
                    Run {
                        tokens: Vec::new(),
                        tainted: false,
                    },
                ));
                let word = line[pos..]
                    .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '\''))
                    .unwrap_or(line.len() - pos);
                pos += word.max(c.len_utf8());
                if c.is_alphabetic() && line[pos..].starts_with(|c: char| c.is_ascii_digit()) {
                    current.tainted = true;
                }
            }
        }
    }
    runs.push(current);
    runs.retain(|run| {
        run.tokens
            .iter()
            .any(|spanned| spanned.token == Token::Equals)
    });
    runs
}

/// The sides of a run, or `None` when the run is not a whole claim: an operator left
/// dangling by the words around it, a tainted run, or fewer than two sides. A first side
/// that is a lone number right after a word (`Week 4 = 48 + 48 = 96`) is a label and is
/// dropped.
fn segments<'a>(line: &str, run: &'a Run) -> Option<Vec<&'a [Spanned]>> {
    if run.tainted {
        return None;
    }
    let mut segments: Vec<&[Spanned]> = run
        .tokens
        .split(|spanned| spanned.token == Token::Equals)
        .collect();
    while segments.first().is_some_and(|segment| segment.is_empty()) {
        segments.remove(0);
    }
    while segments.last().is_some_and(|segment| segment.is_empty()) {
        segments.pop();
    }
    if segments.len() < 2 || segments.iter().any(|segment| segment.is_empty()) {
        return None;
    }
    let first = trim_unbalanced(segments[0], true);
    let dangling = match first.first().map(|spanned| &spanned.token) {
        Some(Token::Minus) => line[first[0].end..].starts_with(char::is_whitespace),
        Some(Token::Number(_) | Token::Open) => false,
        _ => true,
    };
    let last_index = segments.len() - 1;
    let last = trim_unbalanced(segments[last_index], false);
    let trailing = last
        .last()
        .is_none_or(|spanned| !ends_operand(&spanned.token));
    if dangling || trailing {
        return None;
    }
    segments[0] = first;
    segments[last_index] = last;
    let labelled = matches!(
        first,
        [Spanned {
            token: Token::Number(_),
            ..
        }]
    ) && line[..first[0].start]
        .trim_end()
        .ends_with(char::is_alphabetic);
    if labelled {
        segments.remove(0);
    }
    (segments.len() >= 2).then_some(segments)
}

/// Drops an unmatched `(` at the start (or `)` at the end) of a side.
fn trim_unbalanced(side: &[Spanned], at_start: bool) -> &[Spanned] {
    let depth: i64 = side
        .iter()
        .map(|spanned| match spanned.token {
            Token::Open => 1,
            Token::Close => -1,
            _ => 0,
        })
        .sum();
    match (side.first(), side.last()) {
        (Some(first), _) if at_start && depth > 0 && first.token == Token::Open => &side[1..],
        (_, Some(last)) if !at_start && depth < 0 && last.token == Token::Close => {
            &side[..side.len() - 1]
        }
        _ => side,
    }
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
