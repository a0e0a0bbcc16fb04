//! The allocator configuration for training. glibc's malloc serves blocks above a threshold
//! with fresh `mmap`s and trims the heap top when it frees them, so every large temporary of a
//! training step (activations, gradients: megabytes each) costs the kernel a page fault per
//! 4 KiB on first touch. Raising both thresholds keeps freed blocks in the heap for reuse.

/// Keeps freed memory in the process for reuse (glibc on Linux; elsewhere nothing). Call
/// once at start-up, before threads are spawned.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        /// glibc's largest accepted mmap threshold on 64-bit targets (32 MiB).
        const MMAP_THRESHOLD: libc::c_int = 32 << 20;
        /// Free memory kept at the top of the heap before it is returned (1 GiB).
        const TRIM_THRESHOLD: libc::c_int = 1 << 30;
        /// Extra memory requested whenever the heap grows (64 MiB).
        const TOP_PAD: libc::c_int = 64 << 20;
        // SAFETY: mallopt only changes malloc's tuning parameters; it is called before the
        // process allocates concurrently.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
            libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
            libc::mallopt(libc::M_TOP_PAD, TOP_PAD);
        }
    }
}
