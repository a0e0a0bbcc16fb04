//! Exact evaluation of token sequences by recursive descent, with caps on depth and size.
//!
//! Grammar, loosest binding first:
//! `sum = product (("+" | "-") product)*`, `product = unary (("*" | "/" | "//" | "of") unary)*`,
//! `unary = ("-" | "+") unary | power`, `power = postfix ("^" unary)?`,
//! `postfix = primary "%"*`, `primary = number | "(" sum ")"`. So `-2^2 = -4` and
//! `2^3^2 = 2^9`.

use super::ArithError;
use super::lexer::{Literal, Spanned, Token, rounding_tolerance};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};

/// The most bits a numerator or denominator may have (about 3,000 decimal digits).
pub const MAX_BITS: u64 = 10_000;
/// The deepest nesting of parentheses and unary operators.
const MAX_DEPTH: usize = 200;

/// What `%` means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PercentMode {
    /// `15%` is 0.15 (the calculator, and claims like `20% * 50 = 10`).
    Fraction,
    /// `%` is a unit and is ignored (claims like `0.8 * 100 = 80%`).
    Unit,
}

/// The value of an expression and what it was made of.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluated {
    /// The exact value.
    pub value: BigRational,
    /// Number of binary operators applied.
    pub operators: usize,
    /// Whether a `%` occurred.
    pub has_percent: bool,
    /// How far the written value may be from the exact one: nonzero only when the whole
    /// expression is one rounded or truncated literal (`3.33`, `33.3...%`).
    pub tolerance: BigRational,
}

/// Evaluates a whole token sequence.
pub fn evaluate(
    text: &str,
    tokens: &[Spanned],
    mode: PercentMode,
) -> Result<Evaluated, ArithError> {
    if tokens.is_empty() {
        return Err(ArithError::Empty);
    }
    let mut parser = Parser {
        text,
        tokens,
        next: 0,
        mode,
        operators: 0,
        has_percent: false,
    };
    let value = parser.sum(0)?;
    if let Some(extra) = tokens.get(parser.next) {
        return Err(ArithError::unexpected(text, extra.start));
    }
    let tolerance = single_literal(tokens)
        .map(|(literal, percent)| {
            let tolerance = rounding_tolerance(literal);
            if percent && mode == PercentMode::Fraction {
                tolerance / BigInt::from(100)
            } else {
                tolerance
            }
        })
        .unwrap_or_else(BigRational::zero);
    Ok(Evaluated {
        value,
        operators: parser.operators,
        has_percent: parser.has_percent,
        tolerance,
    })
}

/// The literal of a sequence that is one number, optionally signed and with `%`.
fn single_literal(tokens: &[Spanned]) -> Option<(&Literal, bool)> {
    let kinds: Vec<&Token> = tokens.iter().map(|spanned| &spanned.token).collect();
    let unsigned = match kinds.as_slice() {
        [Token::Minus | Token::Plus, rest @ ..] => rest,
        all => all,
    };
    match unsigned {
        [Token::Number(literal)] => Some((literal, false)),
        [Token::Number(literal), Token::Percent] => Some((literal, true)),
        _ => None,
    }
}

struct Parser<'a> {
    text: &'a str,
    tokens: &'a [Spanned],
    next: usize,
    mode: PercentMode,
    operators: usize,
    has_percent: bool,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.next).map(|spanned| &spanned.token)
    }

    fn position(&self) -> usize {
        self.tokens.get(self.next).map_or_else(
            || self.tokens.last().map_or(0, |last| last.end),
            |t| t.start,
        )
    }

    fn sum(&mut self, depth: usize) -> Result<BigRational, ArithError> {
        let mut value = self.product(depth)?;
        while let Some(token @ (Token::Plus | Token::Minus)) = self.peek() {
            let add = *token == Token::Plus;
            self.next += 1;
            let right = self.product(depth)?;
            self.operators += 1;
            value = checked(if add { value + right } else { value - right })?;
        }
        Ok(value)
    }

    fn product(&mut self, depth: usize) -> Result<BigRational, ArithError> {
        let mut value = self.unary(depth)?;
        while let Some(token @ (Token::Times | Token::Divide | Token::FloorDivide | Token::Of)) =
            self.peek()
        {
            let operator = token.clone();
            self.next += 1;
            let right = self.unary(depth)?;
            self.operators += 1;
            if matches!(operator, Token::Divide | Token::FloorDivide) && right.is_zero() {
                return Err(ArithError::DivisionByZero);
            }
            value = match operator {
                Token::Divide => checked(value / right)?,
                Token::FloorDivide => checked((value / right).floor())?,
                _ => checked(value * right)?,
            };
        }
        Ok(value)
    }

    fn unary(&mut self, depth: usize) -> Result<BigRational, ArithError> {
        if depth > MAX_DEPTH {
            return Err(ArithError::TooDeep);
        }
        match self.peek() {
            Some(Token::Minus) => {
                self.next += 1;
                Ok(-self.unary(depth + 1)?)
            }
            Some(Token::Plus) => {
                self.next += 1;
                self.unary(depth + 1)
            }
            _ => self.power(depth),
        }
    }

    fn power(&mut self, depth: usize) -> Result<BigRational, ArithError> {
        let base = self.postfix(depth)?;
        if self.peek() != Some(&Token::Power) {
            return Ok(base);
        }
        self.next += 1;
        let exponent = self.unary(depth + 1)?;
        self.operators += 1;
        raise(&base, &exponent)
    }

    fn postfix(&mut self, depth: usize) -> Result<BigRational, ArithError> {
        let mut value = self.primary(depth)?;
        while self.peek() == Some(&Token::Percent) {
            self.next += 1;
            self.has_percent = true;
            if self.mode == PercentMode::Fraction {
                value /= BigInt::from(100);
            }
        }
        Ok(value)
    }

    fn primary(&mut self, depth: usize) -> Result<BigRational, ArithError> {
        let at = self.position();
        match self.peek() {
            Some(Token::Number(literal)) => {
                let value = literal.value.clone();
                self.next += 1;
                Ok(value)
            }
            Some(Token::Open) => {
                self.next += 1;
                let value = self.sum(depth + 1)?;
                if self.peek() != Some(&Token::Close) {
                    return Err(ArithError::Unclosed {
                        column: ArithError::column(self.text, at),
                    });
                }
                self.next += 1;
                Ok(value)
            }
            Some(_) => Err(ArithError::unexpected(self.text, at)),
            None => Err(ArithError::UnexpectedEnd),
        }
    }
}

/// `base ^ exponent` for an integer exponent, refused when the result would be too large.
fn raise(base: &BigRational, exponent: &BigRational) -> Result<BigRational, ArithError> {
    if !exponent.is_integer() {
        return Err(ArithError::FractionalExponent);
    }
    if base.is_zero() && exponent.is_negative() {
        return Err(ArithError::DivisionByZero);
    }
    if base.is_zero() {
        return Ok(if exponent.is_zero() {
            BigRational::one()
        } else {
            BigRational::zero()
        });
    }
    if base.abs().is_one() {
        let even = (exponent.to_integer() % BigInt::from(2)).is_zero();
        return Ok(if base.is_negative() && !even {
            -BigRational::one()
        } else {
            BigRational::one()
        });
    }
    let power = exponent
        .to_integer()
        .abs()
        .to_u64()
        .filter(|&power| power <= MAX_BITS)
        .ok_or(ArithError::TooLarge)?;
    let bits = base.numer().bits().max(base.denom().bits());
    if bits.saturating_sub(1).saturating_mul(power) > MAX_BITS {
        return Err(ArithError::TooLarge);
    }
    let magnitude = num_traits::pow(base.clone(), power as usize);
    checked(if exponent.is_negative() {
        magnitude.recip()
    } else {
        magnitude
    })
}

/// The value, or `TooLarge` when its numerator or denominator exceeds the cap.
fn checked(value: BigRational) -> Result<BigRational, ArithError> {
    if value.numer().bits() > MAX_BITS || value.denom().bits() > MAX_BITS {
        Err(ArithError::TooLarge)
    } else {
        Ok(value)
    }
}
