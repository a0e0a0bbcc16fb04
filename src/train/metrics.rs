//! Metrics rows under the names users know from TRL and verl, and the append-only
//! `runs/<run>/metrics.jsonl` (one `MetricsRow` JSON object per line).

use super::error::{Result, TrainError};
use super::grpo::GrpoUpdate;
use super::sft::SftFigures;
use crate::trajectory::MetricsRow;
use crate::trajectory::metric;
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, count) = values.fold((0.0, 0usize), |(sum, count), v| (sum + v, count + 1));
    if count == 0 { 0.0 } else { sum / count as f64 }
}

impl GrpoUpdate {
    /// The update's figures, averaged over its iterations (`learning_rate`: the last one's):
    /// `loss`, `grad_norm`, `learning_rate`, `kl`, `entropy`, `clip_ratio/low_mean`,
    /// `clip_ratio/high_mean`, `clip_ratio/region_mean`, `policy_tokens`.
    pub fn metric_values(&self) -> BTreeMap<String, f64> {
        let all = &self.iterations;
        let figures = [
            (metric::LOSS, mean(all.iter().map(|i| i.loss))),
            (metric::GRAD_NORM, mean(all.iter().map(|i| i.grad_norm))),
            (
                metric::LEARNING_RATE,
                all.last().map_or(0.0, |last| last.learning_rate),
            ),
            (metric::KL, mean(all.iter().map(|i| i.objective.mean_kl))),
            (metric::ENTROPY, mean(all.iter().map(|i| i.entropy))),
            (
                metric::CLIP_LOW,
                mean(all.iter().map(|i| i.objective.clip_low)),
            ),
            (
                metric::CLIP_HIGH,
                mean(all.iter().map(|i| i.objective.clip_high)),
            ),
            (
                metric::CLIP_REGION,
                mean(all.iter().map(|i| i.objective.clip_region)),
            ),
            (
                metric::POLICY_TOKENS,
                all.first().map_or(0.0, |first| first.objective.tokens),
            ),
        ];
        figures
            .into_iter()
            .map(|(name, value)| (name.to_string(), value))
            .collect()
    }
}

impl SftFigures {
    /// The step's figures: `loss`, `mean_token_accuracy`, `grad_norm`, `learning_rate`,
    /// `policy_tokens`, `padded_tokens`.
    pub fn metric_values(&self) -> BTreeMap<String, f64> {
        [
            (metric::LOSS, self.loss),
            (metric::MEAN_TOKEN_ACCURACY, self.token_accuracy),
            (metric::GRAD_NORM, self.grad_norm),
            (metric::LEARNING_RATE, self.learning_rate),
            (metric::POLICY_TOKENS, self.tokens as f64),
            (metric::PADDED_TOKENS, self.padded_tokens as f64),
        ]
        .into_iter()
        .map(|(name, value)| (name.to_string(), value))
        .collect()
    }
}

/// A metrics row for `step` of `run`, stamped with the current time. Values that are not
/// finite are left out: JSON cannot hold them.
pub fn metrics_row(run: &str, step: u64, mut values: BTreeMap<String, f64>) -> MetricsRow {
    values.retain(|_, value| value.is_finite());
    MetricsRow {
        run: run.to_string(),
        step,
        time: chrono::Utc::now().timestamp_millis(),
        values,
    }
}

/// Appends metrics rows to a JSONL file, one complete line per write.
pub struct MetricsWriter {
    path: PathBuf,
    file: File,
}

impl MetricsWriter {
    /// Opens `path` for appending, creating it and its folders when needed.
    pub fn open(path: &Path) -> Result<Self> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| TrainError::io(parent, source))?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|source| TrainError::io(path, source))?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
        })
    }

    /// Opens `path` to continue a run resumed after step `last_step`: rows of later steps
    /// (written after the checkpoint) and a torn last line are dropped, so no row is
    /// duplicated when those steps run again.
    pub fn resume(path: &Path, last_step: u64) -> Result<Self> {
        if path.is_file() {
            let text =
                std::fs::read_to_string(path).map_err(|source| TrainError::io(path, source))?;
            let kept: String = text
                .lines()
                .filter(|line| {
                    serde_json::from_str::<MetricsRow>(line).is_ok_and(|row| row.step <= last_step)
                })
                .map(|line| format!("{line}\n"))
                .collect();
            let tmp = path.with_extension("jsonl.partial");
            std::fs::write(&tmp, kept).map_err(|source| TrainError::io(&tmp, source))?;
            File::open(&tmp)
                .and_then(|file| file.sync_all())
                .map_err(|source| TrainError::io(&tmp, source))?;
            std::fs::rename(&tmp, path).map_err(|source| TrainError::io(path, source))?;
        }
        Self::open(path)
    }

    /// Appends one row as a line and flushes it to the file.
    pub fn append(&mut self, row: &MetricsRow) -> Result<()> {
        let mut line = serde_json::to_string(row)
            .map_err(|error| TrainError::Input(format!("metrics row: {error}")))?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.flush())
            .map_err(|source| TrainError::io(&self.path, source))
    }

    /// The file written.
    pub fn path(&self) -> &Path {
        &self.path
    }
}
