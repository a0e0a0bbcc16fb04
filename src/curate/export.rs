//! Writing a selection (or every trajectory a filter matches) to a file in an export format,
//! with its manifest beside it. Records are read without token traces unless the format keeps
//! them, decoded in parallel blocks while the previous block is written, so memory stays flat
//! and 100k trajectories export in seconds. The file appears whole or not at all (it is
//! written under a temporary name and renamed). A file named `*.parquet` gets the format's
//! records as parquet columns (what verl trains from) instead of JSONL.

use super::manifest::{ExportCounts, Manifest, hex, sources};
pub use super::records::decode_threads;
use super::records::map_records;
use super::repair::Repair;
use super::select::{SelectionRules, select_from};
use super::tasks::TaskIndex;
use crate::formats::{self, ExportItem, ExportOptions, Format};
use crate::store::{Filter, Query, Store, StoreError, Summary};
use crate::trajectory::TrajectoryId;
use anyhow::Context as _;
use sha2::{Digest, Sha256};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Instant;

/// Trajectories decoded per block.
const BLOCK: usize = 4096;

/// What to export, how and where.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportRequest {
    /// Which trajectories.
    pub filter: Filter,
    /// The rejection-sampling rules; `None` exports every trajectory the filter matches.
    pub selection: Option<SelectionRules>,
    /// The format.
    pub format: Format,
    /// Format options.
    pub options: ExportOptions,
    /// The file to write (its manifest goes beside it).
    pub path: PathBuf,
    /// The session's name, for the manifest.
    pub session: Option<String>,
    /// Repaired samples written after the selection, whatever the filter (the badcase
    /// loop's repair stage); the manifest lists them with the labels behind them.
    pub repairs: Vec<Repair>,
}

/// What an export wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportReport {
    /// The file written.
    pub path: PathBuf,
    /// Its manifest.
    pub manifest_path: PathBuf,
    /// The manifest's content.
    pub manifest: Manifest,
    /// Seconds it took.
    pub seconds: f64,
}

/// Selects, writes the file and its manifest; `progress` hears (written, total) as records
/// are written.
pub fn export_selection(
    store: &Store,
    request: &ExportRequest,
    progress: &mut dyn FnMut(usize, usize),
) -> anyhow::Result<ExportReport> {
    let started = Instant::now();
    anyhow::ensure!(
        request.format.can_export(),
        "{} cannot be written; export formats: {}",
        request.format,
        Format::export_names()
    );
    let summaries = store.query(&Query {
        filter: request.filter.clone(),
        ..Query::default()
    })?;
    let tasks = TaskIndex::load(store)?;
    let (mut chosen, preview): (Vec<Summary>, _) = match &request.selection {
        Some(rules) => {
            let selection = select_from(&summaries, &tasks, rules, &mut |id| {
                store
                    .get_without_trace(id)?
                    .ok_or_else(|| StoreError::NotFound(id.to_string()).into())
            })?;
            (selection.kept, Some(selection.preview))
        }
        None => (summaries.clone(), None),
    };
    let already: std::collections::HashSet<TrajectoryId> =
        chosen.iter().map(|summary| summary.id).collect();
    for repair in &request.repairs {
        if !already.contains(&repair.sample) {
            chosen.push(store.summary_of(repair.sample)?.with_context(|| {
                format!("the repaired sample {} is not in the store", repair.sample)
            })?);
        }
    }
    let ids: Vec<TrajectoryId> = chosen.iter().map(|summary| summary.id).collect();
    let path = &request.path;
    if let Some(parent) = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
    {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create the folder {}", parent.display()))?;
    }
    let mut partial_name = path.file_name().unwrap_or_default().to_os_string();
    partial_name.push(".partial");
    let partial = path.with_file_name(partial_name);
    let file = std::fs::File::create(&partial)
        .with_context(|| format!("cannot create {}", partial.display()))?;
    let mut out = BufWriter::with_capacity(1 << 20, Hashing::new(file));
    let parquet = path
        .extension()
        .is_some_and(|extension| extension == "parquet");
    let mut records = Vec::new();
    let target: &mut dyn Write = if parquet { &mut records } else { &mut out };
    let written = write_export(
        store,
        &tasks,
        &ids,
        request.format,
        &request.options,
        target,
        progress,
    );
    let written = written.and_then(|written| {
        if parquet {
            formats::write_parquet(&records, &mut out)?;
        }
        Ok(written)
    });
    let written = written.and_then(|written| {
        out.flush()?;
        Ok(written)
    });
    let written = match written {
        Ok(written) => written,
        Err(error) => {
            let _ = std::fs::remove_file(&partial);
            return Err(error);
        }
    };
    let hashing = out.into_inner().map_err(|error| {
        anyhow::anyhow!("cannot finish {}: {}", partial.display(), error.error())
    })?;
    let (sha256, bytes) = hashing.finish()?;
    std::fs::rename(&partial, path)
        .with_context(|| format!("cannot move {} to {}", partial.display(), path.display()))?;
    let manifest = Manifest {
        rollscope_version: env!("CARGO_PKG_VERSION").to_string(),
        created_at: chrono::Utc::now().to_rfc3339(),
        session: request.session.clone(),
        file: path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default(),
        format: request.format.name().to_string(),
        options: request.options,
        sha256,
        bytes,
        filter: request.filter.clone(),
        filter_description: request.filter.describe(),
        selection_description: request.selection.as_ref().map(SelectionRules::describe),
        selection: request.selection.clone(),
        preview,
        counts: ExportCounts {
            matched: summaries.len(),
            selected: ids.len(),
            written,
            left_out_by_format: ids.len().saturating_sub(written),
        },
        sources: sources(&chosen),
        repairs: request.repairs.clone(),
    };
    let manifest_path = Manifest::path_for(path);
    manifest.write(&manifest_path)?;
    Ok(ExportReport {
        path: path.clone(),
        manifest_path,
        manifest,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Writes the trajectories `ids` (with their tasks) in a format to `out`, decoding blocks in
/// parallel ahead of the writer; returns how many records were written.
pub fn write_export(
    store: &Store,
    tasks: &TaskIndex,
    ids: &[TrajectoryId],
    format: Format,
    options: &ExportOptions,
    out: &mut dyn Write,
    progress: &mut dyn FnMut(usize, usize),
) -> anyhow::Result<usize> {
    let with_trace = format.keeps_token_traces();
    let total = ids.len();
    std::thread::scope(|scope| {
        let (sender, receiver) = mpsc::sync_channel::<anyhow::Result<Vec<ExportItem>>>(2);
        scope.spawn(move || {
            for block in ids.chunks(BLOCK) {
                let items = map_records(store, block, with_trace, |trajectory| {
                    let task = tasks.of(&trajectory).cloned();
                    ExportItem { trajectory, task }
                })
                .map_err(anyhow::Error::from);
                let failed = items.is_err();
                if sender.send(items).is_err() || failed {
                    break;
                }
            }
        });
        let mut done = 0usize;
        let mut stream = receiver
            .into_iter()
            .flat_map(|block| match block {
                Ok(items) => items.into_iter().map(Ok).collect::<Vec<_>>(),
                Err(error) => vec![Err(error)],
            })
            .inspect(|_| {
                done += 1;
                if done.is_multiple_of(1024) || done == total {
                    progress(done, total);
                }
            });
        let written = formats::export_with(format, options, &mut stream, out);
        drop(stream);
        written
    })
}

/// A writer that hashes and counts what passes through it.
struct Hashing<W> {
    inner: W,
    hasher: Sha256,
    bytes: u64,
}

impl<W: Write> Hashing<W> {
    fn new(inner: W) -> Self {
        Self {
            inner,
            hasher: Sha256::new(),
            bytes: 0,
        }
    }

    /// Flushes; returns the SHA-256 (hex) and the byte count.
    fn finish(mut self) -> std::io::Result<(String, u64)> {
        self.inner.flush()?;
        Ok((hex(&self.hasher.finalize()), self.bytes))
    }
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let count = self.inner.write(buf)?;
        self.hasher.update(&buf[..count]);
        self.bytes += count as u64;
        Ok(count)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}
