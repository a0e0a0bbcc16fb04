//! A run that other processes watch and steer: it records the process that trains it, keeps
//! its step's activity current in the store (at most once a second), and obeys what users
//! ask of it from any process (`Store::request_run`), alongside its own `RunControl`.

use super::control::{RunControl, RunEvent};
use crate::store::Store;
use crate::trajectory::{Phase, RunActivity, RunInfo, RunKind, RunProcess, RunRequest, RunStatus};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The environment variable a background run's launcher sets to where its output goes.
pub const JOB_LOG_ENV: &str = "ROLLSCOPE_JOB_LOG";

/// How often a training process looks for what users asked of its run.
const REQUEST_POLL: Duration = Duration::from_millis(250);

/// How often at most a run writes its step's activity to the store.
const ACTIVITY_EVERY: Duration = Duration::from_secs(1);

/// This process, as a run records it.
pub fn this_process() -> RunProcess {
    let pid = std::process::id();
    RunProcess {
        pid,
        host: host_name(),
        started_ticks: started_ticks(pid).unwrap_or(0),
        log: std::env::var(JOB_LOG_ENV).ok(),
    }
}

/// Whether a run's process still lives; `true` when it runs on another machine (this one
/// cannot tell).
pub fn process_lives(process: &RunProcess) -> bool {
    if process.host != host_name() {
        return true;
    }
    started_ticks(process.pid) == Some(process.started_ticks)
}

/// A run as seen now: a running or paused run whose process is gone is `Interrupted`.
pub fn observed(mut run: RunInfo) -> RunInfo {
    let live = matches!(run.status, RunStatus::Running | RunStatus::Paused);
    if live
        && run
            .process
            .as_ref()
            .is_some_and(|process| !process_lives(process))
    {
        run.status = RunStatus::Interrupted;
        run.activity = None;
    }
    run
}

/// Run `id` as stored, seen now (interrupted when its process is gone).
pub fn stored_run(store: &Store, id: &str) -> anyhow::Result<RunInfo> {
    let info = store.get_run(id)?.ok_or_else(|| {
        anyhow::anyhow!("no run `{id}` in this session; `rollscope runs` lists them")
    })?;
    Ok(observed(info))
}

/// Asks run `id` to pause, resume or stop, whichever process trains it (it acts between
/// steps), after checking the request fits where the run stands.
pub fn ask_run(store: &Store, id: &str, request: RunRequest) -> anyhow::Result<RunInfo> {
    let run = stored_run(store, id)?;
    let fits = match request {
        RunRequest::Pause => run.status == RunStatus::Running,
        RunRequest::Resume => run.status == RunStatus::Paused,
        RunRequest::Stop => matches!(run.status, RunStatus::Running | RunStatus::Paused),
    };
    if !fits {
        let hint = match run.status {
            RunStatus::Stopped | RunStatus::Interrupted if run.kind == RunKind::Import => {
                "; `rollscope import --follow` with the same paths resumes it".to_string()
            }
            RunStatus::Stopped | RunStatus::Failed | RunStatus::Interrupted => format!(
                "; `rollscope train {} --resume {id}` continues it from its checkpoint",
                run.kind.as_str()
            ),
            _ => String::new(),
        };
        anyhow::bail!("{id} is {}{hint}", run.status.as_str());
    }
    store.request_run(id, Some(request))?;
    Ok(run)
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_string())
        .unwrap_or_else(|_| "localhost".into())
}

/// Field 22 of `/proc/PID/stat`: when the process started, in ticks since boot; `None`
/// when no such process runs (an ended one waiting to be reaped included).
fn started_ticks(pid: u32) -> Option<u64> {
    let stat =
        std::fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("stat")).ok()?;
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace();
    if matches!(fields.next(), Some("Z" | "X")) {
        return None;
    }
    fields.nth(18)?.parse().ok()
}

/// A run made watchable and steerable from other processes while it lives: what users ask
/// of it reaches its control, and its events reach the store.
pub struct LiveRun {
    _requests: RequestFollower,
    progress: ProgressWriter,
}

impl LiveRun {
    /// Starts following requests to run `run` of `context` and writing its progress.
    pub fn start(context: &super::RunContext, run: &str) -> anyhow::Result<Self> {
        Ok(Self {
            _requests: RequestFollower::start(
                Arc::clone(&context.store),
                run,
                context.control.clone(),
            )?,
            progress: ProgressWriter::new(Arc::clone(&context.store), run),
        })
    }

    /// `on_event` with the store told of each event first.
    pub fn observe<'a>(
        &'a mut self,
        on_event: &'a mut dyn FnMut(RunEvent),
    ) -> impl FnMut(RunEvent) + 'a {
        move |event| {
            self.progress.see(&event);
            on_event(event)
        }
    }
}

/// Applies what users ask of a run to its control, from a thread of its own, until dropped.
pub struct RequestFollower {
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl RequestFollower {
    /// Clears any request left from an earlier life of run `run` and follows new ones.
    pub fn start(store: Arc<Store>, run: &str, control: RunControl) -> anyhow::Result<Self> {
        store.request_run(run, None)?;
        let done = Arc::new(AtomicBool::new(false));
        let thread = std::thread::Builder::new()
            .name("rollscope-requests".into())
            .spawn({
                let done = Arc::clone(&done);
                let run = run.to_string();
                move || follow(&store, &run, &control, &done)
            })?;
        Ok(Self {
            done,
            thread: Some(thread),
        })
    }
}

fn follow(store: &Store, run: &str, control: &RunControl, done: &AtomicBool) {
    while !done.load(Ordering::SeqCst) {
        match store.run_request(run) {
            Ok(Some(RunRequest::Pause)) => control.pause(),
            Ok(Some(RunRequest::Resume)) => control.resume(),
            Ok(Some(RunRequest::Stop)) => control.stop(),
            Ok(None) | Err(_) => {}
        }
        std::thread::sleep(REQUEST_POLL);
    }
}

impl Drop for RequestFollower {
    fn drop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Keeps the store's view of a run's status and step activity current from its events:
/// a pause, a new phase and a phase's last unit at once, progress inside a phase at most
/// once a second.
pub struct ProgressWriter {
    store: Arc<Store>,
    run: String,
    paused: bool,
    written: Option<Instant>,
    phase: Option<(u64, Phase)>,
}

impl ProgressWriter {
    /// The writer of run `run`.
    pub fn new(store: Arc<Store>, run: &str) -> Self {
        Self {
            store,
            run: run.to_string(),
            paused: false,
            written: None,
            phase: None,
        }
    }

    /// Takes one of the run's events (a failed write only delays the next).
    pub fn see(&mut self, event: &RunEvent) {
        match *event {
            RunEvent::Paused => {
                self.paused = true;
                self.write(RunStatus::Paused, None);
            }
            RunEvent::Progress {
                step,
                phase,
                done,
                total,
            } => {
                let due = self.written.is_none_or(|at| at.elapsed() >= ACTIVITY_EVERY);
                let new_phase = self.phase != Some((step, phase));
                if self.paused || due || new_phase || done >= total {
                    self.paused = false;
                    self.phase = Some((step, phase));
                    let activity = RunActivity {
                        step,
                        phase,
                        done,
                        total,
                    };
                    self.write(RunStatus::Running, Some(activity));
                }
            }
            _ => {}
        }
    }

    fn write(&mut self, status: RunStatus, activity: Option<RunActivity>) {
        if self
            .store
            .set_run_progress(&self.run, status, activity)
            .is_ok()
        {
            self.written = Some(Instant::now());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::RunKind;

    #[test]
    fn progress_is_written_at_phase_edges_and_at_most_once_a_second_inside() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(&dir.path().join("store")).unwrap());
        let template = RunInfo::new(String::new(), RunKind::Grpo, 0, "m".into(), 5);
        let run = store.create_run(&template).unwrap();
        let mut writer = ProgressWriter::new(Arc::clone(&store), &run);
        let stored = || {
            let info = store.get_run(&run).unwrap().unwrap();
            (
                info.status,
                info.activity.map(|a| (a.step, a.phase, a.done)),
            )
        };
        let progress = |step, phase, done, total| RunEvent::Progress {
            step,
            phase,
            done,
            total,
        };
        writer.see(&progress(1, Phase::Rollouts, 1, 64));
        assert_eq!(
            stored(),
            (RunStatus::Running, Some((1, Phase::Rollouts, 1)))
        );
        writer.see(&progress(1, Phase::Rollouts, 2, 64));
        assert_eq!(
            stored().1,
            Some((1, Phase::Rollouts, 1)),
            "inside a phase: throttled"
        );
        writer.see(&progress(1, Phase::Rollouts, 64, 64));
        assert_eq!(
            stored().1,
            Some((1, Phase::Rollouts, 64)),
            "a phase's end is written"
        );
        writer.see(&progress(1, Phase::Update, 0, 4));
        assert_eq!(stored().1, Some((1, Phase::Update, 0)), "so is a new phase");
        writer.see(&RunEvent::Paused);
        assert_eq!(stored(), (RunStatus::Paused, None));
        writer.see(&progress(2, Phase::Rollouts, 0, 64));
        assert_eq!(
            stored(),
            (RunStatus::Running, Some((2, Phase::Rollouts, 0)))
        );
    }

    #[test]
    fn this_process_lives_and_a_made_up_one_does_not() {
        let me = this_process();
        assert!(me.started_ticks > 0);
        assert!(process_lives(&me));
        let gone = RunProcess {
            started_ticks: me.started_ticks + 1,
            ..me.clone()
        };
        assert!(
            !process_lives(&gone),
            "the same pid started at another time"
        );
        let elsewhere = RunProcess {
            host: format!("{}-elsewhere", me.host),
            ..gone
        };
        assert!(
            process_lives(&elsewhere),
            "another machine's process is not judged"
        );
    }
}
