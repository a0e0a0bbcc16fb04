//! Importing files into a store: records are parsed on the calling thread and written in
//! batches on another, so parsing and storing overlap. A run's output folder imports as a
//! run of its own (kind `import`): its records point at it and its metrics rows are its
//! (`folder`); a growing run is followed as it is written (`follow`).

mod folder;
mod follow;

pub use folder::{FolderImport, import_folder};
pub use follow::{FollowPoll, Follower, followed_paths, followed_roots, run_following};

use crate::formats::{self, ImportOptions, ImportReport, Item};
use crate::store::Store;
use crate::trajectory::{Task, Trajectory};
use std::path::Path;
use std::sync::mpsc;

/// Records per write batch, at most.
const BATCH: usize = 1000;

/// Text per write batch, at most (bytes of message content and tool arguments), so large
/// records (agent transcripts of tens of KiB) travel in smaller batches and memory stays low.
const BATCH_TEXT_BYTES: usize = 12 << 20;

#[derive(Default)]
struct Batch {
    trajectories: Vec<Trajectory>,
    tasks: Vec<Task>,
    text_bytes: usize,
}

impl Batch {
    fn push(&mut self, item: Item) {
        match item {
            Item::Trajectory(trajectory) => {
                self.text_bytes += trajectory
                    .messages
                    .iter()
                    .map(|message| {
                        message.content.len()
                            + message
                                .tool_calls
                                .iter()
                                .map(|call| call.arguments.len())
                                .sum::<usize>()
                    })
                    .sum::<usize>();
                self.trajectories.push(*trajectory);
            }
            Item::Task(task) => self.tasks.push(*task),
        }
    }

    fn is_full(&self) -> bool {
        self.trajectories.len() >= BATCH
            || self.tasks.len() >= BATCH
            || self.text_bytes >= BATCH_TEXT_BYTES
    }
}

/// Imports one file into the store. `on_record` is called for each record read (for
/// progress). Every record counted in the report is durable when this returns `Ok`; a
/// trajectory the store already holds (the same content, imported before) is not stored
/// again, and the report counts it as `already_stored`.
pub fn import_into(
    store: &Store,
    path: &Path,
    options: ImportOptions,
    on_record: &mut dyn FnMut(),
) -> anyhow::Result<ImportReport> {
    import_file_into(store, path, options, &mut |_| true, on_record)
}

/// `import_into`, with `admit` shown each item before it is stored: it may change the item,
/// and it drops the item by returning `false`. The report counts what the file held.
fn import_file_into(
    store: &Store,
    path: &Path,
    options: ImportOptions,
    admit: &mut dyn FnMut(&mut Item) -> bool,
    on_record: &mut dyn FnMut(),
) -> anyhow::Result<ImportReport> {
    std::thread::scope(|scope| {
        let (sender, receiver) = mpsc::sync_channel::<Batch>(1);
        // Written batches come back to be freed where they were allocated: freed on the
        // writer, every record would take the parser's malloc arena lock from under it.
        let (written_sender, written) = mpsc::channel::<Batch>();
        let writer = scope.spawn(move || -> anyhow::Result<usize> {
            let mut added = 0;
            for batch in receiver {
                store.put_tasks(&batch.tasks)?;
                added += store.add_trajectories(&batch.trajectories)?;
                let _ = written_sender.send(batch);
            }
            Ok(added)
        });
        let mut batch = Batch::default();
        let mut admitted = 0;
        let result = formats::import_file(path, options, &mut |mut item| {
            on_record();
            written.try_iter().for_each(drop);
            if !admit(&mut item) {
                return Ok(());
            }
            admitted += usize::from(matches!(item, Item::Trajectory(_)));
            batch.push(item);
            if batch.is_full() {
                sender
                    .send(std::mem::take(&mut batch))
                    .map_err(|_| anyhow::anyhow!("the store writer stopped"))?;
            }
            Ok(())
        });
        let last = sender.send(batch);
        drop(sender);
        let finished = writer
            .join()
            .map_err(|_| anyhow::anyhow!("the store writer panicked"));
        written.try_iter().for_each(drop);
        crate::allocator::release_free_memory();
        let added = finished??;
        last.map_err(|_| anyhow::anyhow!("the store writer stopped"))?;
        let mut report = result?;
        report.already_stored = admitted.saturating_sub(added);
        Ok(report)
    })
}

/// Gives a trajectory that names no run the import run `run`; returns its policy version.
fn claim(trajectory: &mut Trajectory, run: &str) -> u64 {
    if trajectory.run.is_none() {
        trajectory.run = Some(run.to_string());
    }
    trajectory.policy_version.unwrap_or(0)
}
