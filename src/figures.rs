//! Numbers shown as they are: a fixed count of significant digits, never a fixed count of
//! decimals (which turns a KL of 9.6e-5 into `0.0000` and a reward of −0.11 into `-0`).

/// `value` with `digits` significant digits (at least 1): plain notation from 0.001 to
/// 99,999 (trailing zeros dropped: `1`, `0.05`, `-0.113`), scientific outside it (`9.6e-5`,
/// `1.2e6`); `0` for zero, and `NaN`, `inf`, `-inf` as such.
pub fn significant(value: f64, digits: usize) -> String {
    let digits = digits.max(1);
    if value == 0.0 {
        return "0".into();
    }
    if !value.is_finite() {
        return format!("{value}");
    }
    let magnitude = value.abs().log10().floor() as i32;
    if !(-3..5).contains(&magnitude) {
        let text = format!("{:.*e}", digits - 1, value);
        return match text.split_once('e') {
            Some((mantissa, exponent)) => format!("{}e{exponent}", trim_zeros(mantissa)),
            None => text,
        };
    }
    let decimals = (digits as i32 - 1 - magnitude).max(0) as usize;
    let text = trim_zeros(&format!("{value:.decimals$}")).to_string();
    if text == "-0" { "0".into() } else { text }
}

/// A decimal without trailing zeros after its point (and without a bare point).
fn trim_zeros(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::significant;

    #[test]
    fn numbers_keep_their_significant_digits() {
        let cases = [
            (0.0, "0"),
            (1.0, "1"),
            (-0.113, "-0.113"),
            (-0.15, "-0.15"),
            (0.05, "0.05"),
            (9.6e-5, "9.6e-5"),
            (0.001_234_5, "0.00123"),
            (42.0, "42"),
            (1234.5678, "1235"),
            (12.345_678, "12.3"),
            (123_456.0, "1.23e5"),
            (-2.5e-7, "-2.5e-7"),
            (f64::NAN, "NaN"),
        ];
        for (value, shown) in cases {
            assert_eq!(significant(value, 3), shown, "{value}");
        }
        assert_eq!(significant(0.999_96, 4), "1");
        assert_eq!(significant(99_999.9, 3), "100000");
    }
}
