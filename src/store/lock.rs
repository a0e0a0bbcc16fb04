//! One process owns a store: an exclusive lock file beside it that names its holder.

use fs4::fs_std::FileExt;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Holds the exclusive lock of a store until dropped.
#[derive(Debug)]
pub struct HolderLock {
    file: File,
}

/// Why a store could not be locked.
#[derive(Debug)]
pub enum LockFailure {
    /// Another process holds it; the text says who.
    Held(String),
    /// The lock file could not be opened or written.
    Io(std::io::Error),
    /// The lock file is not this user's own (another user's file or link, or writable by
    /// others): whoever controls it could make the store look held or free.
    Unsafe(String),
}

impl HolderLock {
    /// Takes the lock at `path` at once, or says who holds it. Never waits.
    pub fn acquire(path: &Path) -> Result<Self, LockFailure> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .map_err(|error| match error.raw_os_error() {
                Some(libc::ELOOP) => LockFailure::Unsafe(format!(
                    "{} is a link; a lock must be a file of your own: remove it (rm {})",
                    path.display(),
                    path.display()
                )),
                _ => LockFailure::Io(error),
            })?;
        let metadata = file.metadata().map_err(LockFailure::Io)?;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let uid = unsafe { libc::geteuid() };
        if metadata.uid() != uid || metadata.mode() & 0o022 != 0 {
            return Err(LockFailure::Unsafe(format!(
                "refusing the lock {}: it belongs to user {} with mode {:o} (it must be yours, \
                 user {uid}, and writable by you alone); remove it (rm {}) if it is stale",
                path.display(),
                metadata.uid(),
                metadata.mode() & 0o7777,
                path.display()
            )));
        }
        match file.try_lock_exclusive() {
            Ok(true) => {}
            Ok(false) => {
                let mut holder = String::new();
                file.read_to_string(&mut holder).map_err(LockFailure::Io)?;
                let holder = holder.trim();
                let holder = if holder.is_empty() {
                    "another process".to_string()
                } else {
                    holder.to_string()
                };
                return Err(LockFailure::Held(holder));
            }
            Err(error) => return Err(LockFailure::Io(error)),
        }
        let description = format!(
            "process {} ({}), since {}",
            std::process::id(),
            std::env::args().collect::<Vec<_>>().join(" "),
            chrono::Local::now().format("%Y-%m-%d %H:%M:%S")
        );
        file.set_len(0).map_err(LockFailure::Io)?;
        file.seek(SeekFrom::Start(0)).map_err(LockFailure::Io)?;
        file.write_all(description.as_bytes())
            .map_err(LockFailure::Io)?;
        file.sync_data().map_err(LockFailure::Io)?;
        Ok(Self { file })
    }
}

impl Drop for HolderLock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
        let _ = FileExt::unlock(&self.file);
    }
}
