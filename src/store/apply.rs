//! Runs a `Request` on a store of this process: the one place a request meets the store,
//! whether it came from this process's `Store` or through the session server's socket.

use super::wire::{Reply, Request};
use super::{LocalStore, StoreError, StoreResult};

/// Runs a request; the writes it makes are counted in the store's change stamp.
pub(super) fn apply(store: &LocalStore, request: Request<'_>) -> StoreResult<Reply> {
    let writes = request.writes();
    let reply = answer(store, request)?;
    store.changes.bump(writes);
    Ok(reply)
}

fn answer(store: &LocalStore, request: Request<'_>) -> StoreResult<Reply> {
    Ok(match request {
        Request::Hello { .. } => Reply::Done,
        Request::TrajectoryCount => Reply::Number(store.trajectory_count() as u64),
        Request::Get { id, trace: true } => Reply::Trajectory(store.get(id)?.map(Box::new)),
        Request::Get { id, trace: false } => {
            Reply::Trajectory(store.get_without_trace(id)?.map(Box::new))
        }
        Request::HasTrace(id) => Reply::Flag(store.has_trace(id)?),
        Request::Resolve(prefix) => Reply::Id(store.resolve(&prefix)?),
        Request::SizeOnDisk => Reply::Number(store.size_on_disk()?),
        Request::PutTrajectories(trajectories) => {
            store.put_trajectories(&trajectories)?;
            Reply::Done
        }
        Request::AddTrajectories(trajectories) => {
            Reply::Ids(store.add_trajectories(&trajectories)?)
        }
        Request::EditLabels { id, edit } => {
            Reply::Trajectory(Some(Box::new(store.edit_labels(id, edit)?)))
        }
        Request::DeleteTrajectories(ids) => Reply::Number(store.delete_trajectories(&ids)? as u64),
        Request::SummaryOf(id) => Reply::Summary(store.summary_of(id)?.map(Box::new)),
        Request::PutTasks(tasks) => {
            store.put_tasks(&tasks)?;
            Reply::Done
        }
        Request::GetTask(id) => Reply::Task(store.get_task(&id)?.map(Box::new)),
        Request::Tasks => Reply::Tasks(store.tasks()?),
        Request::TaskCount => Reply::Number(store.task_count() as u64),
        Request::PutRun(run) => {
            store.put_run(&run)?;
            Reply::Done
        }
        Request::GetRun(id) => Reply::Run(store.get_run(&id)?.map(Box::new)),
        Request::Runs => Reply::Runs(store.runs()?),
        Request::CreateRun(run) => Reply::Text(store.create_run(&run)?),
        Request::SetRunProgress {
            run,
            status,
            activity,
        } => {
            store.set_run_progress(&run, status, activity)?;
            Reply::Done
        }
        Request::RequestRun { run, request } => {
            store.request_run(&run, request)?;
            Reply::Done
        }
        Request::RunRequestOf(run) => Reply::RunRequest(store.run_request(&run)?),
        Request::PutMetrics(row) => {
            store.put_metrics(&row)?;
            Reply::Done
        }
        Request::Metrics(run) => Reply::Metrics(store.metrics(&run)?),
        Request::TruncateMetrics { run, after_step } => {
            Reply::Number(store.truncate_metrics(&run, after_step)? as u64)
        }
        Request::Ids(filter) => Reply::Ids(store.ids(&filter)?),
        Request::Query(query) => Reply::Summaries(store.query(&query)?),
        Request::Count(filter) => Reply::Number(store.count(&filter)? as u64),
        Request::SearchText(query) => Reply::Ids(store.search_text(&query)?),
        Request::TextHits { query, id } => Reply::Hits(store.text_hits(&query, id)?),
        Request::TextIndexSize => Reply::Number(store.text_index_size()?),
        Request::TextIndexBehind => Reply::Number(store.text_index_behind()?),
        Request::ListedIds(query) => Reply::Listed(store.listed_ids(&query)?),
        Request::SummariesOf(ids) => Reply::Summaries(store.summaries_of(&ids)?),
        Request::RebuildTextIndex => {
            store.rebuild_text_index()?;
            Reply::Done
        }
        Request::SchemaVersion => Reply::Number(u64::from(store.schema_version()?)),
        Request::Flush => {
            store.flush()?;
            Reply::Done
        }
        Request::Changes => Reply::Changes(store.changes.stamp()),
        Request::Compact => {
            return Err(StoreError::Invalid(
                "compaction needs the store itself, not a shared handle".into(),
            ));
        }
    })
}
