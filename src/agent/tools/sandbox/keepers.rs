//! The two processes that keep a sandboxed run, between the parent and the program:
//!
//! - the keeper, outside the new PID namespace (the parent's direct child): on `SIGTERM`
//!   it kills the namespace's init, which takes every process of the namespace with it;
//!   once the init is reaped it exits as the program did (re-raising its signal);
//! - the init, PID 1 of the namespace: it reaps orphans and, when the program ends,
//!   writes the program's wait status to the keeper and exits, ending the namespace.
//!
//! The program must not be PID 1 itself: PID 1 ignores signals it has no handler for, even
//! the kernel's `SIGXCPU` at the CPU limit.
//!
//! Runs between `fork` and `exec`: system calls only, no allocation.

use super::syscall::check;
use std::io;
use std::ptr;

/// Signals the keeper waits for, blocked until it waits for them.
pub struct Watched(libc::sigset_t);

/// Blocks `SIGCHLD` and `SIGTERM` so none is lost before the keeper waits for them.
pub unsafe fn block_signals() -> io::Result<Watched> {
    // SAFETY: sigset operations on a zeroed set on the stack.
    unsafe {
        let mut set = std::mem::zeroed::<libc::sigset_t>();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCHLD);
        libc::sigaddset(&mut set, libc::SIGTERM);
        check(libc::sigprocmask(libc::SIG_BLOCK, &set, ptr::null_mut()))?;
        Ok(Watched(set))
    }
}

/// Unblocks the watched signals (in the program, before `exec`).
pub unsafe fn unblock_signals(watched: &Watched) -> io::Result<()> {
    // SAFETY: the set was built by `block_signals`.
    check(unsafe { libc::sigprocmask(libc::SIG_UNBLOCK, &watched.0, ptr::null_mut()) })
}

/// The pipe the init reports the program's status on: `[read, write]`.
pub unsafe fn status_pipe() -> io::Result<[libc::c_int; 2]> {
    let mut ends = [0; 2];
    // SAFETY: pipe2 writes two descriptors into `ends`.
    check(unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) })?;
    Ok(ends)
}

/// Closes every descriptor but `keep`.
unsafe fn close_all_but(keep: libc::c_int) {
    let keep = keep.unsigned_abs();
    // SAFETY: close_range only closes descriptors.
    unsafe {
        if keep > 0 {
            libc::syscall(libc::SYS_close_range, 0u32, keep - 1, 0u32);
        }
        libc::syscall(libc::SYS_close_range, keep + 1, u32::MAX, 0u32);
    }
}

/// Forks the namespace's init. The parent becomes the keeper and never returns; the child
/// (PID 1 of the new PID namespace) returns.
pub unsafe fn split_keeper(watched: &Watched, [read, _]: [libc::c_int; 2]) -> io::Result<()> {
    // SAFETY: fork, then only system calls on stack memory.
    unsafe {
        let init = libc::fork();
        if init < 0 {
            return Err(io::Error::last_os_error());
        }
        if init == 0 {
            libc::close(read);
            return Ok(());
        }
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        close_all_but(read);
        let status = keep(init, watched);
        let mut reported: libc::c_int = 0;
        let size = std::mem::size_of::<libc::c_int>();
        let count = libc::read(read, (&raw mut reported).cast(), size);
        let program = if count == size as isize {
            reported
        } else {
            status
        };
        exit_like(program, watched)
    }
}

/// Waits for the init, killing it at the first `SIGTERM`; returns its wait status.
unsafe fn keep(init: libc::pid_t, watched: &Watched) -> libc::c_int {
    // SAFETY: waitpid, sigwaitinfo and kill on stack memory.
    unsafe {
        let mut status = 0;
        loop {
            let reaped = libc::waitpid(init, &mut status, libc::WNOHANG);
            if reaped == init {
                return status;
            }
            if reaped < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                libc::_exit(127);
            }
            let mut info = std::mem::zeroed::<libc::siginfo_t>();
            if libc::sigwaitinfo(&watched.0, &mut info) == libc::SIGTERM {
                libc::kill(init, libc::SIGKILL);
            }
        }
    }
}

/// Exits with a wait status: the same code, or the same signal re-raised.
unsafe fn exit_like(status: libc::c_int, watched: &Watched) -> ! {
    // SAFETY: signal disposition and kill on ourselves, then _exit.
    unsafe {
        if libc::WIFSIGNALED(status) {
            let signal = libc::WTERMSIG(status);
            libc::signal(signal, libc::SIG_DFL);
            libc::sigprocmask(libc::SIG_UNBLOCK, &watched.0, ptr::null_mut());
            libc::kill(libc::getpid(), signal);
            libc::_exit(128 + signal);
        }
        libc::_exit(libc::WEXITSTATUS(status))
    }
}

/// Forks the program from the init. The parent stays the init and never returns; the child
/// returns to run the program.
pub unsafe fn split_init(write: libc::c_int) -> io::Result<()> {
    // SAFETY: fork, then only system calls on stack memory.
    unsafe {
        let program = libc::fork();
        if program < 0 {
            return Err(io::Error::last_os_error());
        }
        if program == 0 {
            return Ok(());
        }
        close_all_but(write);
        let mut status = 0;
        loop {
            let reaped = libc::waitpid(-1, &mut status, 0);
            if reaped == program {
                let size = std::mem::size_of::<libc::c_int>();
                libc::write(write, (&raw const status).cast(), size);
                libc::_exit(0);
            }
            if reaped < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                libc::_exit(127);
            }
        }
    }
}
