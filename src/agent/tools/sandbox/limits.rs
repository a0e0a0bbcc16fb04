//! How much one sandboxed call may use, and how the bounds of the whole call are enforced:
//! by a cgroup v2 of its own where the machine lets this process make one (`memory.max`,
//! `pids.max`), else by rlimits whose product stays within the same bound (each process's
//! address space is the call's memory divided by its process limit).

use super::child::Rlimit;
use crate::agent::tools::OutputLimits;
use std::fmt;
use std::time::Duration;

/// Resource limits of one sandboxed run.
#[derive(Clone, Debug, PartialEq)]
pub struct SandboxLimits {
    /// Wall-clock time, after which the whole process tree is killed (at most
    /// [`SandboxLimits::MAX_WALL`] through [`SandboxLimits::with_wall`]).
    pub wall: Duration,
    /// CPU seconds per process (`SIGXCPU`, then `SIGKILL` a second later).
    pub cpu_seconds: u64,
    /// Memory of the whole call, all its processes together, in bytes: the cgroup's
    /// `memory.max` (and each process's address space), or on the rlimit route each
    /// process's address space is this divided by `processes`.
    pub memory_bytes: u64,
    /// Largest file a process may write, in bytes.
    pub file_bytes: u64,
    /// Open file descriptors per process.
    pub open_files: u64,
    /// Processes and threads of the whole call, its keeper and init included: the cgroup's
    /// `pids.max`, and `RLIMIT_NPROC` of the run's own uid (a unique uid when run as root;
    /// otherwise the uid of its own user namespace, whose processes alone Linux 5.14 and
    /// later count).
    pub processes: u64,
    /// Size of the writable tmpfs, in bytes.
    pub scratch_bytes: u64,
    /// Output captured and the point at which a chatty program is killed.
    pub output: OutputLimits,
    /// Whether to bound the call with a cgroup v2 where one can be made; `false` takes the
    /// rlimit route everywhere.
    pub cgroup: bool,
}

impl Default for SandboxLimits {
    fn default() -> Self {
        Self {
            wall: Duration::from_secs(10),
            cpu_seconds: 5,
            memory_bytes: 2 << 30,
            file_bytes: 16 << 20,
            open_files: 64,
            processes: 16,
            scratch_bytes: 64 << 20,
            output: OutputLimits::default(),
            cgroup: true,
        }
    }
}

/// A wall clock the sandbox does not grant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "a time limit of {asked_ms} ms is outside what the Python sandbox grants: ask for at least 1 ms and at most {max_ms} ms (10 minutes)",
    asked_ms = asked.as_millis(),
    max_ms = SandboxLimits::MAX_WALL.as_millis()
)]
pub struct WallRefused {
    /// The wall clock asked for.
    pub asked: Duration,
}

impl SandboxLimits {
    /// The longest wall clock a call may be given.
    pub const MAX_WALL: Duration = Duration::from_secs(600);

    /// These limits with the wall clock `wall`; refused when zero or above [`Self::MAX_WALL`].
    pub fn with_wall(self, wall: Duration) -> Result<Self, WallRefused> {
        if wall.is_zero() || wall > Self::MAX_WALL {
            return Err(WallRefused { asked: wall });
        }
        Ok(Self { wall, ..self })
    }

    /// The address space each process gets on `route`.
    pub fn process_memory(&self, route: LimitRoute) -> u64 {
        match route {
            LimitRoute::Cgroup => self.memory_bytes,
            LimitRoute::Rlimits => self.memory_bytes / self.processes.max(1),
        }
    }
}

/// How the memory and process bounds of a whole call were enforced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LimitRoute {
    /// A cgroup v2 of the call's own: `memory.max` and `pids.max` over all its processes.
    Cgroup,
    /// Per-process rlimits: address space × process limit ≤ the call's memory.
    Rlimits,
}

impl fmt::Display for LimitRoute {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            Self::Cgroup => "cgroup v2",
            Self::Rlimits => "rlimits",
        })
    }
}

/// The rlimits the program's process sets on `route`, clamped to the current hard limits.
pub(super) fn rlimits(limits: &SandboxLimits, route: LimitRoute) -> Vec<Rlimit> {
    let cpu = limits.cpu_seconds.max(1);
    let memory = limits.process_memory(route);
    vec![
        clamped(libc::RLIMIT_CPU, cpu, cpu + 1),
        clamped(libc::RLIMIT_AS, memory, memory),
        clamped(libc::RLIMIT_FSIZE, limits.file_bytes, limits.file_bytes),
        clamped(libc::RLIMIT_NOFILE, limits.open_files, limits.open_files),
        clamped(libc::RLIMIT_NPROC, limits.processes, limits.processes),
    ]
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
