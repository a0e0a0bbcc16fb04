//! The session server: one process per session owns the store and answers every other
//! process's requests over `<session>/store.sock` (mode 0600, peers of another user refused),
//! a thread per connection. It exits by itself once no client has been connected for the
//! idle time. A malformed, truncated or oversized frame gets an error reply, never a crash.

use super::apply::apply;
use super::client::EXIT_STORE_HELD;
use super::local::LocalStore;
use super::socket::{self, SocketAddress};
use super::wire::{self, FrameError, PROTOCOL_VERSION, Reply, Request, WireError};
use super::{StoreError, StoreResult};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// The most connections served at once; more are answered with an error and closed.
const MAX_CONNECTIONS: usize = 256;

/// The most connections one client process holds at once, so one process (a hung TUI, a
/// script opening connections in a loop) can never take every slot.
const MAX_CONNECTIONS_PER_PROCESS: usize = 32;

/// A connection that sends nothing for this long is closed by default (clients reconnect
/// when they have something to ask).
pub const IDLE_CONNECTION: Duration = Duration::from_secs(300);

/// How a server runs.
#[derive(Clone, Copy, Debug)]
pub struct ServerOptions {
    /// How long it stays up with no client connected.
    pub idle: Duration,
    /// How long a connection may send nothing before it is closed.
    pub idle_connection: Duration,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            idle: Duration::from_secs(60),
            idle_connection: IDLE_CONNECTION,
        }
    }
}

/// Why a server stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Another process holds the store (another server, most likely, which clients use).
    #[error("{0}")]
    Held(StoreError),
    /// The store could not be opened or the socket bound.
    #[error("{0}")]
    Failed(StoreError),
}

impl ServeError {
    /// The exit status the server process should end with.
    pub fn exit_code(&self) -> i32 {
        match self {
            Self::Held(_) => EXIT_STORE_HELD,
            Self::Failed(_) => 1,
        }
    }
}

struct Shared {
    store: RwLock<Option<LocalStore>>,
    path: PathBuf,
    uid: u32,
    connections: AtomicUsize,
    per_process: std::sync::Mutex<std::collections::HashMap<i32, usize>>,
    idle_connection: Duration,
}

/// Serves the store in `dir` until it has had no client for `options.idle`.
pub fn serve(dir: &Path, options: ServerOptions) -> Result<(), ServeError> {
    let store = LocalStore::open(dir).map_err(|error| match error {
        StoreError::Locked { .. } => ServeError::Held(error),
        other => ServeError::Failed(other),
    })?;
    let socket = SocketAddress::of_store(dir).map_err(|source| {
        ServeError::Failed(StoreError::Io {
            context: format!("cannot reach the folder of {}", dir.display()),
            source,
        })
    })?;
    let listener = bind(&socket).map_err(ServeError::Failed)?;
    eprintln!(
        "{} session server {} serving {} on {}",
        chrono::Local::now().format("%Y-%m-%d %H:%M:%S"),
        std::process::id(),
        dir.display(),
        socket.path().display()
    );
    let shared = Arc::new(Shared {
        store: RwLock::new(Some(store)),
        path: dir.to_path_buf(),
        uid: socket::own_uid(),
        connections: AtomicUsize::new(0),
        per_process: std::sync::Mutex::new(std::collections::HashMap::new()),
        idle_connection: options.idle_connection,
    });
    let mut quiet_since = Instant::now();
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                let shared = Arc::clone(&shared);
                shared.connections.fetch_add(1, Ordering::SeqCst);
                let spawned = std::thread::Builder::new()
                    .name("rollscope-client".into())
                    .spawn({
                        let shared = Arc::clone(&shared);
                        move || {
                            serve_connection(&shared, stream);
                            shared.connections.fetch_sub(1, Ordering::SeqCst);
                        }
                    });
                if spawned.is_err() {
                    shared.connections.fetch_sub(1, Ordering::SeqCst);
                }
            }
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
        if shared.connections.load(Ordering::SeqCst) > 0 {
            quiet_since = Instant::now();
        } else if quiet_since.elapsed() >= options.idle {
            break;
        }
    }
    let _ = std::fs::remove_file(socket.address());
    let store = shared
        .store
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    if let Some(store) = store {
        store.close().map_err(ServeError::Failed)?;
    }
    eprintln!(
        "{} session server {} stopped: no client for {} s",
        chrono::Local::now().format("%Y-%m-%d %H:%M:%S"),
        std::process::id(),
        options.idle.as_secs()
    );
    Ok(())
}

/// Binds the socket (replacing a stale file: only the store's holder gets here), mode 0600.
fn bind(socket: &SocketAddress) -> StoreResult<UnixListener> {
    let io = |context: String| move |source| StoreError::Io { context, source };
    match std::fs::remove_file(socket.address()) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
            return Err(io(format!("cannot remove {}", socket.path().display()))(
                error,
            ));
        }
        _ => {}
    }
    let listener = UnixListener::bind(socket.address())
        .map_err(io(format!("cannot listen on {}", socket.path().display())))?;
    std::fs::set_permissions(socket.address(), std::fs::Permissions::from_mode(0o600))
        .map_err(io(format!("cannot restrict {}", socket.path().display())))?;
    listener
        .set_nonblocking(true)
        .map_err(io(format!("cannot listen on {}", socket.path().display())))?;
    Ok(listener)
}

/// Answers one client until it hangs up or sends what cannot be framed.
fn serve_connection(shared: &Shared, mut stream: UnixStream) {
    if stream.set_nonblocking(false).is_err()
        || stream
            .set_read_timeout(Some(shared.idle_connection))
            .is_err()
    {
        return;
    }
    let peer = socket::peer_credentials(&stream);
    let pid = peer.as_ref().map_or(0, |peer| peer.pid);
    let refusal = match peer {
        Ok(peer) if peer.uid == shared.uid => None,
        Ok(peer) => Some(format!(
            "refused: the client runs as user {}, the session server as user {}",
            peer.uid, shared.uid
        )),
        Err(error) => Some(format!(
            "refused: cannot read the client's credentials: {error}"
        )),
    };
    let refusal = refusal.or_else(|| {
        (shared.connections.load(Ordering::SeqCst) > MAX_CONNECTIONS)
            .then(|| format!("refused: the session server has {MAX_CONNECTIONS} clients already"))
    });
    let refusal = refusal.or_else(|| {
        let mut held = shared
            .per_process
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let count = held.entry(pid).or_default();
        if *count >= MAX_CONNECTIONS_PER_PROCESS {
            return Some(format!(
                "refused: process {pid} holds {MAX_CONNECTIONS_PER_PROCESS} connections already"
            ));
        }
        *count += 1;
        None
    });
    if let Some(refusal) = refusal {
        let _ = wire::write_frame(&mut stream, &Reply::Failed(WireError::Other(refusal)));
        return;
    }
    answer_requests(shared, &mut stream);
    let mut held = shared
        .per_process
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(count) = held.get_mut(&pid) {
        *count -= 1;
        if *count == 0 {
            held.remove(&pid);
        }
    }
}

/// Answers a client's requests until it hangs up, idles past the server's limit, or sends
/// what cannot be framed.
fn answer_requests(shared: &Shared, stream: &mut UnixStream) {
    loop {
        let reply = match wire::read_frame_bytes(stream) {
            Ok(bytes) => match wire::decode::<Request<'_>>(&bytes) {
                Ok(request) => answer(shared, request),
                Err(error) => Reply::Failed(WireError::Invalid(error.to_string())),
            },
            Err(error @ FrameError::TooLarge(_)) => {
                let _ = wire::write_frame(
                    stream,
                    &Reply::Failed(WireError::Invalid(error.to_string())),
                );
                return;
            }
            Err(_) => return,
        };
        if wire::write_frame(stream, &reply).is_err() {
            return;
        }
    }
}

/// One request's reply; a panic while answering becomes an error reply.
fn answer(shared: &Shared, request: Request<'_>) -> Reply {
    match request {
        Request::Hello { .. } => Reply::Hello {
            protocol: PROTOCOL_VERSION,
            pid: std::process::id(),
            store: shared.path.clone(),
        },
        Request::Compact => compact(shared),
        request => {
            let guard = shared
                .store
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let Some(store) = guard.as_ref() else {
                return Reply::Failed(WireError::Other("the session server is stopping".into()));
            };
            let answered =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| apply(store, request)));
            match answered {
                Ok(Ok(reply)) => reply,
                Ok(Err(error)) => Reply::Failed(error.into()),
                Err(_) => Reply::Failed(WireError::Other(
                    "the session server failed on this request (nothing was written)".into(),
                )),
            }
        }
    }
}

/// Compacts the store while no other request runs, and serves the compacted one.
fn compact(shared: &Shared) -> Reply {
    let mut guard = shared
        .store
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let Some(store) = guard.take() else {
        return Reply::Failed(WireError::Other("the session server is stopping".into()));
    };
    match store.compact() {
        Ok((store, report)) => {
            *guard = Some(store);
            Reply::Compacted(report)
        }
        Err(error) => {
            *guard = LocalStore::open(&shared.path).ok();
            Reply::Failed(error.into())
        }
    }
}
