//! The system-call filter the program runs under, installed last before its exec (after
//! `PR_SET_NO_NEW_PRIVS`). Calls sandboxed Python never needs fail with `EPERM` (an error,
//! not a kill, so Python reports it): io_uring, kernel keys, bpf, perf, ptrace and
//! cross-process memory, every mount call, namespaces (`unshare`, `setns`, `clone` with a
//! `CLONE_NEW*` flag), modules, kexec, reboot, swap, accounting, the clock, userfaultfd,
//! file handles, the kernel log and port I/O. `clone3` fails with `ENOSYS`: its flags sit in
//! memory a filter cannot read, and on `ENOSYS` the C library falls back to `clone`. On
//! x86_64, x32-ABI numbers fail with `ENOSYS` too, so no call slips past under another
//! number; other architectures' calls kill the process.

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};
use std::collections::BTreeMap;
use std::io;

/// Calls refused with `EPERM` on every architecture.
const DENIED: [libc::c_long; 45] = [
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_keyctl,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_acct,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_userfaultfd,
    libc::SYS_chroot,
    libc::SYS_name_to_handle_at,
    libc::SYS_open_by_handle_at,
    libc::SYS_pidfd_getfd,
    libc::SYS_process_madvise,
    libc::SYS_syslog,
    libc::SYS_sethostname,
    libc::SYS_setdomainname,
];

/// Calls refused with `EPERM` that exist only on x86_64.
#[cfg(target_arch = "x86_64")]
const DENIED_HERE: [libc::c_long; 2] = [libc::SYS_iopl, libc::SYS_ioperm];
/// Calls refused with `EPERM` that exist only on x86_64.
#[cfg(not(target_arch = "x86_64"))]
const DENIED_HERE: [libc::c_long; 0] = [];

/// The `clone` flags that make a namespace (`CLONE_NEWTIME` shares its bit with the exit
/// signal in `clone`, so only `clone3` and `unshare` could ask for it; both are refused).
const NAMESPACE_FLAGS: [libc::c_int; 7] = [
    libc::CLONE_NEWNS,
    libc::CLONE_NEWCGROUP,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
];

/// The compiled filters, in the order they are installed.
pub struct SyscallFilter(Vec<BpfProgram>);

impl SyscallFilter {
    /// Compiles the filters for this architecture.
    pub fn new() -> io::Result<Self> {
        let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(unbuildable)?;
        let mut denied: BTreeMap<i64, Vec<SeccompRule>> = DENIED
            .iter()
            .chain(&DENIED_HERE)
            .map(|&number| (number, Vec::new()))
            .collect();
        let namespaces = NAMESPACE_FLAGS
            .iter()
            .map(|&flag| {
                let flag = u64::from(flag.unsigned_abs());
                let condition = SeccompCondition::new(
                    0,
                    SeccompCmpArgLen::Qword,
                    SeccompCmpOp::MaskedEq(flag),
                    flag,
                )?;
                SeccompRule::new(vec![condition])
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(unbuildable)?;
        denied.insert(libc::SYS_clone, namespaces);
        let refuse = |rules, errno: libc::c_int| {
            let filter = SeccompFilter::new(
                rules,
                SeccompAction::Allow,
                SeccompAction::Errno(errno.unsigned_abs()),
                arch,
            )
            .map_err(unbuildable)?;
            BpfProgram::try_from(filter).map_err(unbuildable)
        };
        let mut programs = vec![
            refuse(denied, libc::EPERM)?,
            refuse([(libc::SYS_clone3, Vec::new())].into(), libc::ENOSYS)?,
        ];
        if cfg!(target_arch = "x86_64") {
            programs.push(x32_guard());
        }
        Ok(Self(programs))
    }

    /// Installs the filters on the calling thread, for it and every process it starts.
    /// Runs between `fork` and `exec`: no allocation.
    pub fn install(&self) -> io::Result<()> {
        for program in &self.0 {
            seccompiler::apply_filter(program).map_err(|error| match error {
                seccompiler::Error::Prctl(error) | seccompiler::Error::Seccomp(error) => error,
                _ => io::Error::from_raw_os_error(libc::EINVAL),
            })?;
        }
        Ok(())
    }
}

/// A filter that refuses x32-ABI call numbers (those with bit 30 set) with `ENOSYS`.
fn x32_guard() -> BpfProgram {
    const X32_BIT: u32 = 0x4000_0000;
    let load_number = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
    let at_least = (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16;
    let answer = (libc::BPF_RET | libc::BPF_K) as u16;
    let instruction = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    vec![
        instruction(load_number, 0, 0, 0),
        instruction(at_least, 0, 1, X32_BIT),
        instruction(
            answer,
            0,
            0,
            libc::SECCOMP_RET_ERRNO | libc::ENOSYS.unsigned_abs(),
        ),
        instruction(answer, 0, 0, libc::SECCOMP_RET_ALLOW),
    ]
}

fn unbuildable(error: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("cannot build the system-call filter: {error}"))
}
