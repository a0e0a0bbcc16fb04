//! Running a child process for a tool: stdin written, stdout and stderr captured up to a
//! limit, a deadline, and the whole process group killed when either is exceeded.

use std::io;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

/// How long output may still arrive after the main process exited (from its children).
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(200);

/// How much output a process may write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputLimits {
    /// Bytes kept per stream for the observation.
    pub keep_bytes: usize,
    /// Bytes written in total (both streams) after which the process group is killed.
    pub kill_after_bytes: usize,
}

impl Default for OutputLimits {
    fn default() -> Self {
        Self {
            keep_bytes: 8 * 1024,
            kill_after_bytes: 1024 * 1024,
        }
    }
}

/// The start of a stream, and how much was written in all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CapturedOutput {
    /// The first `keep_bytes` bytes.
    pub kept: Vec<u8>,
    /// Bytes written in all.
    pub total: usize,
}

impl CapturedOutput {
    /// The kept bytes as text (invalid UTF-8 replaced), with a note when bytes were cut.
    pub fn text(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.kept).into_owned();
        if self.total > self.kept.len() {
            text.push_str(&format!(
                "\n[… {} more bytes not shown]",
                self.total - self.kept.len()
            ));
        }
        text
    }
}

/// How a process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcessEnd {
    /// It exited with this status code.
    Exited(i32),
    /// A signal ended it (e.g. `SIGXCPU` at the CPU limit, `SIGKILL`).
    Signaled(i32),
    /// It was still running at the deadline; its process group was killed.
    TimedOut,
    /// It wrote more than `kill_after_bytes`; its process group was killed.
    OutputLimit,
}

/// What a process did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessRun {
    /// How it ended.
    pub end: ProcessEnd,
    /// Its standard output.
    pub stdout: CapturedOutput,
    /// Its standard error.
    pub stderr: CapturedOutput,
    /// Wall time from spawn to end.
    pub elapsed: Duration,
}

/// How long a process asked to stop may take before its group is killed.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// A spawned process whose output is being captured.
pub struct RunningProcess {
    child: tokio::process::Child,
    started: Instant,
    stop_signal: Option<i32>,
}

impl RunningProcess {
    /// Stops the process at a limit by sending it `signal` and waiting for it to exit
    /// (up to 2 s) before its group is killed, instead of killing the group at once: for a
    /// process that must clean up after its children (the sandbox's PID-namespace keeper).
    pub fn stop_with(mut self, signal: i32) -> Self {
        self.stop_signal = Some(signal);
        self
    }

    /// The process id (also its process group id).
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// Captures output until the process exits, the deadline passes, or it writes too
    /// much; in the last two cases its whole process group is killed.
    pub async fn finish(
        mut self,
        limits: OutputLimits,
        deadline: Instant,
    ) -> io::Result<ProcessRun> {
        let group = self.child.id();
        let mut stdout = Stream::new(self.child.stdout.take());
        let mut stderr = Stream::new(self.child.stderr.take());
        let mut exit: Option<ExitStatus> = None;
        let mut drain_until: Option<tokio::time::Instant> = None;
        let deadline = tokio::time::Instant::from_std(deadline);
        let end = loop {
            if stdout.done
                && stderr.done
                && let Some(status) = exit
            {
                break status_end(status);
            }
            if stdout.captured.total + stderr.captured.total > limits.kill_after_bytes {
                break ProcessEnd::OutputLimit;
            }
            let stop_at = drain_until.map_or(deadline, |drain| drain.min(deadline));
            tokio::select! {
                read = stdout.read(limits.keep_bytes), if !stdout.done => read?,
                read = stderr.read(limits.keep_bytes), if !stderr.done => read?,
                status = self.child.wait(), if exit.is_none() => {
                    exit = Some(status?);
                    drain_until = Some(tokio::time::Instant::now() + DRAIN_AFTER_EXIT);
                }
                () = tokio::time::sleep_until(stop_at) => {
                    match exit {
                        Some(status) => break status_end(status),
                        None => break ProcessEnd::TimedOut,
                    }
                }
            }
        };
        if let (None, Some(signal), Some(pid)) = (exit, self.stop_signal, group)
            && let Ok(pid) = libc::pid_t::try_from(pid)
        {
            // SAFETY: kill only sends a signal to our own child.
            unsafe {
                libc::kill(pid, signal);
            }
            if let Ok(status) = tokio::time::timeout(STOP_GRACE, self.child.wait()).await {
                exit = Some(status?);
            }
        }
        kill_group(group);
        if exit.is_none() {
            let _ = self.child.kill().await;
        }
        Ok(ProcessRun {
            end,
            stdout: stdout.captured,
            stderr: stderr.captured,
            elapsed: self.started.elapsed(),
        })
    }
}

/// Spawns `command` in a new process group with piped output, and writes `stdin` to it.
/// Must run inside a tokio runtime.
pub fn spawn_process(command: &mut Command, stdin: &[u8]) -> io::Result<RunningProcess> {
    command
        .process_group(0)
        .kill_on_drop(true)
        .stdin(if stdin.is_empty() {
            Stdio::null()
        } else {
            Stdio::piped()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = command.spawn()?;
    if let Some(mut pipe) = child.stdin.take() {
        let bytes = stdin.to_vec();
        // A child that exits without reading its input closes the pipe: not an error here.
        tokio::spawn(async move { pipe.write_all(&bytes).await });
    }
    Ok(RunningProcess {
        child,
        started,
        stop_signal: None,
    })
}

/// Spawns `command` and captures it to the end (see `RunningProcess::finish`). Fails only
/// when the process cannot be started.
pub async fn run_process(
    command: &mut Command,
    stdin: &[u8],
    limits: OutputLimits,
    deadline: Instant,
) -> io::Result<ProcessRun> {
    spawn_process(command, stdin)?
        .finish(limits, deadline)
        .await
}

/// Sends `SIGKILL` to a process group (whatever of it is left).
fn kill_group(group: Option<u32>) {
    if let Some(group) = group.and_then(|id| libc::pid_t::try_from(id).ok()) {
        // SAFETY: killpg only sends a signal; a group that no longer exists gives ESRCH.
        unsafe {
            libc::killpg(group, libc::SIGKILL);
        }
    }
}

fn status_end(status: ExitStatus) -> ProcessEnd {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => ProcessEnd::Exited(code),
        (None, Some(signal)) => ProcessEnd::Signaled(signal),
        (None, None) => ProcessEnd::Exited(-1),
    }
}

/// One output pipe being read.
struct Stream<R> {
    pipe: Option<R>,
    captured: CapturedOutput,
    done: bool,
    buffer: Box<[u8]>,
}

impl<R: AsyncRead + Unpin> Stream<R> {
    fn new(pipe: Option<R>) -> Self {
        let done = pipe.is_none();
        Self {
            pipe,
            captured: CapturedOutput::default(),
            done,
            buffer: vec![0; 64 * 1024].into_boxed_slice(),
        }
    }

    /// Reads one chunk, keeping up to `keep` bytes in all.
    async fn read(&mut self, keep: usize) -> io::Result<()> {
        let Some(pipe) = self.pipe.as_mut() else {
            self.done = true;
            return Ok(());
        };
        let count = pipe.read(&mut self.buffer).await?;
        if count == 0 {
            self.done = true;
            self.pipe = None;
            return Ok(());
        }
        let room = keep.saturating_sub(self.captured.kept.len());
        self.captured
            .kept
            .extend_from_slice(&self.buffer[..count.min(room)]);
        self.captured.total += count;
        Ok(())
    }
}
