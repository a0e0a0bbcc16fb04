//! The client side of a session server: connect to `<session>/store.sock`, start the server
//! when none answers (as tmux does), and send each request, reconnecting once the server
//! is gone (a new one starts with the next request).

use super::socket::{self, SocketAddress};
use super::wire::{self, FrameError, PROTOCOL_VERSION, Reply, Request};
use super::{StoreError, StoreResult, lock_path, sibling_file};
use std::ffi::OsString;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a client waits for a server it started to answer.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a client waits before starting another server when the one it started found
/// the store held (another client's server is starting).
const RESPAWN_INTERVAL: Duration = Duration::from_millis(500);

/// The `rollscope` subcommand that runs a session server (`rollscope session-server DIR`).
pub const SERVER_SUBCOMMAND: &str = "session-server";

/// The exit status of a server that found the store held by another process.
pub const EXIT_STORE_HELD: i32 = 3;

/// A sink for the one-line notices a client gives (the server stopped, a new one started).
pub type Notices = Arc<dyn Fn(&str) + Send + Sync>;

/// How to start a session server: a program and its arguments, to which the store folder is
/// appended.
#[derive(Clone)]
pub struct ServerLauncher {
    program: PathBuf,
    args: Vec<OsString>,
    notices: Option<Notices>,
}

impl ServerLauncher {
    /// Starts servers as `PROGRAM ARGS… STORE_DIR`.
    pub fn new(
        program: impl Into<PathBuf>,
        args: impl IntoIterator<Item = impl Into<OsString>>,
    ) -> Self {
        Self {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            notices: None,
        }
    }

    /// Starts servers as `ROLLSCOPE session-server STORE_DIR`, `rollscope` being `program`.
    pub fn rollscope(program: impl Into<PathBuf>) -> Self {
        Self::new(program, [SERVER_SUBCOMMAND])
    }

    /// Sends the client's notices (server lost, server restarted) to `notices`.
    pub fn with_notices(mut self, notices: Notices) -> Self {
        self.notices = Some(notices);
        self
    }

    fn notify(&self, text: &str) {
        if let Some(notices) = &self.notices {
            notices(text);
        }
    }

    /// Starts a server in a process group of its own (Ctrl-C in the terminal does not reach
    /// it), its output appended to `<session>/store.server.log`.
    fn spawn(&self, dir: &Path) -> StoreResult<Child> {
        let log_path = sibling_file(dir, "server.log");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(|source| StoreError::Io {
                context: format!("cannot open {}", log_path.display()),
                source,
            })?;
        let log_copy = log.try_clone().map_err(|source| StoreError::Io {
            context: format!("cannot open {}", log_path.display()),
            source,
        })?;
        Command::new(&self.program)
            .args(&self.args)
            .arg(dir)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_copy)
            .process_group(0)
            .spawn()
            .map_err(|source| StoreError::Io {
                context: format!("cannot start the session server {}", self.program.display()),
                source,
            })
    }
}

/// A connection idle for this long is not reused: the server closes connections idle for
/// `server::IDLE_CONNECTION`, and this leaves a margin.
const REUSE_WITHIN: Duration = Duration::from_secs(240);

/// A store served by another process.
pub(super) struct RemoteStore {
    dir: PathBuf,
    launcher: ServerLauncher,
    idle: Mutex<Vec<(UnixStream, Instant)>>,
    server_pid: AtomicU32,
}

impl RemoteStore {
    /// Connects to the store's server, starting one when none answers.
    pub(super) fn connect(dir: &Path, launcher: ServerLauncher) -> StoreResult<Self> {
        std::fs::create_dir_all(dir.parent().unwrap_or(Path::new("."))).map_err(|source| {
            StoreError::Io {
                context: format!("cannot create the session folder of {}", dir.display()),
                source,
            }
        })?;
        let remote = Self {
            dir: dir.to_path_buf(),
            launcher,
            idle: Mutex::new(Vec::new()),
            server_pid: AtomicU32::new(0),
        };
        let stream = remote.open()?;
        remote.give_back(stream);
        Ok(remote)
    }

    /// The server's process id, as its handshake said.
    pub(super) fn server_pid(&self) -> u32 {
        self.server_pid.load(Ordering::SeqCst)
    }

    /// Sends a request and waits for its reply. A connection that breaks is replaced, once
    /// with a new server if the old one is gone; requests are idempotent, so sending one
    /// again after a lost reply stores nothing twice.
    pub(super) fn call(&self, request: &Request<'_>) -> StoreResult<Reply> {
        let mut lost = false;
        let mut attempts = 0;
        while attempts < 3 {
            let (mut stream, pooled) = match self.take() {
                Some(stream) => (stream, true),
                None => (self.open()?, false),
            };
            match exchange(&mut stream, request) {
                Ok(Reply::Failed(error)) => {
                    self.give_back(stream);
                    return Err(error.into());
                }
                Ok(reply) => {
                    self.give_back(stream);
                    return Ok(reply);
                }
                // An idle connection the server closed: ask again on a fresh one.
                Err(FrameError::Closed | FrameError::Io(_)) if pooled => {}
                Err(FrameError::Closed | FrameError::Io(_)) => {
                    attempts += 1;
                    if !lost {
                        self.launcher.notify(&format!(
                            "the session server (process {}) of {} is gone; reconnecting",
                            self.server_pid(),
                            self.dir.display()
                        ));
                    }
                    lost = true;
                    self.idle
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .clear();
                }
                Err(error) => return Err(StoreError::Server(error.to_string())),
            }
        }
        Err(StoreError::Server(format!(
            "the session server of {} keeps closing the connection; see {}",
            self.dir.display(),
            sibling_file(&self.dir, "server.log").display()
        )))
    }

    /// A pooled connection used recently enough that the server still holds it.
    fn take(&self) -> Option<UnixStream> {
        let mut idle = self
            .idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while let Some((stream, used)) = idle.pop() {
            if used.elapsed() < REUSE_WITHIN {
                return Some(stream);
            }
        }
        None
    }

    fn give_back(&self, stream: UnixStream) {
        self.idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((stream, Instant::now()));
    }

    /// A new connection, handshake done: to the running server, or to one started now
    /// (again if that one is gone before it answers, as after a kill).
    fn open(&self) -> StoreResult<UnixStream> {
        let folder = self.dir.parent().unwrap_or(Path::new("."));
        socket::check_own_folder(folder).map_err(StoreError::Refused)?;
        let socket = SocketAddress::of_store(&self.dir).map_err(|source| StoreError::Io {
            context: format!("cannot reach the folder of {}", self.dir.display()),
            source,
        })?;
        let started = Instant::now();
        let mut child: Option<Child> = None;
        let mut spawned_at: Option<Instant> = None;
        loop {
            socket::check_own_socket(socket.path()).map_err(StoreError::Refused)?;
            if let Ok(stream) = UnixStream::connect(socket.address()) {
                socket::check_server(&stream, socket.path()).map_err(StoreError::Refused)?;
                match self.handshake(stream) {
                    Ok(stream) => {
                        if let Some(mut child) = child {
                            std::thread::spawn(move || child.wait());
                        }
                        return Ok(stream);
                    }
                    Err(Handshake::Refused(error)) => return Err(error),
                    Err(Handshake::Lost) => {}
                }
            } else if child.is_none()
                && spawned_at.is_none_or(|at| at.elapsed() >= RESPAWN_INTERVAL)
            {
                child = Some(self.launcher.spawn(&self.dir)?);
                spawned_at = Some(Instant::now());
            }
            if let Some(running) = &mut child
                && let Ok(Some(status)) = running.try_wait()
            {
                child = None;
                if status.code().is_some_and(|code| code != EXIT_STORE_HELD) {
                    return Err(StoreError::Server(format!(
                        "the session server exited ({status}) before it answered on {}; see {}",
                        socket.path().display(),
                        sibling_file(&self.dir, "server.log").display()
                    )));
                }
            }
            if started.elapsed() > START_TIMEOUT {
                return Err(self.not_answering(&socket));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The error when nothing answers: the store held by a program that is not a server
    /// names that program.
    fn not_answering(&self, socket: &SocketAddress) -> StoreError {
        let holder = std::fs::read_to_string(lock_path(&self.dir)).unwrap_or_default();
        match holder.trim() {
            "" => StoreError::Server(format!(
                "no session server answered on {} within {} s; see {}",
                socket.path().display(),
                START_TIMEOUT.as_secs(),
                sibling_file(&self.dir, "server.log").display()
            )),
            holder => StoreError::Locked {
                path: self.dir.clone(),
                holder: holder.to_string(),
            },
        }
    }

    fn handshake(&self, mut stream: UnixStream) -> Result<UnixStream, Handshake> {
        let hello = Request::Hello {
            protocol: PROTOCOL_VERSION,
        };
        let refused = |text: String| Handshake::Refused(StoreError::Server(text));
        match exchange(&mut stream, &hello) {
            Ok(Reply::Hello { protocol, pid, .. }) if protocol == PROTOCOL_VERSION => {
                self.server_pid.store(pid, Ordering::SeqCst);
                Ok(stream)
            }
            Ok(Reply::Hello { protocol, pid, .. }) => Err(refused(format!(
                "the session server (process {pid}) speaks protocol {protocol}, this Rollscope \
                 {PROTOCOL_VERSION}; stop it (kill {pid}) and run the command again"
            ))),
            Ok(Reply::Failed(error)) => Err(Handshake::Refused(StoreError::from(error))),
            Ok(other) => Err(refused(format!(
                "the session server answered the handshake with {other:?}"
            ))),
            Err(FrameError::Closed | FrameError::Io(_)) => Err(Handshake::Lost),
            Err(error) => Err(refused(format!(
                "the session server did not complete the handshake: {error}"
            ))),
        }
    }
}

/// Why a handshake did not give a connection.
enum Handshake {
    /// The server went away during it: try again.
    Lost,
    /// The server refused, or speaks another protocol.
    Refused(StoreError),
}

/// One request, one reply.
fn exchange(stream: &mut UnixStream, request: &Request<'_>) -> Result<Reply, FrameError> {
    wire::write_frame(stream, request)?;
    let bytes = wire::read_frame_bytes(stream)?;
    wire::decode(&bytes)
}
