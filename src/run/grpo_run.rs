//! A GRPO run: per step, G rollouts of each task through the agent loop with the current
//! policy, group-relative advantages, μ clipped-objective updates against the behaviour
//! log-probs (and a frozen reference when β > 0), metrics, evaluation every N steps and
//! checkpoints that a resume continues from.

use super::config::RunConfig;
use super::control::{Phase, RunEvent};
use super::curriculum::{CurriculumState, TaskDraw};
use super::grpo_step::{
    Pending, StepRollouts, advantages, join_rollouts, roll_out, rollout_metrics,
};
use super::lifecycle::{
    RunFiles, discard_after, load_run, record_status, start_run, starting_model,
};
use super::sft_run::trainer_config;
use super::{
    EvalFigures, RunContext, RunOutcome, evaluate_policy, local_policy, policy_tokens,
    save_final_policy, snapshot_policy,
};
use crate::model::{LanguageModel, Qwen};
use crate::train::{
    CheckpointMeta, GrpoBatch, GrpoSample, MetricsWriter, Trainer, checkpoint_dir,
    latest_checkpoint, metrics_row, reference_from_folder,
};
use crate::trajectory::{RunInfo, RunKind, RunStatus, Task};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

/// Starts a new GRPO run.
pub fn train_grpo(
    context: &RunContext,
    config: &RunConfig,
    on_event: &mut dyn FnMut(RunEvent),
) -> anyhow::Result<RunOutcome> {
    let model_dir = starting_model(&context.paths, config)?;
    let model = LanguageModel::load(&model_dir, &context.load)?;
    let draw = TaskDraw::new(config)?;
    let (info, files) = start_run(
        &context.store,
        &context.paths,
        config,
        RunKind::Grpo,
        &model_dir,
        config.grpo.steps,
    )?;
    let optimizer_steps = config.grpo.steps * config.grpo.update.iterations as u64;
    let trainer = Trainer::new(model, trainer_config(config, optimizer_steps))?;
    let reference = match config.grpo.update.objective.beta != 0.0 {
        true => Some(trainer.reference_policy()?),
        false => None,
    };
    let run = GrpoRun {
        metrics: MetricsWriter::open(&files.metrics())?,
        meta: CheckpointMeta {
            base_model: Some(model_dir.display().to_string()),
            parent: Some(model_dir.display().to_string()),
            extra: json!({}),
        },
        info,
        files,
        draw,
        reference,
        step: 0,
        curriculum: CurriculumState {
            level: config.grpo.curriculum.start_level,
        },
        evaluated_start: false,
    };
    run.go(context, config, trainer, on_event)
}

/// Continues GRPO run `id` from its latest checkpoint (from its start when it has none),
/// first removing the metrics rows and trajectories of the steps after it.
pub fn resume_grpo(
    context: &RunContext,
    id: &str,
    on_event: &mut dyn FnMut(RunEvent),
) -> anyhow::Result<RunOutcome> {
    let (info, config, files) = load_run(&context.store, &context.paths, id)?;
    anyhow::ensure!(
        info.kind == RunKind::Grpo,
        "run {id} is a {} run, not GRPO",
        info.kind.as_str()
    );
    let base = Path::new(&info.model);
    let beta = config.grpo.update.objective.beta;
    let (trainer, step, curriculum, meta) = match latest_checkpoint(&files.checkpoints())? {
        Some(checkpoint) => {
            let (trainer, state) = Trainer::load_checkpoint(&checkpoint, &context.load)?;
            let step = state.extra["step"].as_u64().unwrap_or(0);
            let curriculum = serde_json::from_value(state.extra["curriculum"].clone()).unwrap_or(
                CurriculumState {
                    level: config.grpo.curriculum.start_level,
                },
            );
            let meta = CheckpointMeta {
                base_model: state.base_model,
                parent: state.parent,
                extra: state.extra,
            };
            (trainer, step, curriculum, meta)
        }
        None => {
            let model = LanguageModel::load(base, &context.load)?;
            let optimizer_steps = config.grpo.steps * config.grpo.update.iterations as u64;
            let trainer = Trainer::new(model, trainer_config(&config, optimizer_steps))?;
            let meta = CheckpointMeta {
                base_model: Some(info.model.clone()),
                parent: Some(info.model.clone()),
                extra: json!({}),
            };
            let level = config.grpo.curriculum.start_level;
            (trainer, 0, CurriculumState { level }, meta)
        }
    };
    discard_after(&context.store, id, step)?;
    let evaluated_start = context.store.metrics(id)?.iter().any(|row| row.step == 0);
    let reference: Option<Qwen> = match (beta != 0.0, trainer.lora().is_some()) {
        (false, _) => None,
        (true, true) => Some(trainer.reference_policy()?),
        (true, false) => Some(reference_from_folder(base, &context.load)?),
    };
    let run = GrpoRun {
        metrics: MetricsWriter::resume(&files.metrics(), step)?,
        draw: TaskDraw::new(&config)?,
        meta,
        info,
        files,
        reference,
        step,
        curriculum,
        evaluated_start,
    };
    run.go(context, &config, trainer, on_event)
}

struct GrpoRun {
    info: RunInfo,
    files: RunFiles,
    metrics: MetricsWriter,
    meta: CheckpointMeta,
    draw: TaskDraw,
    reference: Option<Qwen>,
    step: u64,
    curriculum: CurriculumState,
    evaluated_start: bool,
}

impl GrpoRun {
    fn go(
        mut self,
        context: &RunContext,
        config: &RunConfig,
        mut trainer: Trainer,
        on_event: &mut dyn FnMut(RunEvent),
    ) -> anyhow::Result<RunOutcome> {
        let run = self.info.id.clone();
        let total = config.grpo.steps;
        on_event(RunEvent::Started {
            run: run.clone(),
            step: self.step,
            total_steps: total,
        });
        let mut eval = None;
        if self.step == 0 && !self.evaluated_start {
            let figures = evaluate_policy(context, config, &trainer, &run, 0, on_event)?;
            let row = metrics_row(&run, 0, figures.metric_values());
            context.store.put_metrics(&row)?;
            self.metrics.append(&row)?;
            on_event(RunEvent::Step(row));
            eval = Some(figures);
        }
        let mut status = RunStatus::Done;
        std::thread::scope(|scope| -> anyhow::Result<()> {
            let mut pending: Option<Pending<'_>> = None;
            while self.step < total {
                if !context
                    .control
                    .wait_while_paused(|| on_event(RunEvent::Paused))
                {
                    status = RunStatus::Stopped;
                    let checkpoint = checkpoint_dir(&self.files.checkpoints(), self.step);
                    if self.step > 0 && !checkpoint.is_dir() {
                        self.checkpoint(context, &trainer, on_event)?;
                    }
                    break;
                }
                let step = self.step + 1;
                let started = Instant::now();
                let (rollouts, waited) = match pending.take() {
                    Some(handle) => (join_rollouts(handle)?, Some(started.elapsed())),
                    None => (
                        self.roll_out_now(context, config, &trainer, step, on_event)?,
                        None,
                    ),
                };
                let tokens: usize = rollouts.trajectories.iter().map(policy_tokens).sum();
                let (mut values, samples) = self.learn_from(context, config, step, rollouts)?;
                if let Some(waited) = waited {
                    values.insert("timing/wait_rollouts".into(), waited.as_secs_f64());
                }
                if config.grpo.async_rollouts && step < total {
                    pending = Some(self.roll_out_ahead(scope, context, config, &trainer, step)?);
                }
                self.update(config, &mut trainer, step, &samples, &mut values, on_event)?;
                let seconds = started.elapsed().as_secs_f64();
                values.insert("step_time".into(), seconds);
                values.insert(
                    "tokens_per_second".into(),
                    tokens as f64 / seconds.max(1e-9),
                );
                let every = config.eval.every;
                if step == total || (every > 0 && step % every == 0) {
                    let figures = evaluate_policy(context, config, &trainer, &run, step, on_event)?;
                    values.extend(figures.metric_values());
                    eval = Some(figures);
                }
                self.step = step;
                let row = metrics_row(&run, step, values);
                context.store.put_metrics(&row)?;
                self.metrics.append(&row)?;
                on_event(RunEvent::Step(row));
                let every = config.checkpoint_every;
                let stopping = context.control.stopping();
                if step == total || stopping || (every > 0 && step % every == 0) {
                    self.checkpoint(context, &trainer, on_event)?;
                }
            }
            Ok(())
        })?;
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
            eval: eval.filter(|_: &EvalFigures| status == RunStatus::Done),
        })
    }

    /// Step `step`'s rollouts with the current policy (version `step − 1`).
    fn roll_out_now(
        &mut self,
        context: &RunContext,
        config: &RunConfig,
        trainer: &Trainer,
        step: u64,
        on_event: &mut dyn FnMut(RunEvent),
    ) -> anyhow::Result<StepRollouts> {
        let tasks = (self.draw).tasks(step, config.grpo.tasks_per_step, self.curriculum, config)?;
        let policy = local_policy(trainer.model())?;
        let run = self.info.id.as_str();
        roll_out(
            context,
            &policy,
            config,
            run,
            (step, step - 1),
            &tasks,
            on_event,
        )
    }

    /// Starts step `step + 1`'s rollouts in the background with a snapshot of the policy
    /// before step `step`'s update (version `step − 1`), so they train with staleness 1.
    fn roll_out_ahead<'scope>(
        &mut self,
        scope: &'scope std::thread::Scope<'scope, '_>,
        context: &'scope RunContext,
        config: &'scope RunConfig,
        trainer: &Trainer,
        step: u64,
    ) -> anyhow::Result<Pending<'scope>> {
        let next = step + 1;
        let tasks = (self.draw).tasks(next, config.grpo.tasks_per_step, self.curriculum, config)?;
        let policy = snapshot_policy(trainer.model())?;
        let run = self.info.id.clone();
        let version = step - 1;
        Ok(scope.spawn(move || {
            roll_out(
                context,
                &policy,
                config,
                &run,
                (next, version),
                &tasks,
                &mut |_| {},
            )
        }))
    }

    /// Advantages, storage and metrics of step `step`'s rollouts, and the next curriculum
    /// level; returns the metrics and the samples to train on.
    fn learn_from(
        &mut self,
        context: &RunContext,
        config: &RunConfig,
        step: u64,
        mut rollouts: StepRollouts,
    ) -> anyhow::Result<(BTreeMap<String, f64>, Vec<GrpoSample>)> {
        let grpo = &config.grpo;
        if grpo.async_rollouts {
            let trained_version = step - 1;
            for trajectory in &mut rollouts.trajectories {
                let sampled = trajectory.policy_version.unwrap_or(trained_version);
                trajectory.staleness = Some(trained_version.saturating_sub(sampled) as u32);
            }
        }
        let prepared = advantages(grpo, &mut rollouts.trajectories);
        let drawn: Vec<Task> = rollouts.tasks.iter().map(|t| t.as_ref().clone()).collect();
        context.store.put_tasks(&drawn)?;
        context.store.put_trajectories(&rollouts.trajectories)?;
        let mut values = rollout_metrics(&rollouts.trajectories, config.rollout.max_tokens);
        values.insert("timing/generate".into(), rollouts.seconds);
        values.insert(
            "frac_reward_zero_std".into(),
            prepared.zero_std_groups as f64 / prepared.groups.max(1) as f64,
        );
        if grpo.async_rollouts {
            let staleness = rollouts
                .trajectories
                .iter()
                .map(|t| f64::from(t.staleness.unwrap_or(0)))
                .sum::<f64>()
                / rollouts.trajectories.len().max(1) as f64;
            values.insert("async/staleness".into(), staleness);
        }
        let success = values.get("success_rate").copied().unwrap_or(0.0);
        self.curriculum = self
            .draw
            .next(self.curriculum, success, grpo.curriculum.target);
        if grpo.curriculum.enabled {
            values.insert("curriculum/level".into(), f64::from(self.curriculum.level));
        }
        Ok((values, prepared.samples))
    }

    /// The policy update of step `step` on `samples`, and the step's timing figures.
    fn update(
        &mut self,
        config: &RunConfig,
        trainer: &mut Trainer,
        step: u64,
        samples: &[GrpoSample],
        values: &mut BTreeMap<String, f64>,
        on_event: &mut dyn FnMut(RunEvent),
    ) -> anyhow::Result<()> {
        let grpo = &config.grpo;
        if samples.is_empty() {
            values.insert("skipped_update".into(), 1.0);
        } else {
            on_event(RunEvent::Progress {
                step,
                phase: Phase::Update,
                done: 0,
                total: grpo.update.iterations as u64,
            });
            let train_started = Instant::now();
            let batch = GrpoBatch::new(samples, trainer.pad_id(), trainer.model().device())?;
            let update = trainer.grpo_update(&batch, self.reference.as_ref(), &grpo.update)?;
            values.extend(update.metric_values());
            values.insert("timing/train".into(), train_started.elapsed().as_secs_f64());
        }
        Ok(())
    }

    fn checkpoint(
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
        self.meta.extra = json!({
            "run": self.info.id,
            "step": self.step,
            "curriculum": self.curriculum,
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
}
