//! Tokens of arithmetic as people and models write it: `1,234.5`, `$12`, `15%`, `20% of 50`,
//! `3 x 4`, `×`, `÷`, `−`, `\times`, `**`.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Zero};

/// The longest number literal read, in characters: longer ones are refused before any
/// big-integer arithmetic runs on them.
const MAX_LITERAL_CHARS: usize = 400;

/// A number as written: its exact value and how it was written.
#[derive(Clone, Debug, PartialEq)]
pub struct Literal {
    /// The exact value (a `$` prefix and thousands separators are dropped).
    pub value: BigRational,
    /// Digits after the decimal point, as written (`2.50` has 2).
    pub decimals: u32,
    /// Whether `...` or `…` followed it, i.e. it was written truncated.
    pub truncated: bool,
}

/// One token of an arithmetic expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Token {
    /// A number literal.
    Number(Literal),
    /// `+`.
    Plus,
    /// `-`, `−`, or `–` (an en dash, as prose writes minus).
    Minus,
    /// `*`, `×`, `·`, `⋅`, `\times`, `\cdot`, or `x` between two numbers.
    Times,
    /// `/`, `÷`, `\div`.
    Divide,
    /// `//`: division rounded down, as Python writes it (GSM8K's annotations were
    /// computed by Python).
    FloorDivide,
    /// `^` or `**`.
    Power,
    /// `%` after a number or a parenthesis.
    Percent,
    /// `of` after a percentage: `20% of 50`.
    Of,
    /// `(`.
    Open,
    /// `)`.
    Close,
    /// `=`.
    Equals,
}

impl Token {
    /// Whether the token can end an operand (so a following `x` or `%` applies to it).
    fn ends_operand(&self) -> bool {
        matches!(self, Self::Number(_) | Self::Close | Self::Percent)
    }
}

/// A token with its byte range in the text.
#[derive(Clone, Debug, PartialEq)]
pub struct Spanned {
    /// The token.
    pub token: Token,
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

/// Reads the token at byte `pos` of `text`, given the previous token; `None` when nothing
/// arithmetic starts there. `pos` must not be at whitespace.
pub fn token_at(text: &str, pos: usize, previous: Option<&Token>) -> Option<(Token, usize)> {
    let rest = &text[pos..];
    let after_operand = previous.is_some_and(Token::ends_operand);
    let single = |token: Token, len: usize| Some((token, pos + len));
    let first = rest.chars().next()?;
    match first {
        '+' => single(Token::Plus, 1),
        '-' | '−' | '–' => single(Token::Minus, first.len_utf8()),
        '*' if rest.starts_with("**") => single(Token::Power, 2),
        '*' | '×' | '·' | '⋅' => single(Token::Times, first.len_utf8()),
        '/' if rest.starts_with("//") => single(Token::FloorDivide, 2),
        '/' | '÷' => single(Token::Divide, first.len_utf8()),
        '^' => single(Token::Power, 1),
        '%' if after_operand => single(Token::Percent, 1),
        '(' => single(Token::Open, 1),
        ')' => single(Token::Close, 1),
        '=' if !rest.starts_with("==") => single(Token::Equals, 1),
        '\\' => latex_operator(rest).map(|(token, len)| (token, pos + len)),
        'x' | 'X' if after_operand && starts_operand(rest[1..].trim_start()) => {
            let word_ends = !rest[1..].starts_with(|c: char| c.is_alphanumeric());
            word_ends.then_some((Token::Times, pos + 1))
        }
        'o' if matches!(previous, Some(Token::Percent)) && is_word(rest, "of") => {
            single(Token::Of, 2)
        }
        '$' | '.' | '0'..='9' => {
            number(text, pos).map(|(literal, end)| (Token::Number(literal), end))
        }
        _ => None,
    }
}

fn is_word(rest: &str, word: &str) -> bool {
    rest.starts_with(word)
        && !rest[word.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
}

fn starts_operand(rest: &str) -> bool {
    rest.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '(' | '$' | '.'))
}

fn latex_operator(rest: &str) -> Option<(Token, usize)> {
    [
        ("\\times", Token::Times),
        ("\\cdot", Token::Times),
        ("\\div", Token::Divide),
    ]
    .into_iter()
    .find(|(name, _)| is_word(rest, name))
    .map(|(name, token)| (token, name.len()))
    .or_else(|| {
        // `\$` in LaTeX is a dollar sign: the number after it is the token.
        rest.strip_prefix("\\$")
            .filter(|tail| tail.starts_with(|c: char| c.is_ascii_digit() || c == '.'))
            .and_then(|_| number(rest, 1))
            .map(|(literal, end)| (Token::Number(literal), end))
    })
}

/// Reads a number literal at `pos`: an optional `$`, digits with optional `,` thousands
/// groups, an optional decimal part, and an optional `...` marking truncation.
pub fn number(text: &str, pos: usize) -> Option<(Literal, usize)> {
    let bytes = text.as_bytes();
    let mut index = pos;
    if bytes.get(index) == Some(&b'$') {
        index += 1;
    }
    let digits_from = |from: usize| {
        bytes[from.min(bytes.len())..]
            .iter()
            .take_while(|byte| byte.is_ascii_digit())
            .count()
    };
    let mut integer = String::new();
    let lead = digits_from(index);
    integer.push_str(&text[index..index + lead]);
    index += lead;
    if (1..=3).contains(&lead) {
        while bytes.get(index) == Some(&b',') && digits_from(index + 1) == 3 {
            integer.push_str(&text[index + 1..index + 4]);
            index += 4;
        }
    }
    let mut fraction = "";
    if bytes.get(index) == Some(&b'.') && digits_from(index + 1) > 0 {
        let count = digits_from(index + 1);
        fraction = &text[index + 1..index + 1 + count];
        index += 1 + count;
    }
    if integer.is_empty() && fraction.is_empty() {
        return None;
    }
    if integer.len() + fraction.len() > MAX_LITERAL_CHARS {
        return None;
    }
    let mut truncated = false;
    for ellipsis in ["...", "…"] {
        if text[index..].starts_with(ellipsis) {
            truncated = true;
            index += ellipsis.len();
        }
    }
    let digits: String = integer.chars().chain(fraction.chars()).collect();
    let numerator: BigInt = digits.parse().ok()?;
    let decimals = u32::try_from(fraction.len()).ok()?;
    let denominator = num_traits::pow(BigInt::from(10), fraction.len());
    let value = if numerator.is_zero() {
        BigRational::zero()
    } else {
        BigRational::new(numerator, denominator)
    };
    Some((
        Literal {
            value,
            decimals,
            truncated,
        },
        index,
    ))
}

/// The tolerance a literal allows when compared: half a unit in its last written decimal
/// place (a whole unit when written truncated); zero for integers written in full.
pub fn rounding_tolerance(literal: &Literal) -> BigRational {
    if literal.decimals == 0 && !literal.truncated {
        return BigRational::zero();
    }
    let unit = BigRational::new(
        BigInt::one(),
        num_traits::pow(BigInt::from(10), literal.decimals as usize),
    );
    if literal.truncated {
        unit
    } else {
        unit / BigInt::from(2)
    }
}

/// Tokenizes a whole expression; the error names the first character that is not arithmetic.
pub fn tokenize(text: &str) -> Result<Vec<Spanned>, (usize, char)> {
    let mut tokens: Vec<Spanned> = Vec::new();
    let mut pos = 0;
    while pos < text.len() {
        let Some(c) = text[pos..].chars().next() else {
            break;
        };
        if c.is_whitespace() {
            pos += c.len_utf8();
            continue;
        }
        let previous = tokens.last().map(|spanned| &spanned.token);
        match token_at(text, pos, previous) {
            Some((Token::Number(literal), end)) if literal.truncated => {
                return Err((end - 1, text[..end].chars().last().unwrap_or('.')));
            }
            Some((token, end)) => {
                tokens.push(Spanned {
                    token,
                    start: pos,
                    end,
                });
                pos = end;
            }
            None => return Err((pos, c)),
        }
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(text: &str) -> BigRational {
        match number(text, 0) {
            Some((literal, _)) => literal.value,
            None => panic!("{text} is not a number"),
        }
    }

    #[test]
    fn numbers_keep_their_exact_value() {
        let ratio = |n: i64, d: i64| BigRational::new(n.into(), d.into());
        assert_eq!(value("1,234,567"), ratio(1_234_567, 1));
        assert_eq!(value("$12.50"), ratio(25, 2));
        assert_eq!(value(".5"), ratio(1, 2));
        assert_eq!(value("1,23"), ratio(1, 1));
        assert_eq!(value("1234,567"), ratio(1234, 1));
    }

    #[test]
    fn x_multiplies_only_between_numbers() {
        let kinds = |text: &str| -> Vec<Token> {
            tokenize(text)
                .unwrap_or_default()
                .into_iter()
                .map(|spanned| spanned.token)
                .collect()
        };
        assert!(kinds("0.2 x 50").contains(&Token::Times));
        assert!(tokenize("x + 1").is_err());
        assert!(kinds("20% of 50").contains(&Token::Of));
        assert!(tokenize("1 == 1").is_err());
    }
}
