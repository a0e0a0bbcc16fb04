//! Writing exact values for people and models: an integer, a decimal when it terminates,
//! else a fraction with a decimal approximation.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};

/// The most decimal places a terminating decimal is written with before it is shown as a
/// fraction instead.
const MAX_DECIMAL_PLACES: usize = 30;
/// Significant digits of the approximation shown next to a fraction.
const APPROXIMATION_DIGITS: usize = 10;

/// `42`, `0.3`, `-1.25`, or `2/3 (≈ 0.6666666667)`.
pub fn display(value: &BigRational) -> String {
    match terminating(value) {
        Some(text) => text,
        None => format!("{value} (≈ {})", approximate(value)),
    }
}

/// `42`, `0.3`, `-1.25`, or `2/3`: exact, without an approximation.
pub fn exact_text(value: &BigRational) -> String {
    terminating(value).unwrap_or_else(|| value.to_string())
}

/// The value as an integer or a decimal, when it has a short exact one.
fn terminating(value: &BigRational) -> Option<String> {
    if value.is_integer() {
        return Some(value.numer().to_string());
    }
    decimal_places(value.denom())
        .filter(|&places| places <= MAX_DECIMAL_PLACES)
        .map(|places| fixed(value, places))
}

/// The number of decimal places of `1/denominator` when it terminates (only 2s and 5s).
fn decimal_places(denominator: &BigInt) -> Option<usize> {
    let mut rest = denominator.clone();
    let mut twos = 0;
    let mut fives = 0;
    let (two, five) = (BigInt::from(2), BigInt::from(5));
    while (&rest % &two).is_zero() {
        rest /= &two;
        twos += 1;
    }
    while (&rest % &five).is_zero() {
        rest /= &five;
        fives += 1;
    }
    rest.is_one().then_some(twos.max(fives))
}

/// The value rounded (half away from zero) to `places` decimals, written out in full.
pub fn fixed(value: &BigRational, places: usize) -> String {
    let scale = num_traits::pow(BigInt::from(10), places);
    let scaled = (value * BigRational::from_integer(scale))
        .round()
        .to_integer();
    let digits = scaled.abs().to_string();
    let sign = if scaled.is_negative() { "-" } else { "" };
    if places == 0 {
        return format!("{sign}{digits}");
    }
    let padded = format!("{digits:0>width$}", width = places + 1);
    let (integer, fraction) = padded.split_at(padded.len() - places);
    format!("{sign}{integer}.{fraction}")
}

/// About ten significant digits: plain for everyday magnitudes, scientific otherwise.
pub fn approximate(value: &BigRational) -> String {
    if value.is_zero() {
        return "0".into();
    }
    let exponent = decimal_exponent(value);
    if (-5..15).contains(&exponent) {
        let places = usize::try_from(APPROXIMATION_DIGITS as i64 - 1 - exponent).unwrap_or(0);
        return trim_zeros(fixed(value, places));
    }
    let shift = num_traits::pow(BigInt::from(10), exponent.unsigned_abs() as usize);
    let mantissa = if exponent >= 0 {
        value / BigRational::from_integer(shift)
    } else {
        value * BigRational::from_integer(shift)
    };
    format!(
        "{}e{exponent}",
        trim_zeros(fixed(&mantissa, APPROXIMATION_DIGITS - 1))
    )
}

/// `floor(log10(|value|))` for a nonzero value.
fn decimal_exponent(value: &BigRational) -> i64 {
    let digits = |n: &BigInt| n.abs().to_string().len() as i64;
    let guess = digits(value.numer()) - digits(value.denom());
    let power = num_traits::pow(BigInt::from(10), guess.unsigned_abs() as usize);
    let bound = if guess >= 0 {
        BigRational::from_integer(power)
    } else {
        BigRational::new(BigInt::one(), power)
    };
    if value.abs() < bound {
        guess - 1
    } else {
        guess
    }
}

fn trim_zeros(text: String) -> String {
    if !text.contains('.') {
        return text;
    }
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ratio(n: i64, d: i64) -> BigRational {
        BigRational::new(n.into(), d.into())
    }

    #[test]
    fn integers_decimals_and_fractions() {
        assert_eq!(display(&ratio(42, 1)), "42");
        assert_eq!(display(&ratio(3, 10)), "0.3");
        assert_eq!(display(&ratio(-5, 4)), "-1.25");
        assert_eq!(display(&ratio(1, 80)), "0.0125");
        assert_eq!(display(&ratio(2, 3)), "2/3 (≈ 0.6666666667)");
        assert_eq!(display(&ratio(-1, 3)), "-1/3 (≈ -0.3333333333)");
    }

    #[test]
    fn approximations_switch_to_scientific_far_from_one() {
        assert_eq!(approximate(&ratio(1, 3_000_000)), "3.333333333e-7");
        assert_eq!(approximate(&ratio(100, 7)), "14.28571429");
        let big = BigRational::new(num_traits::pow(BigInt::from(10), 20), 3.into());
        assert_eq!(approximate(&big), "3.333333333e19");
    }
}
