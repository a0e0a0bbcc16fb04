//! Asynchronous GRPO: step k+1's rollouts are generated while step k trains, by a snapshot
//! of the policy from before step k's update. Each trajectory records its staleness, and its
//! behaviour log-probs are those of the snapshot, not of the updated policy.

use super::common::{context, session};
use super::runs::{SMALL_GRPO, SMALL_SFT, run_trajectories};
use rollscope::model::{LanguageModel, LoadOptions, score_trajectory};
use rollscope::run::{RunConfig, RunFiles, train_grpo, train_sft};
use rollscope::store::{Filter, Query};
use rollscope::train::LoraConfig;
use rollscope::trajectory::{RunStatus, Trajectory};

fn async_config() -> RunConfig {
    let mut config = RunConfig::parse(SMALL_GRPO).unwrap();
    config.grpo.async_rollouts = true;
    config.trainer.learning_rate = 1e-3;
    config.grpo.group = 4;
    config
}

/// The largest difference between a trajectory's recorded sampling log-probs and `model`'s.
fn worst_logprob_gap(model: &LanguageModel, trajectory: &Trajectory, temperature: f64) -> f32 {
    let score = score_trajectory(model, trajectory, temperature).unwrap();
    let recorded = &trajectory.token_trace.as_ref().unwrap().logprobs;
    score
        .positions
        .iter()
        .zip(&score.logprobs)
        .map(|(&position, &logprob)| (logprob - recorded[position]).abs())
        .fold(0.0, f32::max)
}

#[test]
fn async_rollouts_are_one_update_stale_and_sampled_by_the_snapshot() {
    let root = tempfile::tempdir().unwrap();
    let paths = session(root.path());
    let context = context(&paths);
    // A few SFT steps first, so that the samples differ in reward and the updates move the
    // policy.
    let mut sft_config = RunConfig::parse(SMALL_SFT).unwrap();
    sft_config.sft.epochs = 6;
    let sft = train_sft(&context, &sft_config, &mut |_| {}).unwrap();
    let config = async_config();
    let outcome = train_grpo(&context, &config, &mut |_| {}).unwrap();
    assert_eq!((outcome.status, outcome.step), (RunStatus::Done, 3));

    let per_step = config.grpo.tasks_per_step as u64;
    let versions = run_trajectories(&context.store, &outcome.run);
    assert_eq!(
        versions.len() as u64,
        3 * per_step * u64::from(config.grpo.group)
    );
    for (version, group, _) in &versions {
        let step = group / per_step + 1;
        let expected = step.saturating_sub(2);
        assert_eq!(
            *version, expected,
            "step {step} samples with version {expected}"
        );
    }

    let rows = context.store.metrics(&outcome.run).unwrap();
    let staleness: Vec<f64> = rows[1..]
        .iter()
        .map(|row| row.values["async/staleness"])
        .collect();
    assert_eq!(staleness, vec![0.0, 1.0, 1.0]);
    assert!(
        rows[1].values["frac_reward_zero_std"] < 1.0,
        "step 1 needs a group with a reward spread, or its update moves nothing"
    );

    let filter = Filter {
        run: Some(outcome.run.clone()),
        ..Filter::default()
    };
    let query = Query {
        filter,
        ..Query::default()
    };
    let stored: Vec<Trajectory> = context
        .store
        .query(&query)
        .unwrap()
        .iter()
        .map(|summary| context.store.get(summary.id).unwrap().unwrap())
        .collect();
    let second_step: Vec<&Trajectory> = stored
        .iter()
        .filter(|t| t.group.unwrap() / per_step == 1)
        .collect();
    assert!(
        second_step.iter().all(|t| t.staleness == Some(1)),
        "step 2 trains on rollouts one update old"
    );
    let load = LoadOptions::default();
    let before = LanguageModel::load(&sft.model, &load).unwrap();
    let files = RunFiles::of(&paths, &outcome.run);
    let after_step_1 = LanguageModel::load(&files.checkpoints().join("checkpoint-1"), &load)
        .expect("checkpoints are model folders");
    let temperature = config.rollout.temperature;
    for trajectory in second_step {
        let snapshot_gap = worst_logprob_gap(&before, trajectory, temperature);
        let updated_gap = worst_logprob_gap(&after_step_1, trajectory, temperature);
        assert!(
            snapshot_gap < 1e-3,
            "{}: sampled by the pre-update snapshot (gap {snapshot_gap})",
            trajectory.id
        );
        assert!(
            updated_gap > 10.0 * snapshot_gap.max(1e-4),
            "{}: the updated policy differs ({updated_gap} vs {snapshot_gap})",
            trajectory.id
        );
    }
}

#[test]
fn async_rollouts_refuse_lora() {
    let mut config = async_config();
    config.trainer.lora = Some(LoraConfig {
        rank: 4,
        alpha: 8.0,
        target_modules: vec!["q_proj".into()],
        use_rslora: false,
    });
    let error = config.validate().unwrap_err().to_string();
    assert!(error.contains("grpo.async_rollouts"), "{error}");
}
