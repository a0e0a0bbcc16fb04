//! Running untrusted Python: new mount, PID, network, IPC and UTS namespaces (plus a user
//! namespace when not root), a root made of read-only binds of the system directories and
//! the Python install (every mount below them read-only too), a fresh tmpfs as the only
//! writable place, an unprivileged uid, no descriptor of the caller's but the standard three,
//! rlimits on CPU, memory, file size, open files and processes, a system-call filter, and a
//! bound on the memory and processes of the whole call (see `limits`). Nothing else of the
//! host is visible: not the session folder, not `/etc`, not `/root`, not the working
//! directory. Where namespaces cannot be made, nothing runs: the error says why.

mod cgroup;
mod child;
mod filter;
mod keepers;
mod limits;
mod root;
mod syscall;

pub use limits::{LimitRoute, SandboxLimits, WallRefused};

use super::process::{ProcessRun, RunningProcess, spawn_process};
use cgroup::RunCgroup;
use child::{ChildPlan, Names};
use filter::SyscallFilter;
use root::c_path;
use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::process::Command;

/// The writable directory inside the sandbox, and the program's path in it.
const WORKDIR: &str = "/sandbox";
/// The program's file name in `WORKDIR`.
const PROGRAM: &str = "main.py";
/// Unique uids (privileged route) are this plus the host pid of the sandbox process.
const UID_BASE: u32 = 2_000_000_000;

/// Why code could not be run.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// No usable `python3`.
    #[error("no usable python3: {0}")]
    NoPython(String),
    /// The sandbox could not be set up; nothing ran.
    #[error(
        "the Python sandbox cannot be set up here ({0}); it needs Linux namespaces (unshare), and code is never run without them"
    )]
    Unavailable(io::Error),
    /// Preparing the sandbox's files failed.
    #[error("cannot prepare the Python sandbox: {0}")]
    Io(#[from] io::Error),
}

/// A Python interpreter and the directories it needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PythonInstall {
    /// The interpreter, as run (inside the sandbox the same path exists).
    pub executable: PathBuf,
    /// Directories exposed read-only for it (its prefixes), canonical.
    pub roots: Vec<PathBuf>,
}

impl PythonInstall {
    /// Asks `program` (e.g. `python3` on `PATH`; pyenv shims are followed because the
    /// interpreter reports its own path) where it lives.
    pub async fn discover(program: &str) -> Result<Self, SandboxError> {
        let script = "import sys; print(sys.executable); print(sys.prefix); print(sys.base_prefix)";
        let output = tokio::time::timeout(
            Duration::from_secs(30),
            Command::new(program)
                .args(["-I", "-c", script])
                .kill_on_drop(true)
                .output(),
        )
        .await
        .map_err(|_| SandboxError::NoPython(format!("`{program}` did not answer in 30 s")))?
        .map_err(|error| SandboxError::NoPython(format!("cannot run `{program}`: {error}")))?;
        if !output.status.success() {
            return Err(SandboxError::NoPython(format!(
                "`{program}` failed: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            )));
        }
        let text = String::from_utf8_lossy(&output.stdout);
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        let [executable, prefix, base_prefix] = lines.as_slice() else {
            return Err(SandboxError::NoPython(format!(
                "`{program}` did not report its paths"
            )));
        };
        let executable = PathBuf::from(executable);
        let folder = executable
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let mut roots = Vec::new();
        for path in [Path::new(prefix), Path::new(base_prefix), &folder] {
            let canonical = std::fs::canonicalize(path)
                .map_err(|error| SandboxError::NoPython(format!("{}: {error}", path.display())))?;
            roots.push(canonical);
        }
        Ok(Self { executable, roots })
    }
}

/// What a sandboxed run did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxRun {
    /// The process: how it ended and what it wrote.
    pub process: ProcessRun,
    /// Its PID namespace, when it could be opened (every process of the run lives in it, so
    /// none should remain in it afterwards).
    pub pid_namespace: Option<PidNamespace>,
    /// How the memory and process bounds of the whole call were enforced.
    pub route: LimitRoute,
}

/// A run's PID namespace, held open: the kernel hands a dead namespace's inode number to the
/// next namespace made, so the number names this one alone only while it is held.
#[derive(Clone, Debug)]
pub struct PidNamespace {
    inode: u64,
    _held: Arc<File>,
}

impl PidNamespace {
    /// Opens the namespace `pid`'s children live in.
    fn of_children_of(pid: u32) -> Option<Self> {
        let held = File::open(format!("/proc/{pid}/ns/pid_for_children")).ok()?;
        let inode = held.metadata().ok()?.ino();
        Some(Self {
            inode,
            _held: Arc::new(held),
        })
    }

    /// The namespace's inode number, as `/proc/PID/ns/pid` links name it (`pid:[INODE]`).
    pub fn inode(&self) -> u64 {
        self.inode
    }
}

impl PartialEq for PidNamespace {
    fn eq(&self, other: &Self) -> bool {
        self.inode == other.inode
    }
}

impl Eq for PidNamespace {}

/// Runs `code` with `install`'s interpreter in a fresh sandbox, until it exits, hits a limit,
/// or the deadline (or `limits.wall`, whichever is sooner) passes. The call gets a cgroup v2
/// of its own where one can be made and joined (unless `limits.cgroup` is off), else the
/// rlimit route.
pub async fn run_sandboxed(
    install: &PythonInstall,
    code: &str,
    limits: &SandboxLimits,
    deadline: Instant,
) -> Result<SandboxRun, SandboxError> {
    let deadline = deadline.min(Instant::now() + limits.wall);
    let folder = tempfile::Builder::new()
        .prefix("rollscope-sandbox-")
        .tempdir()?;
    let root = folder.path().join("root");
    std::fs::create_dir(&root)?;
    let name = folder
        .path()
        .file_name()
        .unwrap_or_default()
        .to_string_lossy();
    let cgroup = limits
        .cgroup
        .then(|| RunCgroup::create(&name, limits.memory_bytes, limits.processes))
        .flatten();
    let (running, cgroup) = match cgroup {
        Some(cgroup) => match spawn(install, code, limits, &root, Some(&cgroup)) {
            Ok(running) => (running, Some(cgroup)),
            // Joining the cgroup may be refused although making it was not: take the
            // rlimit route instead.
            Err(_) => {
                cgroup.remove().await;
                let running = spawn(install, code, limits, &root, None)?;
                (running, None)
            }
        },
        None => (spawn(install, code, limits, &root, None)?, None),
    };
    let pid_namespace = running.id().and_then(PidNamespace::of_children_of);
    let process = running.finish(limits.output, deadline).await;
    let route = match cgroup {
        Some(cgroup) => {
            cgroup.remove().await;
            LimitRoute::Cgroup
        }
        None => LimitRoute::Rlimits,
    };
    drop(folder);
    Ok(SandboxRun {
        process: process?,
        pid_namespace,
        route,
    })
}

/// Starts the sandboxed interpreter on `code`, in `cgroup` if given.
fn spawn(
    install: &PythonInstall,
    code: &str,
    limits: &SandboxLimits,
    root: &Path,
    cgroup: Option<&RunCgroup>,
) -> Result<RunningProcess, SandboxError> {
    let plan = plan(install, code, limits, root, cgroup)?;
    let mut command = Command::new(&install.executable);
    command
        .args(["-I", "-B", "-u", &format!("{WORKDIR}/{PROGRAM}")])
        .env_clear()
        .envs([
            ("PATH", "/usr/local/bin:/usr/bin:/bin"),
            ("HOME", WORKDIR),
            ("TMPDIR", WORKDIR),
            ("LANG", "C.UTF-8"),
            ("OPENBLAS_NUM_THREADS", "1"),
            ("OMP_NUM_THREADS", "1"),
        ]);
    // SAFETY: `child::enter` only makes system calls on the plan built above.
    unsafe {
        command.pre_exec(move || child::enter(&plan));
    }
    Ok(spawn_process(&mut command, b"")
        .map_err(SandboxError::Unavailable)?
        .stop_with(libc::SIGTERM))
}

/// Whether this process is in the initial user namespace (its uid map is the identity over
/// all uids), where root's privileges are real and any uid can be taken.
fn in_initial_user_namespace() -> bool {
    std::fs::read_to_string("/proc/self/uid_map")
        .is_ok_and(|map| map.split_whitespace().collect::<Vec<_>>() == ["0", "0", "4294967295"])
}

fn plan(
    install: &PythonInstall,
    code: &str,
    limits: &SandboxLimits,
    root: &Path,
    cgroup: Option<&RunCgroup>,
) -> io::Result<ChildPlan> {
    let workdir = Path::new(WORKDIR);
    let scratch_bytes = limits.scratch_bytes.max(1 << 20);
    let scratch = CString::new(format!(
        "size={scratch_bytes},nr_inodes={},mode=1777",
        scratch_inodes(scratch_bytes)
    ))?;
    let steps = root::root_steps(root, install, workdir, scratch)?;
    // SAFETY: getuid and getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let inside = |id: u32| if id == 0 { 1000 } else { id };
    let route = match cgroup {
        Some(_) => LimitRoute::Cgroup,
        None => LimitRoute::Rlimits,
    };
    Ok(ChildPlan {
        root: c_path(root)?,
        root_options: CString::new(format!("size=1m,nr_inodes={ROOT_INODES},mode=0755"))?,
        code_path: c_path(&root.join(WORKDIR.trim_start_matches('/')).join(PROGRAM))?,
        steps,
        code: code.as_bytes().to_vec(),
        workdir: c_path(workdir)?,
        uid_map: CString::new(format!("{} {uid} 1\n", inside(uid)))?,
        gid_map: CString::new(format!("{} {gid} 1\n", inside(gid)))?,
        privileged: uid == 0 && in_initial_user_namespace(),
        uid_base: UID_BASE,
        cgroup_procs: cgroup.map(|cgroup| c_path(&cgroup.procs())).transpose()?,
        limits: limits::rlimits(limits, route),
        filter: SyscallFilter::new()?,
        names: Names::default(),
        environment: environment_block(),
    })
}

/// Files and folders the scratch tmpfs may hold: one per 4 KiB of its size, so its inodes
/// (about 1 KiB of kernel memory each, outside the memory bound) cost a quarter of its size
/// at most: 16,384 for the default 64 MiB.
pub fn scratch_inodes(scratch_bytes: u64) -> u64 {
    (scratch_bytes / 4096).max(1024)
}

/// Inodes of the root tmpfs: the mount points the root is made of.
const ROOT_INODES: u32 = 256;

/// This process's environment block, `env_start..env_end` of `/proc/self/stat` (fields 50
/// and 51), when it can be read.
fn environment_block() -> Option<(usize, usize)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let start = fields.get(47)?.parse().ok()?;
    let end = fields.get(48)?.parse().ok()?;
    (end > start).then_some((start, end))
}
