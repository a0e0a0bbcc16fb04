//! What a run's output folder holds for import: the files of records (TRL's
//! `completions/completions_NNNNN.parquet`, an Inspect log folder's `.eval` and `.json` logs,
//! SWE-agent `.traj` files, JSONL of any format) and its metrics (the newest
//! `checkpoint-N/trainer_state.json`, a top-level `trainer_state.json`, verl's file-logger
//! JSONL, our `metrics.jsonl`). Model and trainer files beside them (weights, configs,
//! tokenizers, optimizer states) are left alone, as are hidden files, our own manifests and
//! Harbor's job and trial bookkeeping (a job folder's records are its trials'
//! `agent/trajectory.json`, which read their trial's `result.json` themselves).

use std::path::{Path, PathBuf};

/// How deep below the folder files are looked for.
const MAX_DEPTH: usize = 4;

/// Extensions of files that can hold records.
const RECORD_EXTENSIONS: [&str; 5] = ["jsonl", "json", "parquet", "eval", "traj"];

/// Names of JSON files that model and trainer folders hold beside records.
const NOT_RECORDS: [&str; 11] = [
    "config.json",
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.json",
    "adapter_config.json",
    "preprocessor_config.json",
    "model.safetensors.index.json",
    "chat_template.json",
];

/// The name TRL (and every `transformers` trainer) gives its state with `log_history`.
pub const TRAINER_STATE: &str = "trainer_state.json";

/// What was found in a folder.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FolderContents {
    /// Files to import records from, sorted by path (TRL's completions in step order).
    pub records: Vec<PathBuf>,
    /// The file the run's metrics come from, if any.
    pub metrics: Option<PathBuf>,
}

impl FolderContents {
    /// Whether nothing importable was found.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty() && self.metrics.is_none()
    }
}

/// Finds what `dir` holds for import.
pub fn folder_contents(dir: &Path) -> std::io::Result<FolderContents> {
    let mut contents = FolderContents::default();
    let mut checkpoints: Vec<(u64, PathBuf)> = Vec::new();
    let mut top_state = None;
    let mut metrics_logs = Vec::new();
    walk(dir, 0, &mut |path, depth| {
        let name = path
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or("");
        if name == TRAINER_STATE {
            let parent = path
                .parent()
                .and_then(Path::file_name)
                .and_then(|name| name.to_str());
            match parent.and_then(checkpoint_number) {
                Some(number) => checkpoints.push((number, path.to_path_buf())),
                None if depth == 0 => top_state = Some(path.to_path_buf()),
                None => {}
            }
        } else if is_metrics_log(path) {
            metrics_logs.push(path.to_path_buf());
        } else if is_record_file(path) && !super::harbor::is_bookkeeping(path) {
            contents.records.push(path.to_path_buf());
        }
    })?;
    contents.records.sort();
    checkpoints.sort();
    metrics_logs.sort();
    contents.metrics = checkpoints
        .pop()
        .map(|(_, path)| path)
        .or(top_state)
        .or_else(|| metrics_logs.into_iter().next());
    Ok(contents)
}

/// Calls `found` with every file below `dir` (depth 0 for the folder's own files), skipping
/// hidden entries and the insides of checkpoints except their trainer state.
fn walk(dir: &Path, depth: usize, found: &mut dyn FnMut(&Path, usize)) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .collect();
    entries.sort();
    let in_checkpoint = dir
        .file_name()
        .and_then(|name| name.to_str())
        .and_then(checkpoint_number)
        .is_some();
    for path in entries {
        let name = path
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or("");
        if name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            if depth < MAX_DEPTH && !in_checkpoint {
                walk(&path, depth + 1, found)?;
            }
        } else if !in_checkpoint || name == TRAINER_STATE {
            found(&path, depth);
        }
    }
    Ok(())
}

/// `N` of a `checkpoint-N` folder name.
fn checkpoint_number(name: &str) -> Option<u64> {
    name.strip_prefix("checkpoint-")?.parse().ok()
}

/// Whether a file holds a run's metrics rather than records: a `trainer_state.json`, our
/// `metrics.jsonl`, or verl's file logger, whose lines are `{"step": N, "data": {…}}` (newer
/// verl adds `elapsed_seconds`).
pub fn is_metrics_file(path: &Path) -> bool {
    path.file_name().and_then(|name| name.to_str()) == Some(TRAINER_STATE) || is_metrics_log(path)
}

/// Whether a file is a metrics log: our `metrics.jsonl`, or verl's file logger.
fn is_metrics_log(path: &Path) -> bool {
    let name = path
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("");
    if name == "metrics.jsonl" {
        return true;
    }
    if !name.ends_with(".jsonl") {
        return false;
    }
    matches!(
        super::document::first_record(path),
        Ok(Some(serde_json::Value::Object(record)))
            if record.contains_key("step") && record.get("data").is_some_and(serde_json::Value::is_object)
    )
}

/// Whether a file may hold records: a known extension, not a model or trainer file, not a
/// manifest we wrote.
fn is_record_file(path: &Path) -> bool {
    let name = path
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("");
    let extension = path
        .extension()
        .and_then(|extension| extension.to_str())
        .unwrap_or("");
    RECORD_EXTENSIONS.contains(&extension)
        && !NOT_RECORDS.contains(&name)
        && !name.ends_with(".manifest.json")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trl_output_folder_gives_its_completions_and_newest_state() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for folder in ["completions", "checkpoint-2", "checkpoint-10", ".hidden"] {
            std::fs::create_dir(root.join(folder)).unwrap();
        }
        for file in [
            "completions/completions_00002.parquet",
            "completions/completions_00001.parquet",
            "checkpoint-2/trainer_state.json",
            "checkpoint-10/trainer_state.json",
            "checkpoint-10/config.json",
            "checkpoint-10/rng_state.json",
            ".hidden/a.jsonl",
            "config.json",
            "tokenizer.json",
            "model.safetensors",
            "export.jsonl.manifest.json",
        ] {
            std::fs::write(root.join(file), b"{}").unwrap();
        }
        let contents = folder_contents(root).unwrap();
        assert_eq!(
            contents.records,
            [
                root.join("completions/completions_00001.parquet"),
                root.join("completions/completions_00002.parquet"),
            ]
        );
        assert_eq!(
            contents.metrics,
            Some(root.join("checkpoint-10/trainer_state.json")),
            "the newest checkpoint by number, not by name"
        );
    }
}
