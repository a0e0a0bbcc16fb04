//! Where model work runs: on rayon's global pool, whose threads the parallel ops inside it
//! share (gemm, the fused kernels, the fused AdamW).

/// Runs `work` on a thread of rayon's global pool and returns what it returns; in place when
/// the caller is one already. Each parallel op inside then starts on a pool thread that takes
/// its share, instead of being handed to the pool from outside while the caller sleeps until
/// a pool thread wakes it: a forward and backward hands over hundreds of such ops, and the
/// hand-overs cost a tenth of a training step of the embedded default's shape on two cores.
pub fn on_pool<R: Send>(work: impl FnOnce() -> R + Send) -> R {
    rayon::scope(|_| work())
}

#[cfg(test)]
mod tests {
    use super::on_pool;

    #[test]
    fn work_runs_on_a_pool_thread_and_returns_its_result() {
        assert!(rayon::current_thread_index().is_none());
        let (index, sum) = on_pool(|| (rayon::current_thread_index(), (1..=10).sum::<u32>()));
        assert!(index.is_some());
        assert_eq!(sum, 55);
        let nested = on_pool(|| on_pool(rayon::current_thread_index));
        assert!(nested.is_some());
    }
}
