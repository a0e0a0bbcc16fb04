//! The life every training run shares, SFT and GRPO alike: start (a fresh record, folder and
//! metrics file), resume (the latest checkpoint, with what later steps left behind removed),
//! one metrics row per step, checkpoints, and the finish (the final policy saved, the
//! status recorded).

use super::config::RunConfig;
use super::control::RunEvent;
use super::lifecycle::{RunFiles, discard_after, load_run, record_status, start_run};
use super::{EvalFigures, RunContext, RunOutcome, save_final_policy};
use crate::train::{
    CheckpointMeta, MetricsWriter, RunState, Trainer, TrainerState, checkpoint_dir,
    latest_checkpoint, metrics_row,
};
use crate::trajectory::Phase;
use crate::trajectory::{RunInfo, RunKind, RunStatus};
use anyhow::Context;
use std::collections::BTreeMap;
use std::path::Path;

/// A run's bookkeeping: its record in the store, its folder and metrics file, what its
/// checkpoints record, and the last step it completed.
pub(super) struct RunRecord {
    /// The run's record in the store.
    pub info: RunInfo,
    /// Its folder.
    pub files: RunFiles,
    /// `metrics.jsonl`.
    pub metrics: MetricsWriter,
    /// What each checkpoint records besides the weights.
    pub meta: CheckpointMeta,
    /// The last step completed.
    pub step: u64,
}

/// A stored run opened to continue: its record (rows past the checkpoint removed), its
/// config, and the trainer of its latest checkpoint when it has one.
pub(super) struct Resumed {
    /// The run's bookkeeping, at the checkpoint's step.
    pub record: RunRecord,
    /// The config the run was started with.
    pub config: RunConfig,
    /// The trainer of the latest checkpoint.
    pub trainer: Option<Trainer>,
}

impl RunRecord {
    /// Registers a new run of `kind` that starts from `model` and takes `total_steps`.
    pub fn start(
        context: &RunContext,
        config: &RunConfig,
        kind: RunKind,
        model: &Path,
        total_steps: u64,
    ) -> anyhow::Result<Self> {
        let (info, files) = start_run(
            &context.store,
            &context.paths,
            config,
            kind,
            model,
            total_steps,
        )?;
        Ok(Self {
            metrics: MetricsWriter::open(&files.metrics())?,
            meta: CheckpointMeta {
                base_model: Some(model.display().to_string()),
                parent: Some(model.display().to_string()),
                run_state: RunState::default(),
            },
            info,
            files,
            step: 0,
        })
    }

    /// Opens run `id` (which must be of `kind`) at its latest checkpoint, whose step
    /// `step_of` reads; without a checkpoint it restarts from step 0 when `restartable`,
    /// and refuses otherwise.
    pub fn resume(
        context: &RunContext,
        id: &str,
        kind: RunKind,
        restartable: bool,
        step_of: impl Fn(&TrainerState) -> anyhow::Result<u64>,
    ) -> anyhow::Result<Resumed> {
        let (info, config, files) = load_run(&context.store, &context.paths, id)?;
        if let Some(process) = &info.process
            && matches!(info.status, RunStatus::Running | RunStatus::Paused)
            && process.pid != std::process::id()
            && super::live::process_lives(process)
        {
            anyhow::bail!(
                "run {id} is training in process {} on {}; stop it first with `rollscope runs \
                 stop {id}` (or `x` in the TUI's Runs tab)",
                process.pid,
                process.host
            );
        }
        anyhow::ensure!(
            info.kind == kind,
            "run {id} is a {} run, not {}",
            info.kind.as_str(),
            kind.as_str().to_uppercase()
        );
        let (trainer, step, meta) = match latest_checkpoint(&files.checkpoints())? {
            Some(checkpoint) => {
                let (trainer, state) = Trainer::load_checkpoint(&checkpoint, &context.load)?;
                let step = step_of(&state)
                    .with_context(|| format!("resuming run {id} from {}", checkpoint.display()))?;
                let meta = CheckpointMeta {
                    base_model: state.base_model,
                    parent: state.parent,
                    run_state: state.run_state,
                };
                (Some(trainer), step, meta)
            }
            None if restartable => {
                let meta = CheckpointMeta {
                    base_model: Some(info.model.clone()),
                    parent: Some(info.model.clone()),
                    run_state: RunState::default(),
                };
                (None, 0, meta)
            }
            None => anyhow::bail!(
                "run {id} has no checkpoint yet (it saves one every {} steps); start it again \
                 with `rollscope train {} --config {}`",
                config.checkpoint_every,
                kind.as_str(),
                files.config().display()
            ),
        };
        discard_after(&context.store, id, step)?;
        let mut info = info;
        info.process = Some(super::live::this_process());
        record_status(&context.store, &mut info, step, RunStatus::Running)?;
        let record = Self {
            metrics: MetricsWriter::resume(&files.metrics(), step)?,
            info,
            files,
            meta,
            step,
        };
        Ok(Resumed {
            record,
            config,
            trainer,
        })
    }

    /// Records step `step`'s metrics in the store and `metrics.jsonl`, and reports them.
    pub fn record_step(
        &mut self,
        context: &RunContext,
        step: u64,
        values: BTreeMap<String, f64>,
        on_event: &mut dyn FnMut(RunEvent),
    ) -> anyhow::Result<()> {
        self.step = step;
        let row = metrics_row(&self.info.id, step, values);
        context.store.put_metrics(&row)?;
        self.metrics.append(&row)?;
        record_status(&context.store, &mut self.info, step, RunStatus::Running)?;
        on_event(RunEvent::Step(row));
        Ok(())
    }

    /// Saves a checkpoint of the trainer at the current step and records the progress.
    pub fn checkpoint(
        &mut self,
        context: &RunContext,
        trainer: &Trainer,
        on_event: &mut dyn FnMut(RunEvent),
    ) -> anyhow::Result<()> {
        on_event(RunEvent::Progress {
            step: self.step,
            phase: Phase::Checkpoint,
            done: 0,
            total: 1,
        });
        let dir = checkpoint_dir(&self.files.checkpoints(), self.step);
        trainer.save_checkpoint(&dir, &self.meta)?;
        record_status(
            &context.store,
            &mut self.info,
            self.step,
            RunStatus::Running,
        )
    }

    /// Saves the final policy, records how the run ended and reports it.
    pub fn finish(
        mut self,
        context: &RunContext,
        trainer: &Trainer,
        status: RunStatus,
        eval: Option<EvalFigures>,
        on_event: &mut dyn FnMut(RunEvent),
    ) -> anyhow::Result<RunOutcome> {
        let run = self.info.id.clone();
        let model = save_final_policy(context, trainer, &run)?;
        record_status(&context.store, &mut self.info, self.step, status)?;
        on_event(RunEvent::Finished {
            status,
            model: Some(model.clone()),
        });
        Ok(RunOutcome {
            run,
            status,
            step: self.step,
            model,
            eval,
        })
    }
}
