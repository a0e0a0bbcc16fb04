//! The store writer of an import: records are parsed on the calling thread and written in
//! batches (bounded by count and text size) on a thread of its own, so parsing and storing
//! overlap, and the records of many small files (a Harbor job's trials) share batches
//! instead of paying a durable write each. Every item pushed is durable once
//! `with_writer` returns `Ok`.

use crate::formats::Item;
use crate::store::Store;
use crate::trajectory::{Task, Trajectory, TrajectoryId};
use std::collections::HashMap;
use std::sync::mpsc;

/// Records per write batch, at most.
const BATCH: usize = 1000;

/// Text per write batch, at most (bytes of message content and tool arguments), so large
/// records (agent transcripts of tens of KiB) travel in smaller batches and memory stays low.
const BATCH_TEXT_BYTES: usize = 12 << 20;

#[derive(Default)]
struct Batch {
    trajectories: Vec<Trajectory>,
    files: Vec<usize>,
    tasks: Vec<Task>,
    text_bytes: usize,
}

impl Batch {
    fn push(&mut self, item: Item, file: usize) {
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
                self.files.push(file);
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

/// Hands items to the writer thread.
pub struct Writer {
    sender: mpsc::SyncSender<Batch>,
    written: mpsc::Receiver<Batch>,
    batch: Batch,
}

impl Writer {
    /// Queues an item read from file number `file`; a full batch goes to the writer.
    pub fn push(&mut self, item: Item, file: usize) -> anyhow::Result<()> {
        // Written batches come back to be freed where they were allocated: freed on the
        // writer, every record would take the parser's malloc arena lock from under it.
        self.written.try_iter().for_each(drop);
        self.batch.push(item, file);
        if self.batch.is_full() {
            self.sender
                .send(std::mem::take(&mut self.batch))
                .map_err(|_| anyhow::anyhow!("the store writer stopped"))?;
        }
        Ok(())
    }
}

/// How many trajectories of each file the store held already, by file number.
pub type AlreadyStored = HashMap<usize, usize>;

/// Runs `body` with a writer into `store`; returns what it returned and, per file, how many
/// of its trajectories were stored before (the same content), once every item is durable.
pub fn with_writer<T>(
    store: &Store,
    body: impl FnOnce(&mut Writer) -> anyhow::Result<T>,
) -> anyhow::Result<(T, AlreadyStored)> {
    std::thread::scope(|scope| {
        let (sender, receiver) = mpsc::sync_channel::<Batch>(1);
        let (written_sender, written) = mpsc::channel::<Batch>();
        let thread = scope.spawn(move || -> anyhow::Result<AlreadyStored> {
            let mut already = AlreadyStored::new();
            for batch in receiver {
                store.put_tasks(&batch.tasks)?;
                let mut left_out: HashMap<TrajectoryId, usize> = HashMap::new();
                for id in store.add_trajectories(&batch.trajectories)? {
                    *left_out.entry(id).or_default() += 1;
                }
                // The store keeps the first of repeated ids: the later ones were left out.
                for (trajectory, file) in batch.trajectories.iter().zip(&batch.files).rev() {
                    if let Some(count) =
                        left_out.get_mut(&trajectory.id).filter(|count| **count > 0)
                    {
                        *count -= 1;
                        *already.entry(*file).or_default() += 1;
                    }
                }
                let _ = written_sender.send(batch);
            }
            Ok(already)
        });
        let mut writer = Writer {
            sender,
            written,
            batch: Batch::default(),
        };
        let result = body(&mut writer);
        let Writer {
            sender,
            written,
            batch,
        } = writer;
        let last = sender.send(batch);
        drop(sender);
        let finished = thread
            .join()
            .map_err(|_| anyhow::anyhow!("the store writer panicked"));
        written.try_iter().for_each(drop);
        crate::allocator::release_free_memory();
        let already = finished??;
        last.map_err(|_| anyhow::anyhow!("the store writer stopped"))?;
        Ok((result?, already))
    })
}
