//! The sandbox's system-call filter, call by call from Python (x86_64 numbers): what
//! sandboxed code never needs fails with `EPERM` (`clone3` with `ENOSYS`, so the C library
//! falls back to `clone`), and ordinary Python still works.

use super::common::{python, sandboxed};
use rollscope::agent::tools::{ProcessEnd, SandboxLimits};

/// Calls each `(name, number, arguments)` in a child of its own, and prints the name and
/// how the call ended: `allowed`, or the error's name.
const PROBE: &str = r#"
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def argument(value):
    return ctypes.c_char_p(value) if isinstance(value, bytes) else ctypes.c_long(value)
for name, number, arguments in CALLS:
    pid = os.fork()
    if pid == 0:
        result = libc.syscall(ctypes.c_long(number), *map(argument, arguments))
        os._exit(0 if result >= 0 else min(ctypes.get_errno(), 254))
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    print(name, 'allowed' if code == 0 else errno.errorcode.get(code, code))
"#;

/// The calls, their x86_64 numbers, harmless arguments, and the error the filter gives.
const CALLS: [(&str, u32, &str, &str); 50] = [
    ("io_uring_setup", 425, "1, 0", "EPERM"),
    ("io_uring_enter", 426, "0, 1, 0, 0, 0, 0", "EPERM"),
    ("io_uring_register", 427, "0, 0, 0, 0", "EPERM"),
    (
        "add_key",
        248,
        "b'user', b'rollscope', b'secret', 6, -2",
        "EPERM",
    ),
    ("request_key", 249, "b'user', b'rollscope', 0, -2", "EPERM"),
    ("keyctl", 250, "0, -3, 1", "EPERM"),
    ("bpf", 321, "0, 0, 0", "EPERM"),
    ("perf_event_open", 298, "0, 0, -1, -1, 0", "EPERM"),
    ("ptrace", 101, "0, 0, 0, 0", "EPERM"),
    (
        "process_vm_readv",
        310,
        "os.getpid(), 0, 0, 0, 0, 0",
        "EPERM",
    ),
    (
        "process_vm_writev",
        311,
        "os.getpid(), 0, 0, 0, 0, 0",
        "EPERM",
    ),
    (
        "mount",
        165,
        "b'none', b'/sandbox', b'tmpfs', 0, 0",
        "EPERM",
    ),
    ("umount2", 166, "b'/sandbox', 0", "EPERM"),
    ("pivot_root", 155, "b'/', b'/'", "EPERM"),
    ("move_mount", 429, "-1, b'', -1, b'', 0", "EPERM"),
    ("open_tree", 428, "-100, b'/', 0", "EPERM"),
    ("fsopen", 430, "b'tmpfs', 0", "EPERM"),
    ("fsconfig", 431, "-1, 0, 0, 0, 0", "EPERM"),
    ("fsmount", 432, "-1, 0, 0", "EPERM"),
    ("fspick", 433, "-100, b'/', 0", "EPERM"),
    ("mount_setattr", 442, "-100, b'/', 0, 0, 0", "EPERM"),
    ("unshare", 272, "0x10000000", "EPERM"),
    ("setns", 308, "-1, 0", "EPERM"),
    (
        "clone with CLONE_NEWUSER",
        56,
        "0x10000000 | 17, 0, 0, 0, 0",
        "EPERM",
    ),
    (
        "clone with CLONE_NEWNET",
        56,
        "0x40000000 | 17, 0, 0, 0, 0",
        "EPERM",
    ),
    ("clone3", 435, "0, 0", "ENOSYS"),
    ("init_module", 175, "0, 0, b''", "EPERM"),
    ("finit_module", 313, "-1, b'', 0", "EPERM"),
    ("delete_module", 176, "b'rollscope', 0", "EPERM"),
    ("kexec_load", 246, "0, 0, 0, 0", "EPERM"),
    ("kexec_file_load", 320, "-1, -1, 0, b'', 0", "EPERM"),
    ("reboot", 169, "0, 0, 0, 0", "EPERM"),
    ("swapon", 167, "b'/sandbox/swap', 0", "EPERM"),
    ("swapoff", 168, "b'/sandbox/swap'", "EPERM"),
    ("acct", 163, "0", "EPERM"),
    ("settimeofday", 164, "0, 0", "EPERM"),
    ("clock_settime", 227, "0, 0", "EPERM"),
    ("clock_adjtime", 305, "0, 0", "EPERM"),
    ("adjtimex", 159, "0", "EPERM"),
    ("userfaultfd", 323, "1", "EPERM"),
    ("chroot", 161, "b'/sandbox'", "EPERM"),
    ("name_to_handle_at", 303, "-100, b'/', 0, 0, 0", "EPERM"),
    ("open_by_handle_at", 304, "-100, 0, 0", "EPERM"),
    ("pidfd_getfd", 438, "-1, 0, 0", "EPERM"),
    ("process_madvise", 440, "-1, 0, 0, 0, 0", "EPERM"),
    ("syslog", 103, "10, 0, 0", "EPERM"),
    ("iopl", 172, "3", "EPERM"),
    ("ioperm", 173, "0, 1, 1", "EPERM"),
    ("sethostname", 170, "b'x', 1", "EPERM"),
    ("x32 unshare", 0x4000_0000 | 272, "0x10000000", "ENOSYS"),
];

#[test]
fn calls_sandboxed_python_never_needs_fail_with_an_error() {
    let listing: String = CALLS
        .iter()
        .map(|(name, number, arguments, _)| format!("    ({name:?}, {number}, ({arguments},)),\n"))
        .collect();
    let code = format!("import os\nCALLS = [\n{listing}]\n{PROBE}");
    let (run, observation) = sandboxed(&python(), &code, &SandboxLimits::default());
    assert_eq!(
        run.process.end,
        ProcessEnd::Exited(0),
        "{}",
        observation.text
    );
    let expected: String = CALLS
        .iter()
        .map(|(name, _, _, error)| format!("{name} {error}\n"))
        .collect();
    assert_eq!(observation.text, expected);
}

#[test]
fn ordinary_python_still_works_under_the_filter() {
    let code = r#"
import concurrent.futures, decimal, hashlib, math, os, subprocess, sys, threading
results = []
threads = [threading.Thread(target=lambda n=n: results.append(sum(range(n)))) for n in range(4)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print('threads', sorted(results))
with concurrent.futures.ThreadPoolExecutor(4) as pool:
    print('pool', sum(pool.map(abs, range(-10, 10))))
child = subprocess.run([sys.executable, '-c', 'print(6 * 7)'], capture_output=True, text=True)
print('subprocess', child.stdout.strip(), child.returncode)
pid = os.fork()
if pid == 0:
    os._exit(7)
print('fork', os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
with open('/sandbox/data.txt', 'w') as file:
    file.write('x' * 1000)
print('file', os.path.getsize('/sandbox/data.txt'), open('/sandbox/data.txt').read(3))
print('math', math.factorial(20), math.isqrt(10**20), round(math.pi, 5))
print('decimal', decimal.Decimal(1) / decimal.Decimal(8))
print('sha256', hashlib.sha256(b'a').hexdigest()[:8])
"#;
    let (run, observation) = sandboxed(&python(), code, &SandboxLimits::default());
    assert_eq!(
        run.process.end,
        ProcessEnd::Exited(0),
        "{}",
        observation.text
    );
    assert_eq!(
        observation.text,
        "threads [0, 0, 1, 3]\n\
         pool 100\n\
         subprocess 42 0\n\
         fork 7\n\
         file 1000 xxx\n\
         math 2432902008176640000 10000000000 3.14159\n\
         decimal 0.125\n\
         sha256 ca978112\n"
    );
}
