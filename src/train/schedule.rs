//! Learning-rate schedules.

pub use crate::trajectory::LrSchedule;

impl Default for LrSchedule {
    fn default() -> Self {
        Self::Constant {}
    }
}

impl LrSchedule {
    /// Warmup over 10% of `total_steps`, then linear decay.
    pub fn warmup_then_decay(total_steps: u64) -> Self {
        Self::WarmupLinear {
            warmup_steps: default_warmup(total_steps),
            total_steps,
        }
    }

    /// The rate of optimizer step `step` (0-based) for base rate `base`.
    pub fn rate(&self, base: f64, step: u64) -> f64 {
        match *self {
            Self::Constant {} => base,
            Self::WarmupLinear {
                warmup_steps,
                total_steps,
            } => warmup_linear(base, step, warmup_steps, total_steps),
        }
    }
}

/// Linear warmup over the first `warmup` steps, then linear decay to zero at `total`.
pub fn warmup_linear(base: f64, step: u64, warmup: u64, total: u64) -> f64 {
    if warmup > 0 && step < warmup {
        return base * (step + 1) as f64 / warmup as f64;
    }
    let remaining = total.saturating_sub(step) as f64;
    let span = total.saturating_sub(warmup).max(1) as f64;
    base * (remaining / span).clamp(0.0, 1.0)
}

/// Warmup steps for a run: 10% of its steps, at least one when it has any.
pub fn default_warmup(total: u64) -> u64 {
    if total == 0 { 0 } else { (total / 10).max(1) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rises_then_falls_to_zero() {
        let lr: Vec<f64> = (0..10)
            .map(|step| warmup_linear(1.0, step, 2, 10))
            .collect();
        assert_eq!(lr[0], 0.5);
        assert_eq!(lr[1], 1.0);
        assert_eq!(lr[2], 1.0);
        assert!(lr.windows(2).skip(2).all(|w| w[1] < w[0]));
        assert_eq!(warmup_linear(1.0, 10, 2, 10), 0.0);
        assert_eq!(default_warmup(200), 20);
        let schedule = LrSchedule::warmup_then_decay(10);
        assert_eq!(schedule.rate(1.0, 0), 1.0);
        assert_eq!(schedule.rate(1.0, 5), warmup_linear(1.0, 5, 1, 10));
        assert_eq!(LrSchedule::Constant {}.rate(0.5, 99), 0.5);
    }
}
