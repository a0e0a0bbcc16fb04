//! Where model work runs: on rayon's global pool, whose threads the parallel ops inside it
//! share (gemm, the fused kernels, the fused AdamW).

use std::sync::{Mutex, PoisonError};

/// Runs `work` on the first thread of rayon's global pool and returns what it returns; in
/// place when the caller is a pool thread already. Each parallel op inside then starts on a
/// pool thread that takes its share, instead of being handed to the pool from outside while
/// the caller sleeps until a pool thread wakes it: a forward and backward hands over hundreds
/// of such ops, and the hand-overs cost a tenth of a training step of the embedded default's
/// shape on two cores. Always the same thread, so a step's large temporaries are freed into
/// and reused from one malloc arena (on whichever thread came first, every pool thread's
/// arena would keep a step's worth). Callers on several threads at once share that thread:
/// while it waits inside one caller's op it may run another caller's whole work, so one
/// caller's time can include the other's (nothing is lost and nothing deadlocks).
pub fn on_pool<R: Send>(work: impl FnOnce() -> R + Send) -> R {
    if rayon::current_thread_index().is_some() {
        return work();
    }
    let work = Mutex::new(Some(work));
    let mut results = rayon::broadcast(|context| {
        let first = context.index() == 0;
        let work = first.then(|| work.lock().unwrap_or_else(PoisonError::into_inner).take());
        work.flatten().map(|work| work())
    });
    results
        .swap_remove(0)
        .expect("the pool's first thread runs the work")
}

#[cfg(test)]
mod tests {
    use super::on_pool;

    #[test]
    fn work_runs_on_the_pools_first_thread_and_returns_its_result() {
        assert!(rayon::current_thread_index().is_none());
        for _ in 0..8 {
            let (index, sum) = on_pool(|| (rayon::current_thread_index(), (1..=10).sum::<u32>()));
            assert_eq!(index, Some(0));
            assert_eq!(sum, 55);
        }
        let nested = on_pool(|| on_pool(rayon::current_thread_index));
        assert_eq!(nested, Some(0));
    }
}
