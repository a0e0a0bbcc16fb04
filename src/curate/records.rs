//! Reading many trajectory records at once: decoding is split over the CPU's cores, results
//! come back in the order of the ids.

use crate::store::{Store, StoreError, StoreResult};
use crate::trajectory::{Trajectory, TrajectoryId};
use std::num::NonZeroUsize;

/// Below this many records one thread reads them all.
const PARALLEL_FROM: usize = 256;

/// Threads used for decoding: the cores available, at most 8.
pub fn decode_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, NonZeroUsize::get)
        .min(8)
}

/// Reads each trajectory (with its token trace when `with_trace`) and maps it; the results
/// are in the order of `ids`. A missing trajectory is an error naming it.
pub fn map_records<R: Send>(
    store: &Store,
    ids: &[TrajectoryId],
    with_trace: bool,
    map: impl Fn(Trajectory) -> R + Sync,
) -> StoreResult<Vec<R>> {
    let read = |id: TrajectoryId| -> StoreResult<R> {
        let found = if with_trace {
            store.get(id)?
        } else {
            store.get_without_trace(id)?
        };
        found
            .map(&map)
            .ok_or_else(|| StoreError::NotFound(id.to_string()))
    };
    let threads = decode_threads();
    if ids.len() < PARALLEL_FROM || threads == 1 {
        return ids.iter().map(|&id| read(id)).collect();
    }
    let chunk = ids.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let workers: Vec<_> = ids
            .chunks(chunk)
            .map(|part| {
                let read = &read;
                scope.spawn(move || {
                    part.iter()
                        .map(|&id| read(id))
                        .collect::<StoreResult<Vec<R>>>()
                })
            })
            .collect();
        let mut results = Vec::with_capacity(ids.len());
        for worker in workers {
            let part = worker.join().map_err(|_| {
                StoreError::Invalid("a thread decoding trajectories panicked".into())
            })??;
            results.extend(part);
        }
        Ok(results)
    })
}
