//! pass@k, the unbiased estimator of Chen et al. (2021): for a task with n samples of which
//! c pass, pass@k = 1 − C(n−c, k) / C(n, k), computed as a product to stay exact in floats.

/// pass@k of one task with `n` samples and `c` passes; `None` when `n < k` or `k == 0`.
pub fn pass_at_k(n: usize, c: usize, k: usize) -> Option<f64> {
    if k == 0 || n < k {
        return None;
    }
    if n - c.min(n) < k {
        return Some(1.0);
    }
    let product: f64 = ((n - c + 1)..=n)
        .map(|i| 1.0 - k as f64 / i as f64)
        .product();
    Some(1.0 - product)
}

/// The `k` values reported: 1, 2, 4, 8, … up to the most samples any task has.
pub fn reported_ks(most_samples: usize) -> Vec<usize> {
    std::iter::successors(Some(1usize), |k| k.checked_mul(2))
        .take_while(|&k| k <= most_samples.max(1))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_combinatorial_formula() {
        let choose =
            |n: u64, k: u64| -> f64 { (0..k).map(|i| (n - i) as f64 / (i + 1) as f64).product() };
        for (n, c, k) in [
            (8usize, 3usize, 1usize),
            (8, 3, 4),
            (10, 0, 2),
            (5, 5, 3),
            (6, 1, 6),
        ] {
            let expected = 1.0 - choose((n - c) as u64, k as u64) / choose(n as u64, k as u64);
            let got = pass_at_k(n, c, k).unwrap();
            assert!(
                (got - expected).abs() < 1e-12,
                "n={n} c={c} k={k}: {got} vs {expected}"
            );
        }
        assert_eq!(pass_at_k(3, 1, 4), None);
        assert_eq!(reported_ks(8), vec![1, 2, 4, 8]);
        assert_eq!(reported_ks(5), vec![1, 2, 4]);
    }
}
