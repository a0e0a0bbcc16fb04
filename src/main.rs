//! The `rollscope` binary: parses the command line and runs it.

use clap::Parser;
use rollscope::cli::{self, Cli};

fn main() -> std::process::ExitCode {
    // Large temporaries of training are reused instead of page-faulted in afresh each step,
    // and each thread allocates in an arena of its own; `ROLLSCOPE_MALLOC_DEFAULTS=1` keeps
    // glibc's defaults (to measure what this gives).
    if std::env::var_os("ROLLSCOPE_MALLOC_DEFAULTS").is_none() {
        rollscope::allocator::tune_malloc();
    }
    // candle runs large elementwise ops on a spinning pool of its own beside the rayon pool
    // that matmuls and the model's kernels use; on a few cores the two pools fight for them,
    // so elementwise ops stay on the calling thread unless CANDLE_NUM_THREADS says otherwise.
    if std::env::var_os("CANDLE_NUM_THREADS").is_none() {
        // SAFETY: nothing else runs yet, so no thread reads the environment concurrently.
        unsafe { std::env::set_var("CANDLE_NUM_THREADS", "1") };
    }
    end_quietly_on_a_closed_pipe();
    // Sessions are private: what this process writes is its user's alone unless the session
    // is shared (`session::privacy` sets 027 for those once the session is known).
    // SAFETY: umask has no preconditions and cannot fail.
    unsafe {
        libc::umask(0o077);
    }
    let parsed = Cli::parse();
    // `--isa` reaches the model's kernels, here and in every process this one starts, through
    // the environment variable clap also reads it from.
    if let Some(isa) = parsed.isa {
        // SAFETY: still no other thread: nothing has run but the parser.
        unsafe { std::env::set_var(rollscope::model::ISA_ENV, isa.name()) };
    }
    match cli::run(parsed) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) if closed_pipe(&error) => std::process::ExitCode::from(CLOSED_PIPE_STATUS),
        Err(error) => {
            eprintln!("error: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The status of a command whose reader went away (128 + SIGPIPE), as `ls | head -1` gives.
const CLOSED_PIPE_STATUS: u8 = 141;

/// Makes a write to a closed standard output (`rollscope list | head -1`) end the command
/// quietly with status 141, as `ls` and `cat` end, whatever the command. SIGPIPE itself stays
/// ignored (Rust's default): with its default action a tool or verifier command that exits
/// without reading its stdin would kill a rollout or a training run. So the closed pipe shows
/// up as `println!`'s panic, caught here before it prints anything, or as an error of a
/// command that writes through a handle, recognised by `closed_pipe`.
fn end_quietly_on_a_closed_pipe() {
    let report = std::panic::take_hook();
    let closed = format!("(os error {})", libc::EPIPE);
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if message.starts_with("failed printing to stdout") && message.ends_with(&closed) {
            std::process::exit(i32::from(CLOSED_PIPE_STATUS));
        }
        report(info);
    }));
}

/// Whether a command failed because its standard output was closed (a broken pipe in its
/// error, and standard output's reader gone: a broken pipe to a child process is an error).
fn closed_pipe(error: &anyhow::Error) -> bool {
    let broken_pipe = Some(std::io::ErrorKind::BrokenPipe);
    let broken = error.chain().any(|cause| {
        let io = cause.downcast_ref::<std::io::Error>().map(|io| io.kind());
        let json = cause
            .downcast_ref::<serde_json::Error>()
            .and_then(serde_json::Error::io_error_kind);
        io == broken_pipe || json == broken_pipe
    });
    let mut stdout = libc::pollfd {
        fd: libc::STDOUT_FILENO,
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: one valid `pollfd` and a zero timeout; poll only reads and writes it.
    let ready = unsafe { libc::poll(&mut stdout, 1, 0) };
    broken && ready > 0 && stdout.revents & (libc::POLLERR | libc::POLLHUP) != 0
}
