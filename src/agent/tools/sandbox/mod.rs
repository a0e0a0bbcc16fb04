//! Running untrusted Python: new mount, PID, network, IPC and UTS namespaces (plus a user
//! namespace when not root), a root made of read-only binds of the system directories and
//! the Python install, a fresh tmpfs as the only writable place, an unprivileged uid, and
//! rlimits on CPU, memory, file size, open files and processes. Nothing else of the host
//! is visible: not the session folder, not `/etc`, not `/root`, not the working directory.
//! Where namespaces cannot be made, nothing runs: the error says why.

mod child;
mod keepers;
mod syscall;

use super::process::{OutputLimits, ProcessRun, spawn_process};
use child::{ChildPlan, Names, Rlimit, Step};
use std::collections::BTreeSet;
use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::process::Command;

/// Host directories exposed read-only (symbolic links are recreated as links).
const SYSTEM_PATHS: [&str; 6] = ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32"];
/// Host files exposed read-only: the dynamic loader's cache only.
const SYSTEM_FILES: [&str; 1] = ["/etc/ld.so.cache"];
/// Device nodes exposed.
const DEVICES: [&str; 4] = ["/dev/null", "/dev/zero", "/dev/random", "/dev/urandom"];
/// The writable directory inside the sandbox, and the program's path in it.
const WORKDIR: &str = "/sandbox";
/// The program's file name in `WORKDIR`.
const PROGRAM: &str = "main.py";
/// Unique uids (privileged route) are this plus the host pid of the sandbox process.
const UID_BASE: u32 = 2_000_000_000;

/// Resource limits of one sandboxed run.
#[derive(Clone, Debug, PartialEq)]
pub struct SandboxLimits {
    /// Wall-clock time, after which the whole process tree is killed.
    pub wall: Duration,
    /// CPU seconds per process (`SIGXCPU`, then `SIGKILL` a second later).
    pub cpu_seconds: u64,
    /// Address space per process, in bytes.
    pub memory_bytes: u64,
    /// Largest file a process may write, in bytes.
    pub file_bytes: u64,
    /// Open file descriptors per process.
    pub open_files: u64,
    /// Processes of the sandbox's uid, the namespace's init included (binds when run as
    /// root, where each run gets a uid of its own; under a normal user it would count all of
    /// that user's processes, so it is not set, and the PID namespace and the wall clock
    /// bound a fork bomb).
    pub processes: u64,
    /// Size of the writable tmpfs, in bytes.
    pub scratch_bytes: u64,
    /// Output captured and the point at which a chatty program is killed.
    pub output: OutputLimits,
}

impl Default for SandboxLimits {
    fn default() -> Self {
        Self {
            wall: Duration::from_secs(10),
            cpu_seconds: 5,
            memory_bytes: 1 << 30,
            file_bytes: 16 << 20,
            open_files: 64,
            processes: 32,
            scratch_bytes: 64 << 20,
            output: OutputLimits::default(),
        }
    }
}

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
    /// The inode of its PID namespace, when it could be read (every process of the run
    /// lives in it, so none should remain with it afterwards).
    pub pid_namespace: Option<u64>,
}

/// Runs `code` with `install`'s interpreter in a fresh sandbox, until it exits, hits a limit,
/// or the deadline (or `limits.wall`, whichever is sooner) passes.
pub async fn run_sandboxed(
    install: &PythonInstall,
    code: &str,
    limits: &SandboxLimits,
    deadline: Instant,
) -> Result<SandboxRun, SandboxError> {
    let folder = tempfile::Builder::new()
        .prefix("rollscope-sandbox-")
        .tempdir()?;
    let root = folder.path().join("root");
    std::fs::create_dir(&root)?;
    let plan = plan(install, code, limits, &root)?;
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
    let running = spawn_process(&mut command, b"")
        .map_err(SandboxError::Unavailable)?
        .stop_with(libc::SIGTERM);
    let pid_namespace = running.id().and_then(namespace_inode);
    let deadline = deadline.min(Instant::now() + limits.wall);
    let process = running.finish(limits.output, deadline).await?;
    drop(folder);
    Ok(SandboxRun {
        process,
        pid_namespace,
    })
}

/// The inode of the PID namespace a process's children live in.
fn namespace_inode(pid: u32) -> Option<u64> {
    let link = std::fs::read_link(format!("/proc/{pid}/ns/pid_for_children")).ok()?;
    let text = link.to_string_lossy();
    text.strip_prefix("pid:[")?.strip_suffix(']')?.parse().ok()
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path holds a NUL byte"))
}

/// Builds the list of steps that fill the new root.
struct RootBuilder<'a> {
    root: &'a Path,
    steps: Vec<Step>,
    made: BTreeSet<PathBuf>,
}

impl RootBuilder<'_> {
    fn inside(&self, path: &Path) -> PathBuf {
        self.root.join(path.strip_prefix("/").unwrap_or(path))
    }

    fn dir(&mut self, path: &Path) -> io::Result<()> {
        for ancestor in path.ancestors().collect::<Vec<_>>().into_iter().rev() {
            if ancestor == Path::new("/") || !self.made.insert(ancestor.to_path_buf()) {
                continue;
            }
            self.steps.push(Step::Dir(c_path(&self.inside(ancestor))?));
        }
        Ok(())
    }

    /// Exposes a host path at the same place: links as links, directories and files as
    /// binds remounted with `flags` plus the source's own restrictions.
    fn expose(&mut self, path: &Path, flags: libc::c_ulong) -> io::Result<()> {
        let Ok(metadata) = std::fs::symlink_metadata(path) else {
            return Ok(());
        };
        if let Some(parent) = path.parent() {
            self.dir(parent)?;
        }
        if metadata.file_type().is_symlink() {
            let target = std::fs::read_link(path)?;
            self.steps.push(Step::Symlink {
                target: c_path(&target)?,
                link: c_path(&self.inside(path))?,
            });
            return Ok(());
        }
        let file = !metadata.is_dir();
        if !file {
            self.dir(path)?;
        }
        self.steps.push(Step::Bind {
            source: c_path(path)?,
            target: c_path(&self.inside(path))?,
            file,
            flags: flags | inherited_flags(path)?,
        });
        Ok(())
    }
}

/// The restrictions of the mount a path lives on, which a bind must keep.
fn inherited_flags(path: &Path) -> io::Result<libc::c_ulong> {
    let c = c_path(path)?;
    // SAFETY: `stats` is written by statvfs before it is read.
    let stats = unsafe {
        let mut stats = std::mem::zeroed::<libc::statvfs>();
        if libc::statvfs(c.as_ptr(), &mut stats) < 0 {
            return Err(io::Error::last_os_error());
        }
        stats
    };
    let pairs = [
        (libc::ST_RDONLY, libc::MS_RDONLY),
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ];
    Ok(pairs
        .into_iter()
        .filter(|(statvfs_flag, _)| stats.f_flag & statvfs_flag != 0)
        .fold(0, |flags, (_, mount_flag)| flags | mount_flag))
}

/// Whether this process is in the initial user namespace (its uid map is the identity over
/// all uids), where root's privileges are real and any uid can be taken.
fn in_initial_user_namespace() -> bool {
    std::fs::read_to_string("/proc/self/uid_map")
        .is_ok_and(|map| map.split_whitespace().collect::<Vec<_>>() == ["0", "0", "4294967295"])
}

/// Limits clamped to the current hard limits (raising a hard limit needs privileges).
fn clamped(resource: libc::__rlimit_resource_t, soft: u64, hard: u64) -> Rlimit {
    // SAFETY: `current` is written by getrlimit before it is read.
    let ceiling = unsafe {
        let mut current = std::mem::zeroed::<libc::rlimit>();
        if libc::getrlimit(resource, &mut current) < 0 {
            u64::MAX
        } else {
            current.rlim_max
        }
    };
    (resource, soft.min(ceiling), hard.min(ceiling))
}

fn plan(
    install: &PythonInstall,
    code: &str,
    limits: &SandboxLimits,
    root: &Path,
) -> io::Result<ChildPlan> {
    let mut builder = RootBuilder {
        root,
        steps: Vec::new(),
        made: BTreeSet::new(),
    };
    let read_only = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV;
    let mut exposed: Vec<PathBuf> = Vec::new();
    for path in SYSTEM_PATHS {
        builder.expose(Path::new(path), read_only)?;
        exposed.push(PathBuf::from(path));
    }
    for python_root in &install.roots {
        if exposed.iter().any(|done| python_root.starts_with(done)) {
            continue;
        }
        builder.expose(python_root, read_only)?;
        exposed.push(python_root.clone());
    }
    for file in SYSTEM_FILES {
        builder.expose(Path::new(file), read_only)?;
    }
    for device in DEVICES {
        builder.expose(Path::new(device), libc::MS_NOSUID | libc::MS_NOEXEC)?;
    }
    let workdir = Path::new(WORKDIR);
    builder.dir(workdir)?;
    let scratch = CString::new(format!(
        "size={},mode=1777",
        limits.scratch_bytes.max(1 << 20)
    ))?;
    builder.steps.push(Step::Tmpfs {
        target: c_path(&builder.inside(workdir))?,
        options: scratch,
    });
    // SAFETY: getuid and getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let inside = |id: u32| if id == 0 { 1000 } else { id };
    let cpu = limits.cpu_seconds.max(1);
    Ok(ChildPlan {
        root: c_path(root)?,
        root_options: CString::new("size=1m,mode=0755")?,
        code_path: c_path(&builder.inside(&workdir.join(PROGRAM)))?,
        steps: builder.steps,
        code: code.as_bytes().to_vec(),
        workdir: c_path(workdir)?,
        uid_map: CString::new(format!("{} {uid} 1\n", inside(uid)))?,
        gid_map: CString::new(format!("{} {gid} 1\n", inside(gid)))?,
        privileged: uid == 0 && in_initial_user_namespace(),
        uid_base: UID_BASE,
        limits: vec![
            clamped(libc::RLIMIT_CPU, cpu, cpu + 1),
            clamped(libc::RLIMIT_AS, limits.memory_bytes, limits.memory_bytes),
            clamped(libc::RLIMIT_FSIZE, limits.file_bytes, limits.file_bytes),
            clamped(libc::RLIMIT_NOFILE, limits.open_files, limits.open_files),
        ],
        process_limit: clamped(libc::RLIMIT_NPROC, limits.processes, limits.processes).1,
        names: Names::default(),
    })
}
