//! The engine: a worker thread that owns the store and does everything slow or durable for
//! the UI and the CLI, behind two typed channels (`Command` in, `Update` out).
//!
//! Commands are handled in the order sent. Quick store work runs on the worker thread;
//! exports get threads of their own that share the store and the update sender, so the
//! worker keeps answering while they run; training runs start in background processes of
//! their own (`launch`), which outlive the engine and are steered through the store.

mod activity;
mod command;
pub mod demo;
mod device;
mod fork_tree;
mod jobs;
mod launch;
mod overview;
mod spelling;
mod steering;
mod update;
mod worker;

pub use activity::Activity;
pub use command::{Command, GroupKey, LabelDraft, Listing, Tag};
pub use device::ComputeDevice;
pub use launch::{ForkLaunch, JOB_COMMAND, JobLauncher, JobSpec, Launched, Start};
pub use overview::Overview;
pub use spelling::{SpellingSource, TokenSpellings, visible};
pub use update::{EngineState, ExportProgress, LoadedGroup, LoadedTrajectory, Update, Window};

use crate::session::SessionPaths;
use crate::store::Store;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;

/// Settings the engine needs from the session.
#[derive(Clone, Debug, Default)]
pub struct EngineConfig {
    /// Who labels are attributed to.
    pub annotator: Option<String>,
    /// The session's folders, where launched runs find their model and write theirs (no
    /// session: runs cannot be launched).
    pub session: Option<SessionPaths>,
    /// The device launched runs train on (in its default dtype).
    pub device: ComputeDevice,
    /// Starts launched runs in background processes (none: runs cannot be launched).
    pub launcher: Option<JobLauncher>,
}

/// A running engine: send it commands; its updates arrive on the receiver `spawn` returned.
/// Dropping it lets the worker finish the commands already sent and waits for it; runs it
/// launched go on in their own processes.
pub struct Engine {
    commands: Option<Sender<Command>>,
    thread: Option<JoinHandle<()>>,
}

impl Engine {
    /// Starts the worker on its own thread over a shared store.
    pub fn spawn(
        store: Arc<Store>,
        config: EngineConfig,
    ) -> std::io::Result<(Self, Receiver<Update>)> {
        let (command_sender, command_receiver) = mpsc::channel();
        let (update_sender, update_receiver) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("rollscope-engine".into())
            .spawn(move || {
                worker::Worker::new(store, config, update_sender).run(command_receiver)
            })?;
        let engine = Self {
            commands: Some(command_sender),
            thread: Some(thread),
        };
        Ok((engine, update_receiver))
    }

    /// Sends a command; returns false when the engine has stopped.
    pub fn send(&self, command: Command) -> bool {
        self.commands
            .as_ref()
            .is_some_and(|sender| sender.send(command).is_ok())
    }

    /// Lets the worker finish the commands already sent and waits for it.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.commands = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.stop();
    }
}
