//! An SFT run: length-bucketed batches of examples, masked cross-entropy, AdamW with warmup
//! and linear decay, checkpoints, metrics rows, an evaluation at the end and the trained
//! policy saved as a model folder of the session.

use super::config::RunConfig;
use super::control::{Phase, RunEvent};
use super::examples::sft_examples;
use super::lifecycle::{RunFiles, discard_after, load_run, record_status, start_run};
use super::{RunContext, RunOutcome, evaluate_policy, save_final_policy};
use crate::model::LanguageModel;
use crate::train::schedule::LrSchedule;
use crate::train::{
    BatchLimits, CheckpointMeta, MetricsWriter, SftExample, Trainer, checkpoint_dir,
    latest_checkpoint, length_batches, metrics_row,
};
use crate::trajectory::{RunInfo, RunKind, RunStatus};
use serde_json::json;
use std::time::Instant;

/// Starts a new SFT run.
pub fn train_sft(
    context: &RunContext,
    config: &RunConfig,
    on_event: &mut dyn FnMut(RunEvent),
) -> anyhow::Result<RunOutcome> {
    let model_dir = super::lifecycle::starting_model(&context.paths, config)?;
    let model = LanguageModel::load(&model_dir, &context.load)?;
    let data = sft_examples(&model.chat, config, model.config.max_position_embeddings)?;
    let total = plan(config, &data.examples).len() as u64;
    let (info, files) = start_run(
        &context.store,
        &context.paths,
        config,
        RunKind::Sft,
        &model_dir,
        total,
    )?;
    let trainer = Trainer::new(model, trainer_config(config, total))?;
    let metrics = MetricsWriter::open(&files.metrics())?;
    let meta = CheckpointMeta {
        base_model: Some(model_dir.display().to_string()),
        parent: Some(model_dir.display().to_string()),
        extra: json!({}),
    };
    let run = SftRun {
        info,
        files,
        metrics,
        meta,
        examples: data.examples,
        step: 0,
    };
    run.go(context, config, trainer, on_event)
}

/// Continues SFT run `id` from its latest checkpoint.
pub fn resume_sft(
    context: &RunContext,
    id: &str,
    on_event: &mut dyn FnMut(RunEvent),
) -> anyhow::Result<RunOutcome> {
    let (info, config, files) = load_run(&context.store, &context.paths, id)?;
    anyhow::ensure!(
        info.kind == RunKind::Sft,
        "run {id} is a {} run, not SFT",
        info.kind.as_str()
    );
    let Some(checkpoint) = latest_checkpoint(&files.checkpoints())? else {
        anyhow::bail!(
            "run {id} has no checkpoint yet (it saves one every {} steps); start it again with \
             `rollscope train sft --config {}`",
            config.checkpoint_every,
            files.config().display()
        );
    };
    let (trainer, state) = Trainer::load_checkpoint(&checkpoint, &context.load)?;
    let step = state.step;
    discard_after(&context.store, id, step)?;
    let model = LanguageModel::load(std::path::Path::new(&info.model), &context.load)?;
    let data = sft_examples(&model.chat, &config, model.config.max_position_embeddings)?;
    let metrics = MetricsWriter::resume(&files.metrics(), step)?;
    let meta = CheckpointMeta {
        base_model: state.base_model.clone(),
        parent: state.parent.clone(),
        extra: state.extra.clone(),
    };
    let run = SftRun {
        info,
        files,
        metrics,
        meta,
        examples: data.examples,
        step,
    };
    run.go(context, &config, trainer, on_event)
}

/// The batches of every epoch, in order: `(epoch, indices)`.
fn plan(config: &RunConfig, examples: &[SftExample]) -> Vec<(u64, Vec<usize>)> {
    let lengths: Vec<usize> = examples.iter().map(|e| e.len()).collect();
    (0..config.sft.epochs as u64)
        .flat_map(|epoch| {
            length_batches(&lengths, limits(config), config.seed, epoch)
                .into_iter()
                .map(move |batch| (epoch, batch))
        })
        .collect()
}

fn limits(config: &RunConfig) -> BatchLimits {
    BatchLimits {
        max_sequences: config.sft.batch_size,
        max_tokens: config.sft.batch_tokens,
    }
}

/// The trainer settings of a run: its seed, and warmup-then-decay over `total` steps when
/// the config asks for it.
pub fn trainer_config(config: &RunConfig, total: u64) -> crate::train::TrainerConfig {
    let mut trainer = config.trainer.clone();
    trainer.seed = config.seed;
    if config.warmup_decay {
        trainer.schedule = LrSchedule::warmup_then_decay(total.max(1));
    }
    trainer
}

struct SftRun {
    info: RunInfo,
    files: RunFiles,
    metrics: MetricsWriter,
    meta: CheckpointMeta,
    examples: Vec<SftExample>,
    step: u64,
}

impl SftRun {
    fn go(
        mut self,
        context: &RunContext,
        config: &RunConfig,
        mut trainer: Trainer,
        on_event: &mut dyn FnMut(RunEvent),
    ) -> anyhow::Result<RunOutcome> {
        let run = self.info.id.clone();
        let total = self.info.total_steps;
        on_event(RunEvent::Started {
            run: run.clone(),
            step: self.step,
            total_steps: total,
        });
        let plan = plan(config, &self.examples);
        let last = plan.len() as u64;
        let mut status = RunStatus::Done;
        let mut eval = None;
        for (step, (epoch, batch)) in (1..).zip(&plan) {
            if step <= self.step {
                continue;
            }
            if !context
                .control
                .wait_while_paused(|| on_event(RunEvent::Paused))
            {
                status = RunStatus::Stopped;
                break;
            }
            let started = Instant::now();
            let examples: Vec<_> = batch.iter().map(|&i| &self.examples[i]).collect();
            let figures = trainer.sft_step(&examples)?;
            let seconds = started.elapsed().as_secs_f64();
            self.step = step;
            let mut values = figures.metric_values();
            values.insert("epoch".into(), *epoch as f64 + 1.0);
            values.insert("step_time".into(), seconds);
            values.insert(
                "tokens_per_second".into(),
                figures.tokens as f64 / seconds.max(1e-9),
            );
            if step == last {
                let figures = evaluate_policy(context, config, &trainer, &run, step, on_event)?;
                values.extend(figures.metric_values());
                eval = Some(figures);
            }
            let row = metrics_row(&run, step, values);
            context.store.put_metrics(&row)?;
            self.metrics.append(&row)?;
            on_event(RunEvent::Step(row));
            let every = config.checkpoint_every;
            if step == last || (every > 0 && step % every == 0) {
                self.checkpoint(context, &trainer, on_event)?;
            }
        }
        if status == RunStatus::Stopped {
            self.checkpoint(context, &trainer, on_event)?;
        }
        let model = save_final_policy(context, &trainer, &run)?;
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

    fn checkpoint(
        &mut self,
        context: &RunContext,
        trainer: &Trainer,
        on_event: &mut dyn FnMut(RunEvent),
    ) -> anyhow::Result<()> {
        on_event(progress(self.step, Phase::Checkpoint));
        let dir = checkpoint_dir(&self.files.checkpoints(), self.step);
        trainer.save_checkpoint(&dir, &self.meta)?;
        record_status(
            &context.store,
            &mut self.info,
            self.step,
            RunStatus::Running,
        )
    }
}

fn progress(step: u64, phase: Phase) -> RunEvent {
    RunEvent::Progress {
        step,
        phase,
        done: 0,
        total: 1,
    }
}
