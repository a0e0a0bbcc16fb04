//! Bounds on a whole sandboxed call, not just on each of its processes: descriptors the
//! caller left open never reach the program, the processes it may start, the memory all of
//! them hold together, and mounts below the exposed folders stay read-only.

use super::common::{python, sandboxed};
use rollscope::agent::tools::{LimitRoute, ProcessEnd, SandboxLimits};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

/// A descriptor opened without close-on-exec, as a shell's `exec 7>>FILE` leaves one.
struct InheritableFd(libc::c_int);

impl InheritableFd {
    fn append(path: &Path) -> Self {
        let path = CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: open on a valid C string; the descriptor is closed on drop.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_APPEND) };
        assert!(fd >= 0, "open: {}", std::io::Error::last_os_error());
        Self(fd)
    }
}

impl Drop for InheritableFd {
    fn drop(&mut self) {
        // SAFETY: closes the descriptor this value owns.
        unsafe {
            libc::close(self.0);
        }
    }
}

#[test]
fn descriptors_the_caller_left_open_do_not_reach_the_program() {
    let folder = tempfile::tempdir().unwrap();
    let host_file = folder.path().join("host.txt");
    std::fs::write(&host_file, "").unwrap();
    let fd = InheritableFd::append(&host_file);
    let code = format!(
        "import os\n\
         try:\n\
         \x20   os.write({fd}, b'escaped')\n\
         \x20   print('wrote')\n\
         except OSError as error:\n\
         \x20   print('write refused', error.errno)\n\
         try:\n\
         \x20   os.fstat({fd})\n\
         \x20   print('open')\n\
         except OSError as error:\n\
         \x20   print('not open', error.errno)\n",
        fd = fd.0
    );
    let (_, observation) = sandboxed(&python(), &code, &SandboxLimits::default());
    drop(fd);
    assert_eq!(
        std::fs::read_to_string(&host_file).unwrap(),
        "",
        "{}",
        observation.text
    );
    assert_eq!(
        observation.text,
        format!(
            "write refused {ebadf}\nnot open {ebadf}\n",
            ebadf = libc::EBADF
        )
    );
}

/// Forks children that sleep until the run ends, as many as it may; prints how many.
pub const FORK_BOMB: &str = "import os, time\n\
    forked = 0\n\
    for _ in range(300):\n\
    \x20   try:\n\
    \x20       if os.fork() == 0:\n\
    \x20           time.sleep(600)\n\
    \x20           os._exit(0)\n\
    \x20       forked += 1\n\
    \x20   except OSError:\n\
    \x20       break\n\
    print('forked', forked)\n";

/// How many children `FORK_BOMB` reported.
fn forked(text: &str) -> usize {
    text.lines()
        .find_map(|line| line.strip_prefix("forked ")?.parse().ok())
        .unwrap_or_else(|| panic!("no count in {text:?}"))
}

/// The default limits, on the default route (`cgroup`) or forced onto the rlimit route.
fn limits_on(cgroup: bool) -> SandboxLimits {
    SandboxLimits {
        wall: Duration::from_secs(30),
        cgroup,
        ..SandboxLimits::default()
    }
}

#[test]
fn a_fork_bomb_stops_below_the_process_limit_as_any_user_on_either_route() {
    for cgroup in [true, false] {
        let limits = limits_on(cgroup);
        let (run, observation) = sandboxed(&python(), FORK_BOMB, &limits);
        assert_eq!(
            run.process.end,
            ProcessEnd::Exited(0),
            "{}",
            observation.text
        );
        let children = forked(&observation.text);
        assert!(
            (1..limits.processes as usize).contains(&children),
            "{children} children forked under a limit of {} processes (uid {}, {})",
            limits.processes,
            // SAFETY: getuid cannot fail.
            unsafe { libc::getuid() },
            run.route
        );
    }
}

/// Six children that each fill 450 MiB and hold it; prints how many held it at once.
pub const HOLD_MEMORY: &str = "import os, time\n\
    CHILDREN, MIB = 6, 450\n\
    children = []\n\
    for _ in range(CHILDREN):\n\
    \x20   read, write = os.pipe()\n\
    \x20   pid = os.fork()\n\
    \x20   if pid == 0:\n\
    \x20       os.close(read)\n\
    \x20       try:\n\
    \x20           block = b'\\x01' * (MIB << 20)\n\
    \x20           os.write(write, b'h')\n\
    \x20       except MemoryError:\n\
    \x20           os.write(write, b'm')\n\
    \x20       time.sleep(600)\n\
    \x20       os._exit(0)\n\
    \x20   os.close(write)\n\
    \x20   children.append((pid, read))\n\
    reports = [(pid, os.read(read, 1)) for pid, read in children]\n\
    time.sleep(0.5)\n\
    alive = [pid for pid, report in reports if report == b'h' and os.waitpid(pid, os.WNOHANG) == (0, 0)]\n\
    print('reports', b''.join(report for _, report in reports))\n\
    print('holding', len(alive))\n";

/// How many children of `HOLD_MEMORY` held their block.
fn holding(text: &str) -> u64 {
    text.lines()
        .find_map(|line| line.strip_prefix("holding ")?.parse().ok())
        .unwrap_or_else(|| panic!("no count in {text:?}"))
}

/// The most a whole call may hold.
const CALL_MEMORY: u64 = 2 << 30;

/// Runs `HOLD_MEMORY` under `limits`; returns the route taken and the bytes held at once.
fn held_at_once(limits: &SandboxLimits) -> (LimitRoute, u64, String) {
    let (run, observation) = sandboxed(&python(), HOLD_MEMORY, limits);
    let held = holding(&observation.text) * (450 << 20);
    (run.route, held, observation.text)
}

#[test]
fn memory_held_across_processes_stays_within_two_gibibytes_on_the_default_route() {
    let (route, held, text) = held_at_once(&limits_on(true));
    assert!(
        held <= CALL_MEMORY,
        "{held} bytes held at once ({route}): {text}"
    );
}

#[test]
fn memory_held_across_processes_stays_within_two_gibibytes_on_the_rlimit_route() {
    let limits = limits_on(false);
    let (route, held, text) = held_at_once(&limits);
    assert_eq!(route, LimitRoute::Rlimits);
    assert!(held <= CALL_MEMORY, "{held} bytes held at once: {text}");
    assert_eq!(
        limits.process_memory(LimitRoute::Rlimits) * limits.processes,
        CALL_MEMORY
    );
    let code = "block = b'\\x01' * (64 << 20)\nprint('held', len(block) >> 20, 'MiB')\n";
    let (_, observation) = sandboxed(&python(), code, &limits);
    assert_eq!(
        observation.text, "held 64 MiB\n",
        "one process still has room"
    );
}

/// Unmounts a mount made for a test when it ends.
struct TestMount(CString);

impl TestMount {
    /// A writable tmpfs mounted on `path` (needs root).
    fn tmpfs(path: &Path) -> Self {
        let target = CString::new(path.as_os_str().as_bytes()).unwrap();
        let tmpfs = CString::new("tmpfs").unwrap();
        let options = CString::new("size=1m").unwrap();
        // SAFETY: mount on valid C strings.
        let result = unsafe {
            libc::mount(
                tmpfs.as_ptr(),
                target.as_ptr(),
                tmpfs.as_ptr(),
                0,
                options.as_ptr().cast(),
            )
        };
        assert_eq!(
            result,
            0,
            "mounting a tmpfs for the test (run as root): {}",
            std::io::Error::last_os_error()
        );
        Self(target)
    }
}

impl Drop for TestMount {
    fn drop(&mut self) {
        // SAFETY: umount2 on a valid C string.
        unsafe {
            libc::umount2(self.0.as_ptr(), libc::MNT_DETACH);
        }
    }
}

#[test]
fn a_writable_mount_below_an_exposed_folder_is_read_only_inside() {
    let folder = tempfile::tempdir().unwrap();
    let exposed = std::fs::canonicalize(folder.path()).unwrap();
    let below = exposed.join("below");
    std::fs::create_dir(&below).unwrap();
    let mount = TestMount::tmpfs(&below);
    let mut install = python();
    install.roots.push(exposed.clone());
    let escaped = below.join("escaped.txt");
    let code = format!(
        "try:\n\
         \x20   open({escaped:?}, 'w').write('out')\n\
         \x20   print('wrote')\n\
         except OSError as error:\n\
         \x20   print('refused', error.errno)\n",
        escaped = escaped.display().to_string()
    );
    let (_, observation) = sandboxed(&install, &code, &SandboxLimits::default());
    let appeared = escaped.exists();
    drop(mount);
    assert!(!appeared, "{}", observation.text);
    assert_eq!(observation.text, format!("refused {}\n", libc::EROFS));
}
