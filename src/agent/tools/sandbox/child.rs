//! What the sandboxed child does between `fork` and `exec`: it wipes the caller's environment
//! block, joins the call's cgroup (where there is one), makes new namespaces and a minimal read-only root, forks twice into the new
//! PID namespace (see `keepers`), takes an unprivileged uid, and in the program's process
//! sets the resource limits, marks every descriptor but the standard three close-on-exec,
//! and installs the system-call filter, last.
//!
//! Everything here runs in a forked copy of a multi-threaded process, so it only makes
//! system calls on data prepared before the fork: no allocation, no locks.

use super::filter::SyscallFilter;
use super::keepers;
use super::syscall::check;
use std::ffi::CString;
use std::io;
use std::ptr;

/// A resource limit to set: `(resource, soft, hard)`.
pub type Rlimit = (libc::__rlimit_resource_t, u64, u64);

/// One step of building the new root, with every path already under it.
pub enum Step {
    /// Create a directory.
    Dir(CString),
    /// Create a symbolic link `link` → `target`.
    Symlink {
        /// What the link points to.
        target: CString,
        /// Where the link is made.
        link: CString,
    },
    /// Bind-mount `source` on `target` (a directory, or a file made empty first), with every
    /// mount below it, then give them all `attributes`.
    Bind {
        /// The host path.
        source: CString,
        /// The path under the new root.
        target: CString,
        /// Whether `target` is a file rather than a directory.
        file: bool,
        /// `MOUNT_ATTR_*` bits set on the bind and every mount below it.
        attributes: u64,
    },
    /// Mount a fresh tmpfs with these options.
    Tmpfs {
        /// The path under the new root.
        target: CString,
        /// tmpfs options, e.g. `size=64m,mode=1777`.
        options: CString,
    },
}

/// Everything the child needs, prepared by the parent.
pub struct ChildPlan {
    /// The host directory the new root is mounted on.
    pub root: CString,
    /// Options of the root tmpfs.
    pub root_options: CString,
    /// Steps that fill the new root, in order.
    pub steps: Vec<Step>,
    /// Where the program is written (under the new root, before it becomes `/`).
    pub code_path: CString,
    /// The program.
    pub code: Vec<u8>,
    /// The working directory after the switch, e.g. `/sandbox`.
    pub workdir: CString,
    /// The `uid_map` line for the user-namespace route.
    pub uid_map: CString,
    /// The `gid_map` line for the user-namespace route.
    pub gid_map: CString,
    /// Whether to make the namespaces with real privileges (root in the initial user
    /// namespace); else, or when that fails, a user namespace is made first.
    pub privileged: bool,
    /// The first uid of the range unique uids are drawn from (privileged route).
    pub uid_base: u32,
    /// The call's cgroup's `cgroup.procs`, joined first (none on the rlimit route).
    pub cgroup_procs: Option<CString>,
    /// Limits set in the program's process.
    pub limits: Vec<Rlimit>,
    /// The caller's environment block (`env_start..env_end` of `/proc/self/stat`): the
    /// keeper and the init never exec, so it is wiped first, or their `/proc/PID/environ`
    /// would show the caller's variables (API keys among them) to the host.
    pub environment: Option<(usize, usize)>,
    /// The system-call filter installed last.
    pub filter: SyscallFilter,
    /// Fixed strings: `tmpfs`, `/`, `.`, the proc files.
    pub names: Names,
}

/// Constant C strings used by the child.
pub struct Names {
    tmpfs: CString,
    slash: CString,
    dot: CString,
    setgroups: CString,
    uid_map: CString,
    gid_map: CString,
    deny: CString,
}

impl Default for Names {
    fn default() -> Self {
        let c = |text: &str| CString::new(text).unwrap_or_default();
        Self {
            tmpfs: c("tmpfs"),
            slash: c("/"),
            dot: c("."),
            setgroups: c("/proc/self/setgroups"),
            uid_map: c("/proc/self/uid_map"),
            gid_map: c("/proc/self/gid_map"),
            deny: c("deny"),
        }
    }
}

/// How the namespaces were made.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Route {
    /// As root with real privileges: no user namespace; the child drops to a unique uid.
    Privileged,
    /// Inside a new user namespace that maps only the caller's uid.
    UserNamespace,
}

/// Runs in the child after `fork`, before `exec`. Only the program's process returns
/// (`Ok` to exec Python); the keeper and the init stay behind it (see `keepers`).
pub fn enter(plan: &ChildPlan) -> io::Result<()> {
    // SAFETY: every call below is a plain system call on memory owned by `plan`, which the
    // parent built before forking; nothing allocates or takes a lock.
    unsafe {
        if let Some((start, end)) = plan.environment {
            ptr::write_bytes(start as *mut u8, 0, end.saturating_sub(start));
        }
        // The scratch folder is the program's: its files get the usual modes, not the
        // private ones Rollscope writes sessions with.
        libc::umask(0o022);
        let unique_uid = plan.uid_base.saturating_add(libc::getpid().unsigned_abs());
        if let Some(procs) = &plan.cgroup_procs {
            write_file(procs, b"0")?;
        }
        // If the thread that started the run goes, the run goes with it.
        check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
        set_limit(libc::RLIMIT_CORE, 0, 0)?;
        let route = create_namespaces(plan)?;
        build_root(plan)?;
        let watched = keepers::block_signals()?;
        let status = keepers::status_pipe()?;
        keepers::split_keeper(&watched, status)?;
        if route == Route::Privileged {
            check(libc::setgroups(0, ptr::null()))?;
            check(libc::setresgid(unique_uid, unique_uid, unique_uid))?;
            check(libc::setresuid(unique_uid, unique_uid, unique_uid))?;
        }
        // After the uid change, which clears it: if the keeper dies, the init (and with it
        // every process of the namespace) is killed.
        check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
        check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
        keepers::split_init(status[1])?;
        keepers::unblock_signals(&watched)?;
        for &(resource, soft, hard) in &plan.limits {
            set_limit(resource, soft, hard)?;
        }
        // Whatever the caller left open without close-on-exec must not reach the program.
        check(libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        ) as libc::c_int)?;
    }
    plan.filter.install()
}

unsafe fn set_limit(resource: libc::__rlimit_resource_t, soft: u64, hard: u64) -> io::Result<()> {
    let limit = libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    // SAFETY: `limit` is a valid rlimit on the stack.
    check(unsafe { libc::setrlimit(resource, &limit) })
}

unsafe fn create_namespaces(plan: &ChildPlan) -> io::Result<Route> {
    let common = libc::CLONE_NEWNS
        | libc::CLONE_NEWPID
        | libc::CLONE_NEWNET
        | libc::CLONE_NEWIPC
        | libc::CLONE_NEWUTS;
    // SAFETY: plain system calls; paths and contents are valid C strings from `plan`.
    unsafe {
        if plan.privileged && libc::unshare(common) == 0 {
            return Ok(Route::Privileged);
        }
        check(libc::unshare(common | libc::CLONE_NEWUSER))?;
        write_file(&plan.names.setgroups, plan.names.deny.as_bytes())?;
        write_file(&plan.names.uid_map, plan.uid_map.as_bytes())?;
        write_file(&plan.names.gid_map, plan.gid_map.as_bytes())?;
    }
    Ok(Route::UserNamespace)
}

unsafe fn write_file(path: &CString, bytes: &[u8]) -> io::Result<()> {
    // SAFETY: `path` is a valid C string and `bytes` a valid buffer.
    unsafe {
        let fd = libc::open(
            path.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC,
            0o644,
        );
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut written = 0;
        while written < bytes.len() {
            let count = libc::write(fd, bytes[written..].as_ptr().cast(), bytes.len() - written);
            if count <= 0 {
                let error = io::Error::last_os_error();
                libc::close(fd);
                return Err(error);
            }
            written += count.unsigned_abs();
        }
        check(libc::close(fd))
    }
}

unsafe fn build_root(plan: &ChildPlan) -> io::Result<()> {
    let names = &plan.names;
    let none = ptr::null::<libc::c_char>();
    // SAFETY: plain system calls on valid C strings from `plan`.
    unsafe {
        check(libc::mount(
            none,
            names.slash.as_ptr(),
            none,
            libc::MS_REC | libc::MS_PRIVATE,
            ptr::null(),
        ))?;
        check(libc::mount(
            names.tmpfs.as_ptr(),
            plan.root.as_ptr(),
            names.tmpfs.as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            plan.root_options.as_ptr().cast(),
        ))?;
        for step in &plan.steps {
            run_step(step, names)?;
        }
        write_file(&plan.code_path, &plan.code)?;
        check(libc::chdir(plan.root.as_ptr()))?;
        check(
            libc::syscall(libc::SYS_pivot_root, names.dot.as_ptr(), names.dot.as_ptr())
                as libc::c_int,
        )?;
        check(libc::umount2(names.dot.as_ptr(), libc::MNT_DETACH))?;
        check(libc::chdir(names.slash.as_ptr()))?;
        check(libc::mount(
            none,
            names.slash.as_ptr(),
            none,
            libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV,
            ptr::null(),
        ))?;
        check(libc::chdir(plan.workdir.as_ptr()))
    }
}

unsafe fn run_step(step: &Step, names: &Names) -> io::Result<()> {
    let none = ptr::null::<libc::c_char>();
    // SAFETY: plain system calls on valid C strings from the plan.
    unsafe {
        match step {
            Step::Dir(path) => {
                if libc::mkdir(path.as_ptr(), 0o755) < 0 {
                    let error = io::Error::last_os_error();
                    if error.raw_os_error() != Some(libc::EEXIST) {
                        return Err(error);
                    }
                }
                Ok(())
            }
            Step::Symlink { target, link } => check(libc::symlink(target.as_ptr(), link.as_ptr())),
            Step::Bind {
                source,
                target,
                file,
                attributes,
            } => {
                if *file {
                    write_file(target, b"")?;
                }
                check(libc::mount(
                    source.as_ptr(),
                    target.as_ptr(),
                    none,
                    libc::MS_BIND | libc::MS_REC,
                    ptr::null(),
                ))?;
                set_attributes(target, *attributes)
            }
            Step::Tmpfs { target, options } => check(libc::mount(
                names.tmpfs.as_ptr(),
                target.as_ptr(),
                names.tmpfs.as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                options.as_ptr().cast(),
            )),
        }
    }
}

/// `struct mount_attr` of `mount_setattr` (linux/mount.h).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// Sets `attributes` on the mount at `target` and every mount below it (`MS_REMOUNT` would
/// leave those below as they were).
unsafe fn set_attributes(target: &CString, attributes: u64) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: attributes,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: `target` is a valid C string and `attr` a valid mount_attr of the size given.
    check(unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            target.as_ptr(),
            libc::AT_RECURSIVE,
            &raw const attr,
            std::mem::size_of::<MountAttr>(),
        )
    } as libc::c_int)
}
