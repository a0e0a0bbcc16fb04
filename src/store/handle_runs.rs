//! The store handle's operations on runs that train while others watch: created under a
//! fresh id in one request, their progress set without rewriting their record, and what
//! users ask of them.

use super::StoreResult;
use super::handle::{Store, unexpected};
use super::wire::{Reply, Request};
use crate::trajectory::{RunActivity, RunInfo, RunRequest, RunStatus};
use std::borrow::Cow;

impl Store {
    /// Stores a new run under a fresh id and returns it: its own `id`, when not empty, as a
    /// folder name may hold it and made unique (`trl`, `trl-2`), else the next free id of its
    /// kind (`grpo-0007`); two processes starting runs at once get two ids.
    pub fn create_run(&self, run: &RunInfo) -> StoreResult<String> {
        match self.call(Request::CreateRun(Cow::Borrowed(run)))? {
            Reply::Text(id) => Ok(id),
            other => Err(unexpected(&other)),
        }
    }

    /// Sets a run's status and what its current step is doing, the rest of its record kept.
    pub fn set_run_progress(
        &self,
        run: &str,
        status: RunStatus,
        activity: Option<RunActivity>,
    ) -> StoreResult<()> {
        self.done(Request::SetRunProgress {
            run: Cow::Borrowed(run),
            status,
            activity,
        })
    }

    /// Records what a user asks of a run, for the process that trains it (`None` clears
    /// it).
    pub fn request_run(&self, run: &str, request: Option<RunRequest>) -> StoreResult<()> {
        self.done(Request::RequestRun {
            run: Cow::Borrowed(run),
            request,
        })
    }

    /// What a user last asked of a run.
    pub fn run_request(&self, run: &str) -> StoreResult<Option<RunRequest>> {
        match self.call(Request::RunRequestOf(Cow::Borrowed(run)))? {
            Reply::RunRequest(request) => Ok(request),
            other => Err(unexpected(&other)),
        }
    }
}
