//! The blob log: trajectory records and token traces appended to one file, so sled holds only
//! small entries (summaries, locations, indexes). Each blob is framed with its length and a
//! CRC32; a torn write at the end after a crash is never referenced, because sled learns a
//! blob's location only after the log is synced. A bulk append (an import's batch, a
//! compaction's group) leaves the page cache once synced: those blobs are read seldom, and on a
//! virtual machine an import that grows the page cache by gigabytes spends most of its write
//! time on pages the host must first map. Small appends stay cached: they are read again soon
//! (a label edit rereads its record, the TUI shows a live run's newest rollouts).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

const MAGIC: u32 = 0x524c_4231; // "RLB1"
const HEADER: u64 = 12;
/// Appends of at least this many bytes leave the page cache once synced.
const BULK_BYTES: u64 = 1 << 20;

/// Where a blob lies in the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// Offset of the blob's header.
    pub offset: u64,
    /// Length of the payload.
    pub len: u32,
}

impl Location {
    /// Encoded size in bytes.
    pub const SIZE: usize = 12;

    /// Appends the encoding to `out`.
    pub fn encode_into(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.offset.to_be_bytes());
        out.extend_from_slice(&self.len.to_be_bytes());
    }

    /// Reads an encoding written by `encode_into`.
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        Some(Self {
            offset: u64::from_be_bytes(bytes.get(..8)?.try_into().ok()?),
            len: u32::from_be_bytes(bytes.get(8..12)?.try_into().ok()?),
        })
    }
}

/// An append-only file of checksummed blobs.
#[derive(Debug)]
pub struct BlobLog {
    file: File,
    path: PathBuf,
    end: Mutex<u64>,
}

impl BlobLog {
    /// Opens (or creates) the log; new blobs go after whatever is there.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)?;
        let end = file.metadata()?.len();
        Ok(Self {
            file,
            path: path.to_path_buf(),
            end: Mutex::new(end),
        })
    }

    /// Size of the log in bytes.
    pub fn len(&self) -> u64 {
        *self
            .end
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Appends blobs and syncs the file; returns their locations once they are durable.
    pub fn append(&self, blobs: &[&[u8]]) -> std::io::Result<Vec<Location>> {
        let mut end = self
            .end
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let total: usize = blobs.iter().map(|blob| blob.len() + HEADER as usize).sum();
        let mut buffer = Vec::with_capacity(total);
        let mut locations = Vec::with_capacity(blobs.len());
        let mut offset = *end;
        for blob in blobs {
            let len = u32::try_from(blob.len()).map_err(|_| {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, "a record over 4 GiB")
            })?;
            buffer.extend_from_slice(&MAGIC.to_le_bytes());
            buffer.extend_from_slice(&len.to_le_bytes());
            buffer.extend_from_slice(&crc32fast::hash(blob).to_le_bytes());
            buffer.extend_from_slice(blob);
            locations.push(Location { offset, len });
            offset += HEADER + u64::from(len);
        }
        (&self.file).write_all(&buffer)?;
        self.file.sync_data()?;
        if offset - *end >= BULK_BYTES {
            drop_cached(&self.file, *end, offset - *end);
        }
        *end = offset;
        Ok(locations)
    }

    /// Reads a blob back, checking its frame and checksum.
    pub fn read(&self, location: Location) -> Result<Vec<u8>, String> {
        let mut bytes = vec![0u8; HEADER as usize + location.len as usize];
        self.file
            .read_exact_at(&mut bytes, location.offset)
            .map_err(|error| {
                format!(
                    "cannot read {} at {}: {error}",
                    self.path.display(),
                    location.offset
                )
            })?;
        let word = |bytes: &[u8], at: usize| {
            u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or_default())
        };
        if word(&bytes, 0) != MAGIC || word(&bytes, 4) != location.len {
            return Err(format!(
                "no blob header at offset {} of {}",
                location.offset,
                self.path.display()
            ));
        }
        let checksum = word(&bytes, 8);
        let payload = bytes.split_off(HEADER as usize);
        if crc32fast::hash(&payload) != checksum {
            return Err(format!(
                "checksum mismatch at offset {} of {}",
                location.offset,
                self.path.display()
            ));
        }
        Ok(payload)
    }
}

/// Asks the kernel to drop a synced range of `file` from the page cache, so the next writes
/// reuse its pages (`posix_fadvise(DONTNEED)` on Linux; elsewhere nothing). Advice only: a
/// failure changes nothing stored.
fn drop_cached(file: &File, offset: u64, len: u64) {
    #[cfg(target_os = "linux")]
    if let (Ok(offset), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) {
        // SAFETY: posix_fadvise reads no memory of ours; the descriptor is open for the
        // duration of the call.
        unsafe {
            let fd = std::os::fd::AsRawFd::as_raw_fd(file);
            libc::posix_fadvise(fd, offset, len, libc::POSIX_FADV_DONTNEED);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, offset, len);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_round_trip_and_corruption_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("blobs");
        let log = BlobLog::open(&path).unwrap();
        let locations = log.append(&[b"first", b"", b"third blob"]).unwrap();
        assert_eq!(log.read(locations[2]).unwrap(), b"third blob");
        assert_eq!(log.read(locations[1]).unwrap(), b"");
        drop(log);
        let log = BlobLog::open(&path).unwrap();
        let more = log.append(&[b"after reopen"]).unwrap();
        assert_eq!(log.read(locations[0]).unwrap(), b"first");
        assert_eq!(log.read(more[0]).unwrap(), b"after reopen");
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[locations[2].offset as usize + 14] ^= 1;
        std::fs::write(&path, bytes).unwrap();
        let log = BlobLog::open(&path).unwrap();
        assert!(log.read(locations[2]).unwrap_err().contains("checksum"));
        let shifted = Location { offset: 3, len: 5 };
        assert!(log.read(shifted).is_err());
    }
}
