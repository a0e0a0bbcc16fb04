//! Where a session server listens (`<session>/store.sock`), and who is at the other end of a
//! connection.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

/// The longest socket path the kernel takes is 107 bytes; longer ones are reached through
/// the folder's descriptor.
const MAX_SOCKET_PATH: usize = 100;

/// A socket's address, usable while the value lives.
pub(super) struct SocketAddress {
    path: PathBuf,
    address: PathBuf,
    _folder: Option<File>,
}

impl SocketAddress {
    /// The socket of the store in `dir`.
    pub(super) fn of_store(dir: &Path) -> std::io::Result<Self> {
        let path = super::sibling_file(dir, "sock");
        if path.as_os_str().len() <= MAX_SOCKET_PATH {
            return Ok(Self {
                address: path.clone(),
                path,
                _folder: None,
            });
        }
        let folder = File::open(path.parent().unwrap_or(Path::new(".")))?;
        let name = path.file_name().unwrap_or_default();
        let address = PathBuf::from(format!("/proc/self/fd/{}", folder.as_raw_fd())).join(name);
        Ok(Self {
            path,
            address,
            _folder: Some(folder),
        })
    }

    /// The socket file, as people read it.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// What to bind or connect to (short enough for the kernel).
    pub(super) fn address(&self) -> &Path {
        &self.address
    }
}

/// The user id of the process at the other end of a connection (`SO_PEERCRED`).
pub(super) fn peer_uid(stream: &UnixStream) -> std::io::Result<u32> {
    let mut credentials = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut length = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: the descriptor is an open socket owned by `stream`; `credentials` and `length`
    // are valid for writes of the sizes given.
    let result = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut credentials as *mut libc::ucred).cast(),
            &mut length,
        )
    };
    if result != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(credentials.uid)
}

/// This process's effective user id.
pub(super) fn own_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}
