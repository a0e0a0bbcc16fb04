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

/// Who is at the other end of a connection.
#[derive(Clone, Copy, Debug)]
pub(super) struct Peer {
    /// Its process (as it was when it connected).
    pub pid: i32,
    /// Its effective user id.
    pub uid: u32,
}

/// The process and user at the other end of a connection (`SO_PEERCRED`).
pub(super) fn peer_credentials(stream: &UnixStream) -> std::io::Result<Peer> {
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
    Ok(Peer {
        pid: credentials.pid,
        uid: credentials.uid,
    })
}

/// This process's effective user id.
pub(super) fn own_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Refuses a folder another user could have put a socket, a lock or a log in: it must be a
/// folder (not a link) that this user owns and no one else may write to. Nothing is sent,
/// read or created there before this passes.
pub(super) fn check_own_folder(folder: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let metadata = match std::fs::symlink_metadata(folder) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(format!("cannot inspect {}: {error}", folder.display())),
    };
    let uid = own_uid();
    if !metadata.is_dir() {
        return Err(format!(
            "{} is not a folder (a link?); a session's folder must be a folder of your own",
            folder.display()
        ));
    }
    if metadata.uid() != uid {
        return Err(format!(
            "refusing the session folder {}: it belongs to user {}, not you (user {uid}), so \
             the session server there could be someone else's and read what you send; use a \
             sessions folder of your own (--sessions-dir DIR)",
            folder.display(),
            metadata.uid()
        ));
    }
    if metadata.mode() & 0o022 != 0 {
        return Err(format!(
            "refusing the session folder {}: other users may write to it (mode {:o}), so they \
             could put a socket or a lock there; make it yours alone: chmod go-w {}",
            folder.display(),
            metadata.mode() & 0o7777,
            folder.display()
        ));
    }
    Ok(())
}

/// Refuses a socket file that is not a socket this user made (a link to another user's
/// server, a file put in its place).
pub(super) fn check_own_socket(socket: &Path) -> Result<(), String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let metadata = match std::fs::symlink_metadata(socket) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(format!("cannot inspect {}: {error}", socket.display())),
    };
    if !metadata.file_type().is_socket() {
        return Err(format!(
            "refusing {}: it is not a socket (a link, or a file put in its place); remove it \
             (rm {}) and run the command again",
            socket.display(),
            socket.display()
        ));
    }
    if metadata.uid() != own_uid() {
        return Err(format!(
            "refusing {}: the socket belongs to user {}, not you (user {}); remove it (rm {}) \
             and run the command again",
            socket.display(),
            metadata.uid(),
            own_uid(),
            socket.display()
        ));
    }
    Ok(())
}

/// Refuses a server that runs as another user: checked on the connection before the first
/// byte is sent.
pub(super) fn check_server(stream: &UnixStream, socket: &Path) -> Result<(), String> {
    let peer = peer_credentials(stream).map_err(|error| {
        format!(
            "cannot read the credentials of the server on {}: {error}",
            socket.display()
        )
    })?;
    if peer.uid != own_uid() {
        return Err(format!(
            "refusing the session server on {} (process {}): it runs as user {}, not you (user \
             {}); nothing was sent to it",
            socket.display(),
            peer.pid,
            peer.uid,
            own_uid()
        ));
    }
    Ok(())
}
