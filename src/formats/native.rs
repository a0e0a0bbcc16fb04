//! Rollscope's own JSONL: one trajectory (or one task) per line, exactly as the data model
//! serialises, so an export and a re-import give equal records.

use super::{ExportItem, ImportError, ImportReport, Item, Sink, jsonl};
use crate::trajectory::{Task, Trajectory};
use serde_json::Value;
use std::io::Write;
use std::path::Path;

/// Whether a JSON object looks like one of our trajectories or tasks.
pub fn looks_like(value: &Value) -> bool {
    let has = |key: &str| value.get(key).is_some();
    (has("id") && has("messages") && has("source_format"))
        || (has("id") && has("source") && has("prompt"))
}

/// Reads trajectories and tasks, one per line.
pub fn read(path: &Path, sink: &mut Sink<'_>) -> Result<ImportReport, ImportError> {
    jsonl::read(path, sink, |_, value| {
        if value.get("messages").is_some() {
            serde_json::from_value::<Trajectory>(value)
                .map(|trajectory| vec![Item::Trajectory(Box::new(trajectory))])
                .map_err(|error| format!("not a Rollscope trajectory: {error}"))
        } else {
            serde_json::from_value::<Task>(value)
                .map(|task| vec![Item::Task(Box::new(task))])
                .map_err(|error| format!("not a Rollscope trajectory or task: {error}"))
        }
    })
}

/// Writes each trajectory as one JSON line.
pub fn write(
    items: &mut dyn Iterator<Item = anyhow::Result<ExportItem>>,
    out: &mut dyn Write,
) -> anyhow::Result<usize> {
    let mut written = 0;
    for item in items {
        let item = item?;
        serde_json::to_writer(&mut *out, &item.trajectory)?;
        out.write_all(b"\n")?;
        written += 1;
    }
    Ok(written)
}
