//! The badcase loop end to end on a small session: every stage is a run of the session, the
//! badcase pass is labelled, the selection file and its manifest record the rules, the RS-SFT
//! trains on the selection with the replayed demonstrations, and both policies are evaluated
//! on the same held-out sets.

use super::common::{context, session};
use super::runs::SMALL_SFT;
use rollscope::curate::{Manifest, SelectionRules};
use rollscope::run::{LOOP_PRESET, LOOP_STAGES, LoopEvent, RunConfig, run_loop, train_sft};
use rollscope::store::{Filter, Query};
use rollscope::trajectory::{LabelStatus, RunKind, RunStatus};

const SMALL_LOOP: &str = r#"
seed = 2
checkpoint_every = 0
[tasks]
train = "arith:1+1:train"
train_size = 6
eval = "arith:1+1:eval"
eval_size = 3
[sft]
epochs = 1
batch_size = 4
replay = { tasks = "arith:1:train", size = 5 }
[trainer]
learning_rate = 1e-3
[rollout]
tools = ["calculator"]
max_turns = 2
max_new_tokens = 12
max_tokens = 48
[loop]
samples = 2
also_eval = ["arith:1:eval"]
"#;

#[test]
fn the_loop_samples_labels_selects_trains_and_evaluates_both_policies() {
    let root = tempfile::tempdir().unwrap();
    let paths = session(root.path());
    let context = context(&paths);
    let cold = train_sft(&context, &RunConfig::parse(SMALL_SFT).unwrap(), &mut |_| {}).unwrap();
    let config = RunConfig::parse(SMALL_LOOP).unwrap();
    let rules = SelectionRules {
        per_task: 2,
        require_pass: false,
        ..SelectionRules::default()
    };
    let mut stages = Vec::new();
    let outcome = run_loop(&context, &config, Some(rules.clone()), &mut |event| {
        if let LoopEvent::Stage(index) = event {
            stages.push(index);
        }
    })
    .unwrap();
    assert_eq!(stages, (0..LOOP_STAGES.len()).collect::<Vec<_>>());
    assert_eq!(outcome.policy, cold.model, "the session's newest policy");

    let (rollout_run, summary) = &outcome.rollout;
    assert_eq!(summary.trajectories, 6 * 2);
    let sampled = context
        .store
        .query(&Query {
            filter: Filter {
                run: Some(rollout_run.clone()),
                ..Filter::default()
            },
            ..Query::default()
        })
        .unwrap();
    assert_eq!(sampled.len(), 12);
    assert!(sampled.iter().all(|s| s.task_id.starts_with("arith-1+1-")));
    let labelled = sampled.iter().filter(|s| s.suggested != 0).count();
    assert_eq!(labelled, outcome.suggestions.trajectories);
    let record = context.store.get(sampled[0].id).unwrap().unwrap();
    assert!(
        record
            .labels
            .iter()
            .all(|label| label.status == LabelStatus::Suggested)
    );

    assert!(outcome.selection_file.is_file());
    assert_eq!(outcome.rules, rules);
    let manifest_text =
        std::fs::read_to_string(Manifest::path_for(&outcome.selection_file)).unwrap();
    let manifest: Manifest = serde_json::from_str(&manifest_text).unwrap();
    assert_eq!(manifest.selection, Some(rules));
    assert_eq!(manifest.filter.run.as_deref(), Some(rollout_run.as_str()));
    let kept = outcome.selection.samples_kept;
    assert!(kept > 0 && kept <= 12, "{kept}");

    let runs = context.store.runs().unwrap();
    let sft = runs.iter().find(|run| run.id == outcome.sft.run).unwrap();
    assert_eq!(sft.kind, RunKind::Sft);
    assert_eq!(outcome.sft.status, RunStatus::Done);
    assert_eq!(
        sft.total_steps,
        (kept + 5).div_ceil(4) as u64,
        "one epoch of the selection and five replayed demonstrations, four a batch"
    );
    assert_eq!(sft.model, cold.model.display().to_string());

    assert_eq!(outcome.evals.len(), 2);
    assert_eq!(outcome.evals[0].tasks.to_string(), "arith:1+1:eval");
    assert_eq!(outcome.evals[1].tasks.to_string(), "arith:1:eval");
    for comparison in &outcome.evals {
        let (before, after) = (&comparison.before.eval, &comparison.after.eval);
        assert_eq!(before.model, cold.model);
        assert_eq!(after.model, outcome.sft.model);
        assert_ne!(before.run, after.run);
        assert_eq!(before.figures.tasks, 3);
        assert_eq!(after.figures.tasks, 3);
        let eval = runs.iter().find(|run| run.id == after.run).unwrap();
        assert_eq!(eval.kind, RunKind::Eval);
    }
}

#[test]
fn the_loop_preset_reads_and_names_what_it_samples_and_measures() {
    let config = RunConfig::parse(LOOP_PRESET).unwrap();
    assert_eq!(config.tasks.train, "arith:1+1:train");
    assert_eq!(config.tasks.eval, "arith:1+1:eval");
    assert!(config.badcase_loop.samples >= 2);
    assert!(config.badcase_loop.select.min_prm.is_some());
    assert!(!config.badcase_loop.select.exclude_suggested.is_empty());
    let replayed: Vec<&str> = config.sft.replay.iter().map(|r| r.tasks.as_str()).collect();
    assert!(replayed.contains(&"arith:1:train"), "{replayed:?}");
    let typo = LOOP_PRESET.replace("samples = 8", "sample = 8");
    let error = RunConfig::read(&typo, "loop.toml").unwrap_err().to_string();
    assert!(error.contains("unknown key `sample` in [loop]"), "{error}");
}
