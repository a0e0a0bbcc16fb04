//! The badcase loop (`rollscope loop`), after the main job's GRPO: the policy is evaluated,
//! samples N attempts of every training task (the badcase pass), the suggestion rules label
//! them, a best-of-N selection keeps the verified successes the labels and process scores
//! support, the labelled failures of tasks it found nothing for are repaired (resampled from
//! their first wrong turn, `run::repair`), an SFT run trains the policy on both (with
//! earlier SFT data replayed), and the result is evaluated on the same held-out sets. Every
//! stage is a run of the session, so `stats` compares the two policies' accuracy and error
//! counts per kind.

use super::config::SftSource;
use super::control::RunEvent;
use super::repair::{RepairOutcome, RepairRequest, run_repair};
use super::{
    EvalJob, EvalJobOutcome, JobPolicy, RolloutJob, RolloutProgress, RolloutSummary, RunConfig,
    RunContext, RunOutcome, evaluate_model, run_rollout_job, starting_model, train_sft,
};
use crate::agent::rollout::RolloutConfig;
use crate::agent::tasks::TaskSetSpec;
use crate::curate::analysis::paired_runs;
use crate::curate::suggest::{SuggestionCounts, write_suggestions};
use crate::curate::{ExportRequest, SelectionPreview, SelectionRules, export_selection, select};
use crate::formats::{ExportOptions, Format};
use crate::model::LanguageModel;
use crate::stats::PairedDifference;
use crate::store::Filter;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The loop's stages, in order, for a progress display.
pub const STAGES: [&str; 7] = [
    "evaluate the starting policy",
    "badcase pass: sample every training task",
    "suggest error labels",
    "select best of N",
    "repair labelled failures from their first wrong turn",
    "RS-SFT on the selection and the repairs",
    "evaluate the new policy",
];

/// What the loop is doing.
#[derive(Debug)]
pub enum LoopEvent<'a> {
    /// Stage `index` (0-based, into `STAGES`) begins.
    Stage(usize),
    /// Attempts of an evaluation: `done` of `total`.
    EvalProgress {
        /// Attempts made.
        done: usize,
        /// Attempts in all.
        total: usize,
    },
    /// An evaluation ended.
    Evaluated(&'a EvalJobOutcome),
    /// Progress of the badcase pass.
    Rollout(RolloutProgress),
    /// Forks of the repair stage: `done` of `total` failures resampled.
    RepairProgress {
        /// Failures resampled.
        done: usize,
        /// Failures in all.
        total: usize,
    },
    /// An event of the RS-SFT run.
    Run(RunEvent),
}

/// A policy's evaluation on one held-out set, with the errors the rules found in it.
#[derive(Clone, Debug)]
pub struct PolicyEval {
    /// The evaluation.
    pub eval: EvalJobOutcome,
    /// Suggested labels per kind on its attempts.
    pub errors: SuggestionCounts,
}

/// One held-out set before and after the RS-SFT.
#[derive(Clone, Debug)]
pub struct EvalComparison {
    /// The task set.
    pub tasks: TaskSetSpec,
    /// The starting policy's evaluation.
    pub before: PolicyEval,
    /// The new policy's.
    pub after: PolicyEval,
    /// After against before, task by task (greedy).
    pub change: PairedDifference,
}

/// What a loop made and measured.
#[derive(Clone, Debug)]
pub struct LoopOutcome {
    /// The policy it started from.
    pub policy: PathBuf,
    /// The badcase pass's rollout run and its summary.
    pub rollout: (String, RolloutSummary),
    /// The suggestions written on the badcase pass.
    pub suggestions: SuggestionCounts,
    /// The rules the selection used.
    pub rules: SelectionRules,
    /// What the selection kept and left out (best of N, before the repairs).
    pub selection: SelectionPreview,
    /// What the repair stage resampled and kept.
    pub repair: RepairOutcome,
    /// The selection file, repairs included (a manifest beside it).
    pub selection_file: PathBuf,
    /// The RS-SFT run.
    pub sft: RunOutcome,
    /// Every held-out set, before and after.
    pub evals: Vec<EvalComparison>,
}

/// Runs the loop on `config` (its `[loop]` table, `tasks.train` sampled, `tasks.eval` and
/// `loop.also_eval` measured) from the config's model or the session's newest policy;
/// `rules` replaces `loop.select` (e.g. `SelectionRules::verifier_only` for the ablation;
/// `loop.repair.samples = 0` leaves the repair stage out).
pub fn run_loop(
    context: &RunContext,
    config: &RunConfig,
    rules: Option<SelectionRules>,
    on_event: &mut dyn FnMut(LoopEvent),
) -> anyhow::Result<LoopOutcome> {
    let settings = &config.badcase_loop;
    let rules = rules.unwrap_or_else(|| settings.select.clone());
    let policy = starting_model(&context.store, &context.paths, config)?;
    let model = LanguageModel::load(&policy, &context.load)?;
    let mut eval_sets = vec![config.tasks.eval_spec()?];
    eval_sets.extend(settings.also_eval_specs()?);

    on_event(LoopEvent::Stage(0));
    let before = evaluate_all(context, config, &model, &policy, &eval_sets, on_event)?;

    on_event(LoopEvent::Stage(1));
    let job = RolloutJob {
        tasks: config.tasks.train_spec()?,
        n: config.tasks.train_size,
        task_seed: config.tasks.seed,
        group: settings.samples,
        config: RolloutConfig {
            seed: config.seed,
            ..config.rollout.clone()
        },
    };
    let local = JobPolicy::Local {
        model: &model,
        dir: &policy,
    };
    let rollout = run_rollout_job(context, &job, local, &mut |progress| {
        on_event(LoopEvent::Rollout(progress))
    })?;

    on_event(LoopEvent::Stage(2));
    let filter = Filter {
        run: Some(rollout.0.clone()),
        ..Filter::default()
    };
    let suggestions = write_suggestions(&context.store, &context.store.ids(&filter)?, false)?;

    on_event(LoopEvent::Stage(3));
    let best_of_n = select(&context.store, &filter, &rules)?;
    let solved: BTreeSet<String> = best_of_n
        .kept
        .iter()
        .map(|summary| summary.task_id.clone())
        .collect();

    on_event(LoopEvent::Stage(4));
    let request = RepairRequest {
        rollout_run: &rollout.0,
        solved: &solved,
        config: &settings.repair,
        rules: &rules,
        seed: config.seed,
    };
    let repair = run_repair(context, &request, local, &mut |done, total| {
        on_event(LoopEvent::RepairProgress { done, total })
    })?;
    drop(model);
    let selection_file = context.paths.run_dir(&rollout.0).join("selection.jsonl");
    let request = ExportRequest {
        filter,
        selection: Some(rules.clone()),
        format: Format::OpenaiMessages,
        options: ExportOptions::default(),
        path: selection_file.clone(),
        session: None,
        repairs: repair.repairs.clone(),
    };
    let report = export_selection(&context.store, &request, &mut |_, _| {})?;
    let selection = report.manifest.preview.clone().unwrap_or_default();
    anyhow::ensure!(
        selection.samples_kept + repair.repairs.len() > 0,
        "the selection kept no sample of {} ({} tasks without a passing sample) and the repair \
         stage none: sample more (loop.samples, loop.repair.samples) or loosen loop.select",
        rollout.0,
        selection.tasks_no_pass
    );

    on_event(LoopEvent::Stage(5));
    let mut sft_config = config.clone();
    sft_config.model = Some(policy.clone());
    sft_config.sft.source = SftSource::File(selection_file.clone());
    let sft = train_sft(context, &sft_config, &mut |event| {
        on_event(LoopEvent::Run(event))
    })?;

    on_event(LoopEvent::Stage(6));
    let model = LanguageModel::load(&sft.model, &context.load)?;
    let after = evaluate_all(context, config, &model, &sft.model, &eval_sets, on_event)?;
    let evals = eval_sets
        .into_iter()
        .zip(before.into_iter().zip(after))
        .map(|(tasks, (before, after))| {
            let change = paired_runs(&context.store, &before.eval.run, &after.eval.run)?;
            Ok(EvalComparison {
                tasks,
                before,
                after,
                change,
            })
        })
        .collect::<anyhow::Result<_>>()?;
    Ok(LoopOutcome {
        policy,
        rollout,
        suggestions,
        rules,
        selection,
        repair,
        selection_file,
        sft,
        evals,
    })
}

/// Evaluates a model on every set (greedy, with the config's pass@k, tools and task seed)
/// and writes suggestions on the attempts, so `stats` counts errors per kind per policy.
fn evaluate_all(
    context: &RunContext,
    config: &RunConfig,
    model: &LanguageModel,
    dir: &Path,
    sets: &[TaskSetSpec],
    on_event: &mut dyn FnMut(LoopEvent),
) -> anyhow::Result<Vec<PolicyEval>> {
    let mut outcomes = Vec::new();
    for tasks in sets {
        let job = EvalJob {
            tasks: tasks.clone(),
            n: config.tasks.eval_size,
            pass_k: config.eval.pass_k,
            tools: config.rollout.tools.clone(),
            seed: config.tasks.seed,
        };
        let outcome = evaluate_model(context, model, dir, &job, &mut |done, total| {
            on_event(LoopEvent::EvalProgress { done, total })
        })?;
        let filter = Filter {
            run: Some(outcome.run.clone()),
            ..Filter::default()
        };
        let errors = write_suggestions(&context.store, &context.store.ids(&filter)?, false)?;
        on_event(LoopEvent::Evaluated(&outcome));
        outcomes.push(PolicyEval {
            eval: outcome,
            errors,
        });
    }
    Ok(outcomes)
}
