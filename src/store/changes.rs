//! Change stamps: counters of what was written to a store since it was opened, so a process
//! that shows the store (another TUI, another client of the same server) notices new
//! trajectories, labels, tasks, runs and metrics rows by comparing two stamps.

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};

/// The part of the store a request writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writes {
    /// A read.
    Nothing,
    /// Trajectories stored, replaced or removed.
    Trajectories,
    /// Labels changed.
    Labels,
    /// Tasks stored.
    Tasks,
    /// A run record stored.
    Runs,
    /// Metrics rows stored or removed.
    Metrics,
}

/// What had been written when the stamp was taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeStamp {
    /// Names the store opening the counters belong to (a restarted server starts anew).
    pub epoch: u64,
    /// Writes of trajectories (stored, replaced, removed).
    pub trajectories: u64,
    /// Label changes.
    pub labels: u64,
    /// Task writes.
    pub tasks: u64,
    /// Run record writes.
    pub runs: u64,
    /// Metrics row writes.
    pub metrics: u64,
}

impl ChangeStamp {
    /// What changed from `earlier` to this stamp (everything when the epoch differs).
    pub fn since(&self, earlier: &ChangeStamp) -> Changed {
        let fresh = self.epoch != earlier.epoch;
        Changed {
            trajectories: fresh || self.trajectories != earlier.trajectories,
            labels: fresh || self.labels != earlier.labels,
            tasks: fresh || self.tasks != earlier.tasks,
            runs: fresh || self.runs != earlier.runs,
            metrics: fresh || self.metrics != earlier.metrics,
        }
    }
}

/// Which parts of a store changed between two stamps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Changed {
    /// Trajectories.
    pub trajectories: bool,
    /// Labels.
    pub labels: bool,
    /// Tasks.
    pub tasks: bool,
    /// Run records.
    pub runs: bool,
    /// Metrics rows.
    pub metrics: bool,
}

impl Changed {
    /// Whether anything changed.
    pub fn any(&self) -> bool {
        self.trajectories || self.labels || self.tasks || self.runs || self.metrics
    }
}

/// The live counters of an open store.
#[derive(Debug)]
pub(super) struct ChangeCounters {
    epoch: u64,
    counts: [AtomicU64; 5],
}

impl ChangeCounters {
    /// Counters for a store just opened.
    pub(super) fn new() -> Self {
        let epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos() as u64)
            ^ u64::from(std::process::id()) << 32;
        Self {
            epoch,
            counts: Default::default(),
        }
    }

    /// Counts a write.
    pub(super) fn bump(&self, writes: Writes) {
        let slot = match writes {
            Writes::Nothing => return,
            Writes::Trajectories => 0,
            Writes::Labels => 1,
            Writes::Tasks => 2,
            Writes::Runs => 3,
            Writes::Metrics => 4,
        };
        self.counts[slot].fetch_add(1, Ordering::SeqCst);
    }

    /// The stamp now.
    pub(super) fn stamp(&self) -> ChangeStamp {
        let count = |slot: usize| self.counts[slot].load(Ordering::SeqCst);
        ChangeStamp {
            epoch: self.epoch,
            trajectories: count(0),
            labels: count(1),
            tasks: count(2),
            runs: count(3),
            metrics: count(4),
        }
    }
}
