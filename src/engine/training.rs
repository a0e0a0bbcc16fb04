//! The training run the engine drives: a GRPO run on a thread of its own, steered through
//! its `RunControl`, its events forwarded as `Update::RunChanged` (and each step's metrics
//! row as `Update::MetricsAppended`, the row already stored).

use super::activity::Activity;
use super::update::{RunActivity, RunProgress, Update};
use crate::model::LoadOptions;
use crate::run::{RunConfig, RunContext, RunControl, RunEvent, resume_grpo, train_grpo};
use crate::session::SessionPaths;
use crate::store::Store;
use crate::trajectory::RunStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;

/// How a training thread begins.
pub(super) enum Start {
    /// A new GRPO run with this config.
    New(Box<RunConfig>),
    /// GRPO run `id` from its latest checkpoint.
    Resume(String),
}

/// What a run thread needs from the engine.
pub(super) struct Workspace {
    /// The session store.
    pub store: Arc<Store>,
    /// The session's folders.
    pub paths: SessionPaths,
    /// Device and dtype.
    pub load: LoadOptions,
    /// Where updates go.
    pub updates: Sender<Update>,
}

/// A training thread and the control that steers it.
pub(super) struct Training {
    run: Arc<OnceLock<String>>,
    ended: Arc<AtomicBool>,
    control: RunControl,
    thread: JoinHandle<()>,
}

impl Training {
    /// Starts a run on its own thread.
    pub(super) fn spawn(workspace: Workspace, start: Start) -> std::io::Result<Self> {
        let control = RunControl::new();
        let run = Arc::new(OnceLock::new());
        let ended = Arc::new(AtomicBool::new(false));
        if let Start::Resume(id) = &start {
            let _ = run.set(id.clone());
        }
        let thread = std::thread::Builder::new()
            .name("rollscope-run".into())
            .spawn({
                let control = control.clone();
                let run = Arc::clone(&run);
                let ended = Arc::clone(&ended);
                move || train(workspace, control, start, &run, &ended)
            })?;
        Ok(Self {
            run,
            ended,
            control,
            thread,
        })
    }

    /// The run id, once the run has started.
    pub(super) fn id(&self) -> Option<&str> {
        self.run.get().map(String::as_str)
    }

    /// Whether the run still trains (it has not reported its end; the thread may still be
    /// tidying up after it has).
    pub(super) fn is_live(&self) -> bool {
        !self.ended.load(Ordering::SeqCst) && !self.thread.is_finished()
    }

    /// The control of run `id`, when it is the one training.
    pub(super) fn control_of(&self, id: &str) -> anyhow::Result<&RunControl> {
        match self.id() {
            Some(live) if live == id && self.is_live() => Ok(&self.control),
            Some(live) if self.is_live() => {
                anyhow::bail!("{id} is not training in this session; {live} is")
            }
            _ => anyhow::bail!("{id} is not training in this session"),
        }
    }

    /// Asks a live run to stop after its current step (with a checkpoint) and waits for it.
    pub(super) fn finish(self) {
        if self.is_live() {
            self.control.stop();
            let _ = self.thread.join();
        }
    }
}

/// The body of a training thread: builds the run context, trains, reports.
fn train(
    workspace: Workspace,
    control: RunControl,
    start: Start,
    run: &OnceLock<String>,
    ended: &AtomicBool,
) {
    let mut reporter = Reporter {
        store: Arc::clone(&workspace.store),
        updates: workspace.updates.clone(),
        run,
        ended,
        progress: None,
    };
    let result = context(workspace, control).and_then(|context| {
        let on_event = &mut |event| reporter.on_event(event);
        match start {
            Start::New(config) => train_grpo(&context, &config, on_event),
            Start::Resume(id) => resume_grpo(&context, &id, on_event),
        }
    });
    if let Err(error) = result {
        reporter.failed(&format!("{error:#}"));
    }
}

/// The run context of a training thread: the session's tools and verifier, a fresh runtime.
fn context(workspace: Workspace, control: RunControl) -> anyhow::Result<RunContext> {
    RunContext::new(workspace.store, workspace.paths, workspace.load, control)
}

/// Turns run events into updates, keeping the run's last known progress.
struct Reporter<'a> {
    store: Arc<Store>,
    updates: Sender<Update>,
    run: &'a OnceLock<String>,
    ended: &'a AtomicBool,
    progress: Option<RunProgress>,
}

impl Reporter<'_> {
    fn on_event(&mut self, event: RunEvent) {
        if let RunEvent::Started {
            run,
            step,
            total_steps,
        } = &event
        {
            let _ = self.run.set(run.clone());
            self.progress = Some(RunProgress {
                run: run.clone(),
                status: RunStatus::Running,
                step: *step,
                total_steps: *total_steps,
                activity: None,
                error: None,
            });
        }
        let Some(progress) = &mut self.progress else {
            return;
        };
        match event {
            RunEvent::Started { .. } => {}
            RunEvent::Progress {
                step,
                phase,
                done,
                total,
            } => {
                progress.status = RunStatus::Running;
                progress.activity = Some(RunActivity {
                    step,
                    phase,
                    done,
                    total,
                });
            }
            RunEvent::Step(row) => {
                progress.step = row.step;
                progress.activity = None;
                let _ = self.updates.send(Update::MetricsAppended {
                    run: row.run.clone(),
                    rows: vec![row],
                });
            }
            RunEvent::Eval { .. } => return,
            RunEvent::Paused => {
                progress.status = RunStatus::Paused;
                progress.activity = None;
            }
            RunEvent::Finished { status, .. } => {
                progress.status = status;
                progress.activity = None;
                self.ended.store(true, Ordering::SeqCst);
            }
        }
        let _ = self.updates.send(Update::RunChanged(progress.clone()));
    }

    /// Reports a failure: on the run (marked failed in the store, the message in its note)
    /// once it has an id, else as a failed launch.
    fn failed(&mut self, message: &str) {
        self.ended.store(true, Ordering::SeqCst);
        let Some(run) = self.run.get() else {
            let _ = self.updates.send(Update::Failed {
                tag: None,
                during: Activity::LaunchingRun,
                message: message.to_string(),
            });
            return;
        };
        let mut progress = self.progress.take().unwrap_or_else(|| RunProgress {
            run: run.clone(),
            status: RunStatus::Failed,
            step: 0,
            total_steps: 0,
            activity: None,
            error: None,
        });
        if let Ok(Some(mut info)) = self.store.get_run(run) {
            info.status = RunStatus::Failed;
            info.note = Some(message.to_string());
            progress.step = info.step;
            progress.total_steps = info.total_steps;
            let _ = self.store.put_run(&info);
        }
        progress.status = RunStatus::Failed;
        progress.activity = None;
        progress.error = Some(message.to_string());
        let _ = self.updates.send(Update::RunChanged(progress));
    }
}
