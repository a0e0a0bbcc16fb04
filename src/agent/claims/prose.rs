//! Equations written in prose: runs of arithmetic between words, split at `=`, kept only
//! when they read as whole claims.

use super::{Claim, ClaimOrigin, Side, Verdict, judge};
use crate::agent::arith::{Spanned, Token, token_at};

/// Claims written in one line of prose.
pub fn claims(line: &str) -> Vec<Claim> {
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

/// Whether byte `pos` follows a lone `x` (as in `60 students x 2/3`, where the left
/// operand is behind a word).
fn after_word_x(line: &str, pos: usize) -> bool {
    let head = line[..pos].trim_end();
    head.strip_suffix(['x', 'X'])
        .is_some_and(|rest| !rest.ends_with(|c: char| c.is_alphanumeric()))
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
                if current.tokens.is_empty() && (is_clock(line, pos) || after_word_x(line, pos)) {
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
