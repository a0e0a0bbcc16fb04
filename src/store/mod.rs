//! The session store: trajectories, their summaries and indexes, tasks, runs and metrics in
//! one sled tree, written in atomic batches and flushed before anything is reported saved;
//! beside them the full-text index of what was said (`search`), kept in step from a journal
//! every write appends to (`indexer`).

mod apply;
mod blobs;
mod changes;
mod client;
mod entry;
mod handle;
mod handle_runs;
mod index_thread;
mod indexer;
mod keys;
mod labels;
mod listing;
mod local;
mod lock;
mod maintenance;
mod postings;
mod query;
mod records;
mod rows;
mod run_live;
pub mod search;
pub mod server;
mod socket;
mod sort;
mod summary;
mod text;
mod text_journal;
mod trace_codec;
pub mod wire;
mod write;

pub use changes::{ChangeStamp, Changed, Writes};
pub use client::{SERVER_SUBCOMMAND, ServerLauncher};
pub use handle::Store;
pub use labels::{LabelEdit, add_label, is_own, same_labels};
pub use local::LocalStore;
pub use maintenance::{CompactionReport, SCHEMA_VERSION};
pub use query::{Filter, Outcome, Query};
pub use search::{SearchError, TextHits, WordMatcher, check_query};
pub use sort::SortKey;
pub use summary::{ListedIds, Summary};

use std::path::{Path, PathBuf};

/// The cache sled may use by default: enough for lists and recent records. sled's own
/// accounting undercounts what its cached nodes hold, so the process grows by several
/// times this: importing a million trajectories peaked at 496–579 MiB resident with
/// 64 MiB and at 338 MiB with 16, and paging the TUI's list was no slower with 16.
pub const DEFAULT_CACHE_BYTES: u64 = 16 * 1024 * 1024;

/// The file in the store folder that holds trajectory records and token traces.
const RECORD_LOG: &str = "records.log";

/// What can go wrong with a store; callers match on `Locked` and `NotFound`.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Another process owns the store.
    #[error(
        "the store {path} is in use by {holder}; close that program, or follow its runs read-only with `rollscope watch`"
    )]
    Locked {
        /// The store's folder.
        path: PathBuf,
        /// Who holds it, as the holder wrote it.
        holder: String,
    },
    /// The store was written by a newer Rollscope.
    #[error(
        "the store {path} has schema version {found}, newer than this Rollscope's {supported}; upgrade Rollscope"
    )]
    NewerSchema {
        /// The store's folder.
        path: PathBuf,
        /// The version found on disk.
        found: u32,
        /// The newest version this build reads.
        supported: u32,
    },
    /// No trajectory has that id.
    #[error("no trajectory with id {0}")]
    NotFound(String),
    /// An id prefix matches several trajectories.
    #[error("id prefix `{prefix}` matches {count} trajectories; type more digits")]
    Ambiguous {
        /// The prefix typed.
        prefix: String,
        /// How many ids start with it.
        count: usize,
    },
    /// A record could not be decoded.
    #[error("corrupt record {what}: {reason}")]
    Corrupt {
        /// Which record.
        what: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A record or argument is not valid.
    #[error("{0}")]
    Invalid(String),
    /// sled failed.
    #[error("store database error: {0}")]
    Sled(#[from] sled::Error),
    /// The blob log could not be written.
    #[error("cannot write the store's record log: {0}")]
    BlobLog(#[from] std::io::Error),
    /// A full-text search failed: the query does not parse, or the index cannot be used.
    #[error(transparent)]
    Search(SearchError),
    /// Another writer changed the labels first (`LabelEdit::Swap`); read them again.
    #[error("{0}")]
    Conflict(String),
    /// The session server failed, refused the request, or cannot be reached.
    #[error("session server: {0}")]
    Server(String),
    /// A session folder, socket, lock or server another user could control: refused before
    /// anything was sent or written there.
    #[error("{0}")]
    Refused(String),
    /// A file operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// Result type of store operations.
pub type StoreResult<T> = Result<T, StoreError>;

/// Options for opening a store.
#[derive(Clone, Copy, Debug)]
pub struct StoreOptions {
    /// Upper bound of sled's page cache, in bytes.
    pub cache_bytes: u64,
    /// Whether to keep the full-text index in step (off only to measure what it costs).
    pub text_index: bool,
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self {
            cache_bytes: DEFAULT_CACHE_BYTES,
            text_index: true,
        }
    }
}

/// The lock file beside a store folder: `<session>/store.lock`.
fn lock_path(dir: &Path) -> PathBuf {
    sibling_file(dir, "lock")
}

/// A file beside a store folder, named after it: `<session>/store.EXTENSION`.
fn sibling_file(dir: &Path, extension: &str) -> PathBuf {
    let mut name = dir.file_name().unwrap_or_default().to_os_string();
    name.push(".");
    name.push(extension);
    dir.with_file_name(name)
}
