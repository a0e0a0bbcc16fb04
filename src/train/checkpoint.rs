//! Checkpoints: an ordinary Hugging Face model folder (or a PEFT adapter folder when training
//! LoRA) plus `optimizer.safetensors` (AdamW moments) and `trainer_state.json` (step, seed,
//! config, parent, base model, code version, and the run's own state: [`RunState`]). Written to
//! a temporary folder, synced, then renamed into place, so a process killed mid-save leaves
//! every earlier checkpoint intact and never a half-written one under a checkpoint name.

use super::error::{Result, TrainError};
use super::trainer::{Trainer, TrainerConfig};
use crate::model::{LanguageModel, LoadOptions, save_tensors};
use candle_core::Tensor;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

/// The trainer state file of a checkpoint.
pub const TRAINER_STATE_FILE: &str = "trainer_state.json";
/// The optimizer state file of a checkpoint.
pub const OPTIMIZER_FILE: &str = "optimizer.safetensors";
const FORMAT: &str = "rollscope-trainer-state/1";
const PARTIAL: &str = ".partial";
const REPLACED: &str = ".replaced";

/// What a checkpoint records besides weights and optimizer moments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainerState {
    /// `rollscope-trainer-state/1`.
    pub format: String,
    /// Optimizer steps taken.
    pub step: u64,
    /// The seed every random choice of the run derives from.
    pub seed: u64,
    /// The trainer's settings.
    pub config: TrainerConfig,
    /// The model folder the run started from: its reference policy, and the base of LoRA.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_model: Option<String>,
    /// The checkpoint or model this run continued from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// The Rollscope version that wrote it.
    pub code_version: String,
    /// The run's own state (its id, GRPO step, curriculum level), for a resume; written as
    /// `run_state` (`extra` in checkpoints of earlier versions, which still read).
    #[serde(default, alias = "extra")]
    pub run_state: RunState,
}

/// What a run keeps in its checkpoints to resume where it stopped.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunState {
    /// The run the checkpoint belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// The GRPO step it was saved after (an SFT run's step is the optimizer step,
    /// [`TrainerState::step`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u64>,
    /// Where the curriculum stood.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curriculum: Option<CurriculumState>,
}

/// The curriculum's position, kept in checkpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CurriculumState {
    /// The level tasks are drawn at.
    pub level: u32,
}

/// What the caller adds to a checkpoint.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CheckpointMeta {
    /// The model folder the run started from (required to resume LoRA).
    pub base_model: Option<String>,
    /// The checkpoint or model this run continued from.
    pub parent: Option<String>,
    /// The run's own state, returned as is on resume.
    pub run_state: RunState,
}

/// `checkpoints/checkpoint-<step>`, the folder of the checkpoint after `step` steps.
pub fn checkpoint_dir(checkpoints: &Path, step: u64) -> PathBuf {
    checkpoints.join(format!("checkpoint-{step}"))
}

/// The complete checkpoint with the highest step under `checkpoints`, if any. Temporary
/// folders of interrupted saves are ignored, and a checkpoint that a save killed while
/// replacing it had moved aside is put back first.
pub fn latest_checkpoint(checkpoints: &Path) -> Result<Option<PathBuf>> {
    if !checkpoints.is_dir() {
        return Ok(None);
    }
    restore_replaced(checkpoints)?;
    let entries =
        std::fs::read_dir(checkpoints).map_err(|source| TrainError::io(checkpoints, source))?;
    let mut best: Option<(u64, PathBuf)> = None;
    for entry in entries {
        let path = entry
            .map_err(|source| TrainError::io(checkpoints, source))?
            .path();
        let step = path
            .file_name()
            .and_then(|name| name.to_str())
            .and_then(|name| name.strip_prefix("checkpoint-"))
            .and_then(|step| step.parse::<u64>().ok());
        if let Some(step) = step
            && path.join(TRAINER_STATE_FILE).is_file()
            && best.as_ref().is_none_or(|(best, _)| step > *best)
        {
            best = Some((step, path));
        }
    }
    Ok(best.map(|(_, path)| path))
}

/// Reads a checkpoint's `trainer_state.json`.
pub fn read_trainer_state(dir: &Path) -> Result<TrainerState> {
    let path = dir.join(TRAINER_STATE_FILE);
    let text = std::fs::read_to_string(&path).map_err(|source| TrainError::io(&path, source))?;
    let state: TrainerState = serde_json::from_str(&text)
        .map_err(|error| TrainError::file(&path, format!("not a trainer state: {error}")))?;
    if state.format != FORMAT {
        return Err(TrainError::file(
            &path,
            format!("format `{}`; this version reads `{FORMAT}`", state.format),
        ));
    }
    Ok(state)
}

impl Trainer {
    /// Saves a checkpoint into `dir` atomically (replacing one already there) and returns
    /// the state it recorded.
    pub fn save_checkpoint(&self, dir: &Path, meta: &CheckpointMeta) -> Result<TrainerState> {
        let state = TrainerState {
            format: FORMAT.into(),
            step: self.steps(),
            seed: self.config().seed,
            config: self.config().clone(),
            base_model: meta.base_model.clone(),
            parent: meta.parent.clone(),
            code_version: crate::trajectory::CODE_VERSION.to_string(),
            run_state: meta.run_state.clone(),
        };
        write_atomically(dir, |tmp| {
            match self.lora() {
                Some(adapters) => {
                    adapters.save(tmp, meta.base_model.as_deref().unwrap_or_default())?
                }
                None => self.model().save(tmp)?,
            }
            let moments: BTreeMap<String, Tensor> = self.optimizer().state().into_iter().collect();
            save_tensors(&moments, &tmp.join(OPTIMIZER_FILE))?;
            let text = serde_json::to_string_pretty(&state)
                .map_err(|error| TrainError::Input(format!("trainer state: {error}")))?;
            let path = tmp.join(TRAINER_STATE_FILE);
            std::fs::write(&path, text + "\n").map_err(|source| TrainError::io(&path, source))
        })?;
        Ok(state)
    }

    /// Resumes from a checkpoint: weights (or the LoRA base from `base_model` and the
    /// adapters), optimizer moments and step, so continuing computes what an uninterrupted
    /// run would have.
    pub fn load_checkpoint(dir: &Path, options: &LoadOptions) -> Result<(Self, TrainerState)> {
        let state = read_trainer_state(dir)?;
        let mut trainer = match &state.config.lora {
            Some(_) => {
                let base = state.base_model.as_deref().ok_or_else(|| {
                    TrainError::file(
                        &dir.join(TRAINER_STATE_FILE),
                        "a LoRA checkpoint needs `base_model`, the folder its adapters apply to",
                    )
                })?;
                let model = LanguageModel::load(Path::new(base), options)?;
                let trainer = Self::new(model, state.config.clone())?;
                if let Some(adapters) = trainer.lora() {
                    adapters.load_values(dir)?;
                }
                trainer
            }
            None => Self::new(LanguageModel::load(dir, options)?, state.config.clone())?,
        };
        let path = dir.join(OPTIMIZER_FILE);
        let moments = candle_core::safetensors::load(&path, trainer.model().device())
            .map_err(|error| TrainError::file(&path, format!("unreadable: {error}")))?;
        for (name, var) in trainer.trainable_parameters() {
            for key in [format!("exp_avg.{name}"), format!("exp_avg_sq.{name}")] {
                match moments.get(&key) {
                    Some(tensor) if tensor.dims() == var.dims() => {}
                    Some(tensor) => {
                        return Err(TrainError::file(
                            &path,
                            format!(
                                "`{key}` has shape {:?}, not {:?}",
                                tensor.dims(),
                                var.dims()
                            ),
                        ));
                    }
                    None => return Err(TrainError::file(&path, format!("no tensor `{key}`"))),
                }
            }
        }
        trainer.optimizer_mut().load_state(&moments, state.step)?;
        Ok((trainer, state))
    }
}

/// Runs `write` into a fresh temporary sibling of `dir`, syncs every file and the folder,
/// and renames it to `dir` (moving an existing `dir` aside first and removing it after).
pub fn write_atomically(dir: &Path, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let name = dir
        .file_name()
        .and_then(|name| name.to_str())
        .ok_or_else(|| TrainError::file(dir, "a checkpoint folder needs a name"))?;
    let parent = match dir.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(|source| TrainError::io(&parent, source))?;
    restore_replaced(&parent)?;
    let tmp = parent.join(format!(".{name}{PARTIAL}"));
    let old = parent.join(format!(".{name}{REPLACED}"));
    for leftover in [&tmp, &old] {
        if leftover.exists() {
            std::fs::remove_dir_all(leftover).map_err(|source| TrainError::io(leftover, source))?;
        }
    }
    std::fs::create_dir(&tmp).map_err(|source| TrainError::io(&tmp, source))?;
    write(&tmp)?;
    sync_folder(&tmp)?;
    if dir.exists() {
        std::fs::rename(dir, &old).map_err(|source| TrainError::io(dir, source))?;
    }
    std::fs::rename(&tmp, dir).map_err(|source| TrainError::io(dir, source))?;
    sync_path(&parent)?;
    if old.exists() {
        std::fs::remove_dir_all(&old).map_err(|source| TrainError::io(&old, source))?;
    }
    Ok(())
}

/// Moves `.<name>.replaced` folders back to `<name>` where `<name>` is missing: a save was
/// killed after moving the old copy aside and before putting the new one in place.
fn restore_replaced(parent: &Path) -> Result<()> {
    let entries = std::fs::read_dir(parent).map_err(|source| TrainError::io(parent, source))?;
    for entry in entries {
        let path = entry
            .map_err(|source| TrainError::io(parent, source))?
            .path();
        let original = path
            .file_name()
            .and_then(|name| name.to_str())
            .and_then(|name| name.strip_prefix('.'))
            .and_then(|name| name.strip_suffix(REPLACED))
            .map(|name| parent.join(name));
        if let Some(original) = original
            && !original.exists()
        {
            std::fs::rename(&path, &original).map_err(|source| TrainError::io(&path, source))?;
        }
    }
    Ok(())
}

fn sync_path(path: &Path) -> Result<()> {
    File::open(path)
        .and_then(|file| file.sync_all())
        .map_err(|source| TrainError::io(path, source))
}

fn sync_folder(dir: &Path) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|source| TrainError::io(dir, source))?;
    for entry in entries {
        let path = entry.map_err(|source| TrainError::io(dir, source))?.path();
        if path.is_file() {
            sync_path(&path)?;
        }
    }
    sync_path(dir)
}
