//! The manifest written beside each export (`<file>.manifest.json`): what was selected, by
//! which rules, from which runs and policy versions, how many records, the file's SHA-256,
//! when and by which Rollscope — so a dataset can be traced back to its rollouts.

use super::repair::Repair;
use super::select::{SelectionPreview, SelectionRules};
use crate::formats::ExportOptions;
use crate::store::{Filter, Summary};
use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The policy versions one run contributed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunVersions {
    /// The run (empty for trajectories without one).
    pub run: String,
    /// Its policy versions (training steps) that contributed, ascending.
    pub versions: Vec<u64>,
    /// Trajectories it contributed.
    pub trajectories: usize,
}

/// Counts of an export.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ExportCounts {
    /// Trajectories the filter matched.
    pub matched: usize,
    /// Trajectories handed to the writer (the selection, or every match).
    pub selected: usize,
    /// Records written.
    pub written: usize,
    /// Selected trajectories the format cannot hold (see the format's documentation).
    pub left_out_by_format: usize,
}

/// The record of one export.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The Rollscope version that wrote it.
    pub rollscope_version: String,
    /// When, in RFC 3339.
    pub created_at: String,
    /// The session it came from.
    pub session: Option<String>,
    /// The export's file name (the manifest sits beside it).
    pub file: String,
    /// The format's name.
    pub format: String,
    /// Format options (how tool-call arguments are written).
    pub options: ExportOptions,
    /// SHA-256 of the file, lowercase hex.
    pub sha256: String,
    /// Size of the file in bytes.
    pub bytes: u64,
    /// The filter, as the store reads it.
    pub filter: Filter,
    /// The filter in words.
    pub filter_description: String,
    /// The selection rules, when the export is a rejection-sampling selection.
    pub selection: Option<SelectionRules>,
    /// The rules in words.
    pub selection_description: Option<String>,
    /// What the selection kept and left out.
    pub preview: Option<SelectionPreview>,
    /// Counts.
    pub counts: ExportCounts,
    /// Runs and policy versions the exported trajectories were sampled by.
    pub sources: Vec<RunVersions>,
    /// The repaired samples among them: which failure each continues, from which turn, and
    /// the label (a person's or a suggestion) that placed the repair.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repairs: Vec<Repair>,
}

impl Manifest {
    /// The manifest path beside an export: `<file>.manifest.json`.
    pub fn path_for(export: &Path) -> PathBuf {
        let mut name = export.file_name().unwrap_or_default().to_os_string();
        name.push(".manifest.json");
        export.with_file_name(name)
    }

    /// Reads a manifest; errors name the file.
    pub fn read(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the manifest {}", path.display()))?;
        serde_json::from_str(&text)
            .with_context(|| format!("{} is not a Rollscope export manifest", path.display()))
    }

    /// Checks that `export` is the file this manifest describes (size and SHA-256).
    pub fn verify(&self, export: &Path) -> anyhow::Result<()> {
        use sha2::{Digest, Sha256};
        let mut file = std::fs::File::open(export)
            .with_context(|| format!("cannot read {}", export.display()))?;
        let mut hasher = Sha256::new();
        let bytes = std::io::copy(&mut file, &mut hasher)?;
        let sha256 = hex(&hasher.finalize());
        anyhow::ensure!(
            bytes == self.bytes && sha256 == self.sha256,
            "{} does not match its manifest: {bytes} bytes with SHA-256 {sha256}, the manifest says {} bytes with {}",
            export.display(),
            self.bytes,
            self.sha256
        );
        Ok(())
    }

    /// Writes the manifest as pretty JSON.
    pub fn write(&self, path: &Path) -> anyhow::Result<()> {
        let text = serde_json::to_string_pretty(self)?;
        std::fs::write(path, text + "\n")
            .with_context(|| format!("cannot write the manifest {}", path.display()))
    }
}

/// The runs and policy versions of a set of summaries, runs in name order.
pub fn sources(summaries: &[Summary]) -> Vec<RunVersions> {
    let mut runs: BTreeMap<&str, (std::collections::BTreeSet<u64>, usize)> = BTreeMap::new();
    for summary in summaries {
        let entry = runs.entry(summary.run.as_str()).or_default();
        entry.0.extend(summary.step);
        entry.1 += 1;
    }
    runs.into_iter()
        .map(|(run, (versions, trajectories))| RunVersions {
            run: run.to_string(),
            versions: versions.into_iter().collect(),
            trajectories,
        })
        .collect()
}

/// Bytes as lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
