//! The session's tasks by id, loaded once for a pass over many trajectories.

use crate::store::{Store, StoreResult};
use crate::trajectory::{Task, Trajectory};
use std::collections::HashMap;

/// Tasks by id.
#[derive(Clone, Debug, Default)]
pub struct TaskIndex {
    tasks: HashMap<String, Task>,
}

impl TaskIndex {
    /// Every task of the store.
    pub fn load(store: &Store) -> StoreResult<Self> {
        Ok(Self::from_tasks(store.tasks()?))
    }

    /// An index over the given tasks (a later task with an id already seen replaces it).
    pub fn from_tasks(tasks: impl IntoIterator<Item = Task>) -> Self {
        Self {
            tasks: tasks
                .into_iter()
                .map(|task| (task.id.clone(), task))
                .collect(),
        }
    }

    /// A task by id.
    pub fn get(&self, id: &str) -> Option<&Task> {
        self.tasks.get(id)
    }

    /// The task a trajectory attempts.
    pub fn of(&self, trajectory: &Trajectory) -> Option<&Task> {
        self.get(trajectory.task_id.as_deref()?)
    }

    /// The task set a task comes from, or `(no task)` when the store does not hold it.
    pub fn source(&self, id: &str) -> &str {
        self.get(id)
            .map_or("(no task)", |task| task.source.as_str())
    }

    /// The difficulty of a task, where its set defines one.
    pub fn difficulty(&self, id: &str) -> Option<u32> {
        self.get(id).and_then(|task| task.difficulty)
    }

    /// Number of tasks.
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }
}
