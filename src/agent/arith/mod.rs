//! Exact rational arithmetic on expressions as people write them, shared by the calculator,
//! answer extraction and the rule-based process scorer: no floating point anywhere, so
//! `0.1 + 0.2 = 0.3` holds.

mod format;
mod lexer;
mod parser;

pub use format::{approximate, display, exact_text, fixed};
pub use lexer::{Literal, Spanned, Token, number, token_at, tokenize};
pub use parser::{Evaluated, MAX_BITS, PercentMode, evaluate};

use num_rational::BigRational;

/// The longest expression accepted, in bytes.
pub const MAX_EXPRESSION_BYTES: usize = 10_000;

/// Why an expression has no value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArithError {
    /// Nothing to evaluate.
    #[error("the expression is empty")]
    Empty,
    /// The expression is longer than `MAX_EXPRESSION_BYTES`.
    #[error("the expression is longer than {MAX_EXPRESSION_BYTES} characters")]
    TooLong,
    /// A character that is not part of arithmetic.
    #[error(
        "`{found}` at character {column} is not arithmetic (use numbers, + - * / ^, %, parentheses)"
    )]
    NotArithmetic {
        /// 1-based character position.
        column: usize,
        /// The character.
        found: char,
    },
    /// A token where it cannot stand.
    #[error("unexpected `{found}` at character {column}")]
    Unexpected {
        /// 1-based character position.
        column: usize,
        /// The text of the token.
        found: String,
    },
    /// The expression stops where an operand is needed.
    #[error("the expression ends where a number is needed")]
    UnexpectedEnd,
    /// A `(` without its `)`.
    #[error("the `(` at character {column} is never closed")]
    Unclosed {
        /// 1-based character position of the `(`.
        column: usize,
    },
    /// Division (or a negative power) of zero.
    #[error("division by zero")]
    DivisionByZero,
    /// `2^0.5` and the like.
    #[error("exponents must be whole numbers")]
    FractionalExponent,
    /// A result whose numerator or denominator would exceed `MAX_BITS`.
    #[error("the result is too large (more than about 3,000 digits)")]
    TooLarge,
    /// Nesting deeper than the evaluator allows.
    #[error("the expression is nested too deeply")]
    TooDeep,
}

impl ArithError {
    /// The 1-based character position of byte `at`.
    pub fn column(text: &str, at: usize) -> usize {
        text.get(..at).map_or(at, |head| head.chars().count()) + 1
    }

    /// An `Unexpected` error for the token that starts at byte `at`.
    pub fn unexpected(text: &str, at: usize) -> Self {
        let found = text
            .get(at..)
            .unwrap_or("")
            .split_whitespace()
            .next()
            .unwrap_or("")
            .chars()
            .take(12)
            .collect();
        Self::Unexpected {
            column: Self::column(text, at),
            found,
        }
    }
}

/// Evaluates a whole expression exactly.
pub fn evaluate_expression(text: &str, mode: PercentMode) -> Result<Evaluated, ArithError> {
    if text.len() > MAX_EXPRESSION_BYTES {
        return Err(ArithError::TooLong);
    }
    let tokens = tokenize(text).map_err(|(at, found)| ArithError::NotArithmetic {
        column: ArithError::column(text, at),
        found,
    })?;
    evaluate(text, &tokens, mode)
}

/// The value of a plain number as written (`1,234.5`, `$3`, `.5`, `-2`), nothing else.
pub fn parse_number(text: &str) -> Option<BigRational> {
    let text = text.trim();
    let (negative, unsigned) = match text.strip_prefix(['-', '−']) {
        Some(rest) => (true, rest.trim_start()),
        None => (false, text),
    };
    let (literal, end) = number(unsigned, 0)?;
    if end != unsigned.len() || literal.truncated {
        return None;
    }
    Some(if negative {
        -literal.value
    } else {
        literal.value
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(text: &str) -> String {
        match evaluate_expression(text, PercentMode::Fraction) {
            Ok(evaluated) => display(&evaluated.value),
            Err(error) => format!("error: {error}"),
        }
    }

    #[test]
    fn everyday_arithmetic_is_exact() {
        assert_eq!(value("0.1+0.2"), "0.3");
        assert_eq!(value("-2^2"), "-4");
        assert_eq!(value("2^3^2"), "512");
        assert_eq!(value("2^-2"), "0.25");
        assert_eq!(value("(-1)^3"), "-1");
        assert_eq!(value("15%"), "0.15");
        assert_eq!(value("20% of 50"), "10");
        assert_eq!(value("3 × 4 ÷ 6 − 1"), "1");
        assert_eq!(value("1,000 * 1.5"), "1500");
        assert_eq!(value("10/3"), "10/3 (≈ 3.333333333)");
    }

    #[test]
    fn errors_say_what_is_wrong() {
        assert_eq!(value("1/0"), "error: division by zero");
        assert_eq!(value("0^-1"), "error: division by zero");
        assert_eq!(value("2^0.5"), "error: exponents must be whole numbers");
        assert!(value("10^100000").contains("too large"));
        assert!(value("(1+2").contains("never closed"));
        assert!(value("1 + a").contains("`a` at character 5"));
        assert!(value("1 +").contains("ends where a number"));
        assert!(value(&"(".repeat(5000)).contains("nested too deeply"));
    }

    #[test]
    fn plain_numbers_parse_whole() {
        assert_eq!(
            parse_number("-1,234.5"),
            Some(BigRational::new((-12345).into(), 10.into()))
        );
        assert_eq!(parse_number("12 apples"), None);
    }
}
