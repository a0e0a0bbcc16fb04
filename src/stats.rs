//! Small statistics the reports share: a success rate with its Wilson score interval, and
//! the paired difference of two success rates on the same items.

use serde::Serialize;

/// The z value of a two-sided 95% interval.
const Z_95: f64 = 1.959_963_984_540_054;

/// Successes out of trials.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SuccessRate {
    /// Trials that succeeded.
    pub passed: usize,
    /// Trials in all.
    pub total: usize,
}

impl SuccessRate {
    /// The share that succeeded (0 when there were no trials).
    pub fn rate(self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.passed as f64 / self.total as f64
        }
    }

    /// The Wilson score interval at 95%: unlike the normal approximation it stays inside
    /// [0, 1] and is not empty at 0 or N successes. (0, 1) when there were no trials.
    pub fn wilson_95(self) -> (f64, f64) {
        if self.total == 0 {
            return (0.0, 1.0);
        }
        let n = self.total as f64;
        let p = self.rate();
        let z2 = Z_95 * Z_95;
        let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
        let half = Z_95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / (1.0 + z2 / n);
        ((centre - half).max(0.0), (centre + half).min(1.0))
    }

    /// `5/8 = 62.5% (95% CI 30.6–86.3%)`.
    pub fn describe(self) -> String {
        let (low, high) = self.wilson_95();
        format!(
            "{}/{} = {:.1}% (95% CI {:.1}–{:.1}%)",
            self.passed,
            self.total,
            100.0 * self.rate(),
            100.0 * low,
            100.0 * high
        )
    }
}

/// Two policies' verdicts on the same items (tasks), compared pair by pair: the
/// difference of their success rates with a 95% interval that uses the pairing (the
/// variance of the per-item differences, the normal approximation of Newcombe's method 10's
/// setting), far narrower than two independent intervals when most items agree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct PairedDifference {
    /// Items both were judged on.
    pub items: usize,
    /// Successes of the first.
    pub first: usize,
    /// Successes of the second.
    pub second: usize,
    /// Items only the first passed.
    pub only_first: usize,
    /// Items only the second passed.
    pub only_second: usize,
}

impl PairedDifference {
    /// Pairs verdicts by item; items only one side has are left out.
    pub fn of<'a>(
        first: impl IntoIterator<Item = (&'a str, bool)>,
        second: impl IntoIterator<Item = (&'a str, bool)>,
    ) -> Self {
        let first: std::collections::HashMap<&str, bool> = first.into_iter().collect();
        let mut pairs = Self::default();
        for (item, passed) in second {
            let Some(&before) = first.get(item) else {
                continue;
            };
            pairs.items += 1;
            pairs.first += usize::from(before);
            pairs.second += usize::from(passed);
            pairs.only_first += usize::from(before && !passed);
            pairs.only_second += usize::from(passed && !before);
        }
        pairs
    }

    /// Second's rate minus first's.
    pub fn difference(self) -> f64 {
        if self.items == 0 {
            return 0.0;
        }
        (self.only_second as f64 - self.only_first as f64) / self.items as f64
    }

    /// The 95% interval of the difference: ± z times the standard error of the mean
    /// per-item difference (each −1, 0 or +1).
    pub fn interval_95(self) -> (f64, f64) {
        if self.items < 2 {
            return (-1.0, 1.0);
        }
        let n = self.items as f64;
        let mean = self.difference();
        let squares = (self.only_first + self.only_second) as f64 / n;
        let variance = (squares - mean * mean) * n / (n - 1.0);
        let half = Z_95 * (variance.max(0.0) / n).sqrt();
        ((mean - half).max(-1.0), (mean + half).min(1.0))
    }

    /// Whether the interval leaves out zero.
    pub fn resolved(self) -> bool {
        let (low, high) = self.interval_95();
        low > 0.0 || high < 0.0
    }

    /// `+7.5 points (95% CI +3.9 to +11.1, 600 paired tasks; 12 lost, 57 gained)`.
    pub fn describe(self) -> String {
        let (low, high) = self.interval_95();
        format!(
            "{:+.1} points (95% CI {:+.1} to {:+.1}, {} paired; {} lost, {} gained)",
            100.0 * self.difference(),
            100.0 * low,
            100.0 * high,
            self.items,
            self.only_first,
            self.only_second
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paired_difference_counts_the_discordant_items() {
        let first = [
            ("a", true),
            ("b", false),
            ("c", false),
            ("d", true),
            ("x", true),
        ];
        let second = [
            ("a", true),
            ("b", true),
            ("c", true),
            ("d", false),
            ("y", false),
        ];
        let pairs = PairedDifference::of(first, second);
        assert_eq!((pairs.items, pairs.first, pairs.second), (4, 2, 3));
        assert_eq!((pairs.only_first, pairs.only_second), (1, 2));
        assert!((pairs.difference() - 0.25).abs() < 1e-12);
        // Per-item differences 0, +1, +1, −1: mean 0.25, sample variance 11/12.
        let half = Z_95 * (11.0_f64 / 12.0 / 4.0).sqrt();
        let (low, high) = pairs.interval_95();
        assert!(
            (low - (0.25 - half)).abs() < 1e-12 && (high - (0.25 + half).min(1.0)).abs() < 1e-12
        );
        assert!(!pairs.resolved());
        let many_gains: Vec<(String, bool)> =
            (0..400).map(|i| (i.to_string(), i % 10 == 0)).collect();
        let after: Vec<(String, bool)> = (0..400).map(|i| (i.to_string(), i % 10 < 3)).collect();
        let pairs = PairedDifference::of(
            many_gains.iter().map(|(k, v)| (k.as_str(), *v)),
            after.iter().map(|(k, v)| (k.as_str(), *v)),
        );
        assert_eq!((pairs.only_first, pairs.only_second), (0, 80));
        assert!(pairs.resolved());
        assert!(
            pairs.describe().starts_with("+20.0 points (95% CI +16"),
            "{}",
            pairs.describe()
        );
    }

    #[test]
    fn wilson_intervals_match_the_published_values() {
        // Newcombe (1998), table I: 81/263 gives 0.2553–0.3662 by the score method.
        let (low, high) = SuccessRate {
            passed: 81,
            total: 263,
        }
        .wilson_95();
        assert!(
            (low - 0.2553).abs() < 5e-5 && (high - 0.3662).abs() < 5e-5,
            "{low} {high}"
        );
        // 0 of 10: the interval starts at 0 and is not empty (Newcombe: 0–0.2775).
        let (low, high) = SuccessRate {
            passed: 0,
            total: 10,
        }
        .wilson_95();
        assert_eq!(low, 0.0);
        assert!((high - 0.2775).abs() < 5e-5, "{high}");
        let (low, high) = SuccessRate {
            passed: 10,
            total: 10,
        }
        .wilson_95();
        assert!(
            (low - 0.7225).abs() < 5e-5 && (high - 1.0).abs() < 1e-12,
            "{low} {high}"
        );
        assert_eq!(
            SuccessRate {
                passed: 5,
                total: 8
            }
            .describe(),
            "5/8 = 62.5% (95% CI 30.6–86.3%)"
        );
        assert_eq!(SuccessRate::default().wilson_95(), (0.0, 1.0));
    }
}
