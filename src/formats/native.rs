//! Rollscope's own JSONL: one trajectory (or one task) per line, exactly as the data model
//! serialises, so an export and a re-import give equal records.

use super::intake::Intake;
use super::{ExportItem, ImportError, ImportReport, Item, jsonl};
use crate::trajectory::{Task, Trajectory};
use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

/// Whether a JSON object with these keys looks like one of our trajectories or tasks.
pub fn looks_like(has: &impl Fn(&str) -> bool) -> bool {
    has("id") && ((has("messages") && has("source_format")) || (has("source") && has("prompt")))
}

/// Reads trajectories and tasks, one per line.
pub fn read(path: &Path, intake: &mut Intake<'_, '_>) -> Result<ImportReport, ImportError> {
    jsonl::read_own_lines(path, intake, |text| {
        match serde_json::from_str::<Trajectory>(text) {
            Ok(trajectory) => Ok(vec![Item::Trajectory(Box::new(trajectory))]),
            Err(trajectory_error) => serde_json::from_str::<Task>(text)
                .map(|task| vec![Item::Task(Box::new(task))])
                .map_err(|_| format!("not a Rollscope trajectory: {trajectory_error}")),
        }
    })
}

/// Writes each trajectory as one JSON line, each task the first time a trajectory refers to
/// it just before that trajectory, so a re-import restores both; returns how many
/// trajectories were written.
pub fn write(
    items: &mut dyn Iterator<Item = anyhow::Result<ExportItem>>,
    out: &mut dyn Write,
) -> anyhow::Result<usize> {
    let mut written = 0;
    let mut tasks_written = HashSet::new();
    for item in items {
        let item = item?;
        if let Some(task) = &item.task
            && tasks_written.insert(task.id.clone())
        {
            serde_json::to_writer(&mut *out, task)?;
            out.write_all(b"\n")?;
        }
        serde_json::to_writer(&mut *out, &item.trajectory)?;
        out.write_all(b"\n")?;
        written += 1;
    }
    Ok(written)
}
