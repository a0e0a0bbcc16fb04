//! glibc malloc's tuning for the whole process, set by the binary at start-up, and the
//! call that hands its free memory back after a burst of allocations.
//!
//! - Training: glibc serves blocks above a threshold with fresh `mmap`s and trims the heap
//!   top when it frees them, so every large temporary of a training step (activations,
//!   gradients: megabytes each) costs the kernel a page fault per 4 KiB on first touch.
//!   Raising both thresholds keeps freed blocks in the heap for reuse.
//! - Threads: past a handful of arenas glibc makes new threads share existing ones, so an
//!   import's writer could share the parser's arena and the two allocate behind one lock
//!   (half the import speed, at random). A higher arena limit gives each thread its own.

/// Tunes glibc's malloc as above (on Linux with glibc; elsewhere nothing). Call once at
/// start-up, before threads are spawned.
pub fn tune_malloc() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        /// glibc's largest accepted mmap threshold on 64-bit targets (32 MiB).
        const MMAP_THRESHOLD: libc::c_int = 32 << 20;
        /// Free memory kept at the top of the heap before it is returned (1 GiB).
        const TRIM_THRESHOLD: libc::c_int = 1 << 30;
        /// Extra memory requested whenever the heap grows (64 MiB).
        const TOP_PAD: libc::c_int = 64 << 20;
        /// Arenas at most: more than this program's threads, so none shares one.
        const ARENA_MAX: libc::c_int = 64;
        // SAFETY: mallopt only changes malloc's tuning parameters; it is called before the
        // process allocates concurrently.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
            libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
            libc::mallopt(libc::M_TOP_PAD, TOP_PAD);
            libc::mallopt(libc::M_ARENA_MAX, ARENA_MAX);
        }
    }
}

/// Hands the memory malloc holds free back to the kernel (glibc's `malloc_trim`; elsewhere
/// nothing). Each thread frees into its own arena and the trim threshold above keeps freed
/// blocks, so after a burst such as a large import the process would otherwise keep its
/// peak: memory freed in the writer's arena cannot serve another thread's allocations.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of malloc's arenas to the kernel; it
    // takes each arena's lock and may run while other threads allocate.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Hands free memory back at most once per `every` while a long job allocates and frees in
/// bursts (a search index build: the store's records, tantivy's segments and merges), so
/// the process's footprint follows what it holds, not the sum of what its threads freed.
pub struct PeriodicRelease {
    every: std::time::Duration,
    last: std::time::Instant,
}

impl PeriodicRelease {
    /// Starts the clock: the first release comes `every` from now.
    pub fn every(every: std::time::Duration) -> Self {
        Self {
            every,
            last: std::time::Instant::now(),
        }
    }

    /// Releases free memory when `every` has passed since the last release.
    pub fn tick(&mut self) {
        if self.last.elapsed() >= self.every {
            release_free_memory();
            self.last = std::time::Instant::now();
        }
    }
}
