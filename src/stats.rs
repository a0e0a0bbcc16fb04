//! Small statistics the reports share: a success rate with its Wilson score interval.

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

#[cfg(test)]
mod tests {
    use super::*;

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
