//! The records of runs that train while other processes watch: a run created under a fresh
//! id in one step (two processes starting runs at once get two ids), its status and step
//! activity updated without touching the rest of its record, and what users ask of it.

use super::{LocalStore, StoreError, StoreResult, keys};
use crate::trajectory::{RunActivity, RunInfo, RunRequest, RunStatus};

impl LocalStore {
    /// Stores `run` under a fresh id (its own `id`, when not empty, is the name wanted:
    /// an import's folder name) and returns that id; no other writer can take the same id.
    pub fn create_run(&self, run: &RunInfo) -> StoreResult<String> {
        let _guard = self.write_guard();
        let mut run = run.clone();
        run.id = self.fresh_run_id(&run.id, run.kind)?;
        self.insert_run(&run)?;
        Ok(run.id)
    }

    /// Sets a stored run's status and what its current step is doing, leaving the rest of
    /// its record as its trainer last wrote it.
    pub fn set_run_progress(
        &self,
        id: &str,
        status: RunStatus,
        activity: Option<RunActivity>,
    ) -> StoreResult<()> {
        let _guard = self.write_guard();
        let mut run = self
            .get_run(id)?
            .ok_or_else(|| StoreError::NotFound(format!("run {id}")))?;
        run.status = status;
        run.activity = activity;
        self.insert_run(&run)
    }

    /// Records what a user asks of run `id` (`None` clears it); the run must exist.
    pub fn request_run(&self, id: &str, request: Option<RunRequest>) -> StoreResult<()> {
        if self.get_run(id)?.is_none() {
            return Err(StoreError::NotFound(format!("run {id}")));
        }
        let key = keys::text_prefix(keys::RUN_REQUEST, id);
        match request {
            Some(request) => {
                let bytes = serde_json::to_vec(&request)
                    .map_err(|error| StoreError::Invalid(error.to_string()))?;
                self.db.insert(key, bytes)?;
            }
            None => {
                self.db.remove(key)?;
            }
        }
        self.db.flush()?;
        Ok(())
    }

    /// What a user last asked of run `id`, if anything.
    pub fn run_request(&self, id: &str) -> StoreResult<Option<RunRequest>> {
        let Some(bytes) = self.db.get(keys::text_prefix(keys::RUN_REQUEST, id))? else {
            return Ok(None);
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|error| StoreError::Corrupt {
                what: format!("the request to run {id}"),
                reason: error.to_string(),
            })
    }
}
