//! An SFT run: length-bucketed batches of examples, masked cross-entropy, AdamW with warmup
//! and linear decay, checkpoints, metrics rows, an evaluation at the end and the trained
//! policy saved as a model folder of the session.

use super::config::RunConfig;
use super::control::RunEvent;
use super::examples::sft_examples;
use super::lifecycle::starting_model;
use super::live::LiveRun;
use super::record::RunRecord;
use super::{RunContext, RunOutcome, evaluate_policy};
use crate::model::LanguageModel;
use crate::train::schedule::LrSchedule;
use crate::train::{BatchLimits, SftExample, Trainer, length_batches, random_batches};
use crate::trajectory::{RunKind, RunStatus, metric};
use anyhow::Context;
use std::path::Path;
use std::time::Instant;

/// Starts a new SFT run.
pub fn train_sft(
    context: &RunContext,
    config: &RunConfig,
    on_event: &mut dyn FnMut(RunEvent),
) -> anyhow::Result<RunOutcome> {
    context.check_tools(config)?;
    let model_dir = starting_model(&context.store, &context.paths, config)?;
    let model = LanguageModel::load(&model_dir, &context.load)?;
    let data = sft_examples(&model.chat, config, model.config.max_position_embeddings)?;
    let total = plan(config, &data.examples).len() as u64;
    let record = RunRecord::start(context, config, RunKind::Sft, &model_dir, total)?;
    let trainer = Trainer::new(model, trainer_config(config, total))?;
    let run = SftRun {
        record,
        examples: data.examples,
    };
    run.go(context, config, trainer, on_event)
}

/// Continues SFT run `id` from its latest checkpoint.
pub fn resume_sft(
    context: &RunContext,
    id: &str,
    on_event: &mut dyn FnMut(RunEvent),
) -> anyhow::Result<RunOutcome> {
    let resumed = RunRecord::resume(context, id, RunKind::Sft, false, |state| Ok(state.step))?;
    let trainer = resumed
        .trainer
        .context("a resumed SFT run has a checkpoint")?;
    let config = resumed.config;
    let model = LanguageModel::load(Path::new(&resumed.record.info.model), &context.load)?;
    let data = sft_examples(&model.chat, &config, model.config.max_position_embeddings)?;
    let run = SftRun {
        record: resumed.record,
        examples: data.examples,
    };
    run.go(context, &config, trainer, on_event)
}

/// The batches of every epoch, in order: `(epoch, indices)`.
fn plan(config: &RunConfig, examples: &[SftExample]) -> Vec<(u64, Vec<usize>)> {
    let lengths: Vec<usize> = examples.iter().map(|e| e.len()).collect();
    (0..config.sft.epochs as u64)
        .flat_map(|epoch| {
            let batches = if config.sft.group_by_length {
                length_batches(&lengths, limits(config), config.seed, epoch)
            } else {
                random_batches(&lengths, limits(config), config.seed, epoch)
            };
            batches.into_iter().map(move |batch| (epoch, batch))
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
    record: RunRecord,
    examples: Vec<SftExample>,
}

impl SftRun {
    fn go(
        mut self,
        context: &RunContext,
        config: &RunConfig,
        mut trainer: Trainer,
        on_event: &mut dyn FnMut(RunEvent),
    ) -> anyhow::Result<RunOutcome> {
        let run = self.record.info.id.clone();
        let mut live = LiveRun::start(context, &run)?;
        let on_event = &mut live.observe(on_event);
        on_event(RunEvent::Started {
            run: run.clone(),
            step: self.record.step,
            total_steps: self.record.info.total_steps,
        });
        let plan = plan(config, &self.examples);
        let last = plan.len() as u64;
        let mut status = RunStatus::Done;
        let mut eval = None;
        for (step, (epoch, batch)) in (1..).zip(&plan) {
            if step <= self.record.step {
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
            let figures = trainer.sft_step(&examples, config.sft.micro_batch_tokens)?;
            let seconds = started.elapsed().as_secs_f64();
            let mut values = figures.metric_values();
            values.insert(metric::EPOCH.into(), *epoch as f64 + 1.0);
            values.insert(metric::STEP_TIME.into(), seconds);
            values.insert(
                metric::TOKENS_PER_SECOND.into(),
                figures.tokens as f64 / seconds.max(1e-9),
            );
            if step == last {
                let figures = evaluate_policy(context, config, &trainer, &run, step, on_event)?;
                values.extend(figures.metric_values());
                eval = Some(figures);
            }
            self.record.record_step(context, step, values, on_event)?;
            let every = config.checkpoint_every;
            if step == last || (every > 0 && step % every == 0) {
                self.record.checkpoint(context, &trainer, on_event)?;
            }
        }
        if status == RunStatus::Stopped {
            self.record.checkpoint(context, &trainer, on_event)?;
        }
        self.record
            .finish(context, &trainer, status, eval, on_event)
    }
}
