//! A GRPO run: per step, G rollouts of each task through the agent loop with the current
//! policy, group-relative advantages, μ clipped-objective updates against the behaviour
//! log-probs (and a frozen reference when β > 0), metrics, evaluation every N steps and
//! checkpoints that a resume continues from.

use super::config::RunConfig;
use super::control::RunEvent;
use super::curriculum::TaskDraw;
use super::grpo_step::{
    Pending, StepRollouts, advantages, join_rollouts, roll_out, rollout_metrics,
};
use super::lifecycle::starting_model;
use super::live::LiveRun;
use super::record::RunRecord;
use super::sft_run::trainer_config;
use super::{
    EvalFigures, RunContext, RunOutcome, evaluate_policy, local_policy, policy_tokens,
    snapshot_policy,
};
use crate::model::{LanguageModel, Qwen};
use crate::train::{
    CurriculumState, GrpoSample, RunState, Trainer, checkpoint_dir, reference_from_folder,
};
use crate::trajectory::{Phase, RunKind, RunStatus, Task, metric};
use anyhow::Context;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

/// Starts a new GRPO run.
pub fn train_grpo(
    context: &RunContext,
    config: &RunConfig,
    on_event: &mut dyn FnMut(RunEvent),
) -> anyhow::Result<RunOutcome> {
    context.check_tools(config)?;
    let model_dir = starting_model(&context.store, &context.paths, config)?;
    let model = LanguageModel::load(&model_dir, &context.load)?;
    let draw = TaskDraw::new(config)?;
    let record = RunRecord::start(
        context,
        config,
        RunKind::Grpo,
        &model_dir,
        config.grpo.steps,
    )?;
    let trainer = Trainer::new(model, trainer_config(config, optimizer_steps(config)))?;
    let reference = match config.grpo.update.objective.beta != 0.0 {
        true => Some(trainer.reference_policy()?),
        false => None,
    };
    let run = GrpoRun {
        record,
        draw,
        reference,
        curriculum: CurriculumState {
            level: config.grpo.curriculum.start_level,
        },
        evaluated_start: false,
    };
    run.go(context, config, trainer, on_event)
}

/// The GRPO step a checkpoint's orchestrator state records; an error, not step 0, when it
/// records none (a restart would silently redo the run's steps).
fn grpo_step_of(state: &RunState) -> anyhow::Result<u64> {
    state.step.context(
        "the checkpoint's trainer state has no GRPO step (`step` in its `run_state`), so it \
         was not written by a GRPO run: start a new run from its folder with `rollscope train \
         grpo --set model=DIR`",
    )
}

/// Continues GRPO run `id` from its latest checkpoint (from its start when it has none),
/// first removing the metrics rows and trajectories of the steps after it.
pub fn resume_grpo(
    context: &RunContext,
    id: &str,
    on_event: &mut dyn FnMut(RunEvent),
) -> anyhow::Result<RunOutcome> {
    let resumed = RunRecord::resume(context, id, RunKind::Grpo, true, |state| {
        grpo_step_of(&state.run_state)
    })?;
    let config = resumed.config;
    let record = resumed.record;
    let base = Path::new(&record.info.model);
    let start = CurriculumState {
        level: config.grpo.curriculum.start_level,
    };
    let curriculum = record.meta.run_state.curriculum.unwrap_or(start);
    let trainer = match resumed.trainer {
        Some(trainer) => trainer,
        None => Trainer::new(
            LanguageModel::load(base, &context.load)?,
            trainer_config(&config, optimizer_steps(&config)),
        )?,
    };
    let evaluated_start = context.store.metrics(id)?.iter().any(|row| row.step == 0);
    let beta = config.grpo.update.objective.beta;
    let reference: Option<Qwen> = match (beta != 0.0, trainer.lora().is_some()) {
        (false, _) => None,
        (true, true) => Some(trainer.reference_policy()?),
        (true, false) => Some(reference_from_folder(base, &context.load)?),
    };
    let run = GrpoRun {
        draw: TaskDraw::new(&config)?,
        record,
        reference,
        curriculum,
        evaluated_start,
    };
    run.go(context, &config, trainer, on_event)
}

/// Optimizer steps of a whole run: μ iterations per GRPO step.
fn optimizer_steps(config: &RunConfig) -> u64 {
    config.grpo.steps * config.grpo.update.iterations as u64
}

struct GrpoRun {
    record: RunRecord,
    draw: TaskDraw,
    reference: Option<Qwen>,
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
        let run = self.record.info.id.clone();
        let mut live = LiveRun::start(context, &run)?;
        let on_event = &mut live.observe(on_event);
        let total = config.grpo.steps;
        on_event(RunEvent::Started {
            run: run.clone(),
            step: self.record.step,
            total_steps: total,
        });
        let mut eval = None;
        if self.record.step == 0 && !self.evaluated_start {
            let figures = evaluate_policy(context, config, &trainer, &run, 0, on_event)?;
            (self.record).record_step(context, 0, figures.metric_values(), on_event)?;
            eval = Some(figures);
        }
        let mut status = RunStatus::Done;
        std::thread::scope(|scope| -> anyhow::Result<()> {
            let mut pending: Option<Pending<'_>> = None;
            while self.record.step < total {
                if !context
                    .control
                    .wait_while_paused(|| on_event(RunEvent::Paused))
                {
                    status = RunStatus::Stopped;
                    let checkpoint =
                        checkpoint_dir(&self.record.files.checkpoints(), self.record.step);
                    if self.record.step > 0 && !checkpoint.is_dir() {
                        self.checkpoint(context, &trainer, on_event)?;
                    }
                    break;
                }
                let step = self.record.step + 1;
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
                    values.insert(metric::TIMING_WAIT_ROLLOUTS.into(), waited.as_secs_f64());
                }
                if config.grpo.async_rollouts && step < total {
                    pending = Some(self.roll_out_ahead(scope, context, config, &trainer, step)?);
                }
                self.update(config, &mut trainer, step, &samples, &mut values, on_event)?;
                let seconds = started.elapsed().as_secs_f64();
                values.insert(metric::STEP_TIME.into(), seconds);
                values.insert(
                    metric::TOKENS_PER_SECOND.into(),
                    tokens as f64 / seconds.max(1e-9),
                );
                let every = config.eval.every;
                if step == total || (every > 0 && step.is_multiple_of(every)) {
                    let figures = evaluate_policy(context, config, &trainer, &run, step, on_event)?;
                    values.extend(figures.metric_values());
                    eval = Some(figures);
                }
                self.record.record_step(context, step, values, on_event)?;
                let every = config.checkpoint_every;
                let stopping = context.control.stopping();
                if step == total || stopping || (every > 0 && step.is_multiple_of(every)) {
                    self.checkpoint(context, &trainer, on_event)?;
                }
            }
            Ok(())
        })?;
        let eval = eval.filter(|_: &EvalFigures| status == RunStatus::Done);
        self.record
            .finish(context, &trainer, status, eval, on_event)
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
        let run = self.record.info.id.as_str();
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
        let run = self.record.info.id.clone();
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
        values.insert(metric::TIMING_GENERATE.into(), rollouts.seconds);
        values.insert(
            metric::FRAC_REWARD_ZERO_STD.into(),
            prepared.zero_std_groups as f64 / prepared.groups.max(1) as f64,
        );
        if grpo.async_rollouts {
            let staleness = rollouts
                .trajectories
                .iter()
                .map(|t| f64::from(t.staleness.unwrap_or(0)))
                .sum::<f64>()
                / rollouts.trajectories.len().max(1) as f64;
            values.insert(metric::ASYNC_STALENESS.into(), staleness);
        }
        let success = values.get(metric::SUCCESS_RATE).copied().unwrap_or(0.0);
        self.curriculum = self
            .draw
            .next(self.curriculum, success, grpo.curriculum.target);
        if grpo.curriculum.enabled {
            values.insert(
                metric::CURRICULUM_LEVEL.into(),
                f64::from(self.curriculum.level),
            );
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
            values.insert(metric::SKIPPED_UPDATE.into(), 1.0);
        } else {
            on_event(RunEvent::Progress {
                step,
                phase: Phase::Update,
                done: 0,
                total: grpo.update.iterations as u64,
            });
            let train_started = Instant::now();
            let update = trainer.grpo_update(samples, self.reference.as_ref(), &grpo.update)?;
            values.extend(update.metric_values());
            values.insert(
                metric::TIMING_TRAIN.into(),
                train_started.elapsed().as_secs_f64(),
            );
        }
        Ok(())
    }

    /// A checkpoint that records the run's step and curriculum level for a resume.
    fn checkpoint(
        &mut self,
        context: &RunContext,
        trainer: &Trainer,
        on_event: &mut dyn FnMut(RunEvent),
    ) -> anyhow::Result<()> {
        self.record.meta.run_state = RunState {
            run: Some(self.record.info.id.clone()),
            step: Some(self.record.step),
            curriculum: Some(self.curriculum),
        };
        self.record.checkpoint(context, trainer, on_event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_without_its_step_is_refused_not_restarted() {
        let saved = r#"{"run": "grpo-0001", "step": 12, "curriculum": {"level": 2}}"#;
        let state: RunState = serde_json::from_str(saved).unwrap();
        assert_eq!(grpo_step_of(&state).unwrap(), 12);
        assert_eq!(state.curriculum, Some(CurriculumState { level: 2 }));
        let error = grpo_step_of(&RunState::default()).unwrap_err();
        assert!(error.to_string().contains("no GRPO step"), "{error}");
    }
}
