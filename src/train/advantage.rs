//! Group-relative advantages: each sample's reward against its GRPO siblings.

pub use crate::trajectory::AdvantageScale;

/// The advantages of one group's rewards, and whether the group carried any signal.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupAdvantages {
    /// One advantage per sample, in the order of the rewards.
    pub advantages: Vec<f64>,
    /// The group's mean reward.
    pub mean: f64,
    /// The group's reward standard deviation (as the scale names it; unbiased for `None`).
    pub std: f64,
    /// Whether all rewards were equal: no learning signal (`frac_reward_zero_std`).
    pub zero_std: bool,
}

/// Computes the advantages of a group of rewards.
pub fn group_advantages(rewards: &[f64], scale: AdvantageScale, epsilon: f64) -> GroupAdvantages {
    let n = rewards.len() as f64;
    if rewards.is_empty() {
        return GroupAdvantages {
            advantages: Vec::new(),
            mean: 0.0,
            std: 0.0,
            zero_std: true,
        };
    }
    let mean = rewards.iter().sum::<f64>() / n;
    let squares: f64 = rewards.iter().map(|reward| (reward - mean).powi(2)).sum();
    let std = match scale {
        AdvantageScale::Biased => (squares / n).sqrt(),
        AdvantageScale::Unbiased | AdvantageScale::None => {
            if rewards.len() > 1 {
                (squares / (n - 1.0)).sqrt()
            } else {
                0.0
            }
        }
    };
    let zero_std = rewards
        .iter()
        .all(|reward| (reward - rewards[0]).abs() < 1e-12);
    let advantages = rewards
        .iter()
        .map(|reward| match scale {
            AdvantageScale::None => reward - mean,
            _ => (reward - mean) / (std + epsilon),
        })
        .collect();
    GroupAdvantages {
        advantages,
        mean,
        std,
        zero_std,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unbiased_std_as_trl_computes_it() {
        let group = group_advantages(&[1.0, 0.0, 0.5, 0.0], AdvantageScale::Unbiased, 1e-4);
        let mean = 0.375f64;
        let std = ((0.625f64.powi(2) + 2.0 * 0.375f64.powi(2) + 0.125f64.powi(2)) / 3.0).sqrt();
        assert!((group.mean - mean).abs() < 1e-12);
        assert!((group.std - std).abs() < 1e-12);
        assert!((group.advantages[0] - 0.625 / (std + 1e-4)).abs() < 1e-12);
        assert!(!group.zero_std);
    }

    #[test]
    fn equal_rewards_carry_no_signal() {
        let group = group_advantages(&[1.0; 4], AdvantageScale::Unbiased, 1e-4);
        assert!(group.zero_std);
        assert!(group.advantages.iter().all(|a| *a == 0.0));
        let dr = group_advantages(&[1.0, 0.0], AdvantageScale::None, 1e-4);
        assert_eq!(dr.advantages, vec![0.5, -0.5]);
    }
}
