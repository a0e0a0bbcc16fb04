//! The background thread that catches the search index up (`indexer`) once writes pause for
//! `QUIET`, or at the latest `MAX_DELAY` after the first write it has not taken in, so a
//! long import runs at full speed and a steady writer is still indexed.

use super::indexer::TextShared;
use super::{StoreError, StoreResult};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long writes must pause before the thread indexes them.
const QUIET: Duration = Duration::from_millis(500);

/// The longest a write waits to be indexed while writes never pause: longer than a
/// million-trajectory import, which so is indexed after it ends, not during it.
const MAX_DELAY: Duration = Duration::from_secs(300);

/// Writes not yet taken in: when the first and the last happened.
#[derive(Clone, Copy)]
struct Unindexed {
    since: Instant,
    last: Instant,
}

impl Unindexed {
    fn due(self) -> Instant {
        (self.last + QUIET).min(self.since + MAX_DELAY)
    }
}

/// What was written and not yet indexed, and whether the thread must stop.
struct Signal {
    unindexed: Mutex<Option<Unindexed>>,
    wake: Condvar,
    stop: AtomicBool,
}

/// The background thread that catches the index up when writes pause; stopped (its
/// uncommitted work dropped) when the store closes.
pub(super) struct Indexer {
    shared: Arc<TextShared>,
    signal: Arc<Signal>,
    thread: Option<JoinHandle<()>>,
}

impl Indexer {
    /// Starts the thread; it catches up at once (after `QUIET`) when `behind`.
    pub fn start(shared: TextShared, behind: bool) -> StoreResult<Self> {
        let shared = Arc::new(shared);
        let signal = Arc::new(Signal {
            unindexed: Mutex::new(behind.then(|| {
                let now = Instant::now();
                Unindexed {
                    since: now,
                    last: now,
                }
            })),
            wake: Condvar::new(),
            stop: AtomicBool::new(false),
        });
        let thread = std::thread::Builder::new()
            .name("rollscope-indexer".into())
            .spawn({
                let shared = Arc::clone(&shared);
                let signal = Arc::clone(&signal);
                move || run(&shared, &signal)
            })
            .map_err(|source| StoreError::Io {
                context: "cannot start the search indexer thread".into(),
                source,
            })?;
        Ok(Self {
            shared,
            signal,
            thread: Some(thread),
        })
    }

    /// The index and what catching up reads.
    pub fn shared(&self) -> &TextShared {
        &self.shared
    }

    /// Says a write changed stored text: the thread catches up once writes pause.
    pub fn written(&self) {
        let now = Instant::now();
        let mut unindexed = self.signal.lock();
        let since = unindexed.map_or(now, |unindexed| unindexed.since);
        *unindexed = Some(Unindexed { since, last: now });
        drop(unindexed);
        self.signal.wake.notify_one();
    }
}

impl Signal {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Unindexed>> {
        self.unindexed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Indexer {
    fn drop(&mut self) {
        self.signal.stop.store(true, Ordering::Relaxed);
        drop(self.signal.lock());
        self.signal.wake.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The thread: waits for a write, then until it is due, then catches up and hands the
/// memory the burst of writes and indexing freed back to the kernel. A failure goes to
/// standard error (the session server's log, `store.server.log`) and is left for the next
/// search, which catches up itself and reports it to whoever searched.
fn run(shared: &TextShared, signal: &Signal) {
    let mut unindexed = signal.lock();
    while !signal.stop.load(Ordering::Relaxed) {
        let Some(pending) = *unindexed else {
            unindexed = signal
                .wake
                .wait(unindexed)
                .unwrap_or_else(PoisonError::into_inner);
            continue;
        };
        let wait = pending.due().saturating_duration_since(Instant::now());
        if !wait.is_zero() {
            unindexed = signal
                .wake
                .wait_timeout(unindexed, wait)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            continue;
        }
        *unindexed = None;
        drop(unindexed);
        if let Err(error) = shared.catch_up(&signal.stop) {
            eprintln!(
                "{} search index: catching up in the background failed: {error}; the next \
                 search tries again and reports it",
                chrono::Local::now().format("%Y-%m-%d %H:%M:%S")
            );
        }
        crate::allocator::release_free_memory();
        unindexed = signal.lock();
    }
}
