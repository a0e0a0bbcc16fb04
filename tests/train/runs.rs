//! Training runs end to end on the embedded model: a GRPO run through the agent loop with
//! its rows, trajectories, checkpoints and final policy; an SFT run on scripted
//! demonstrations; a run killed with SIGKILL and resumed without lost or duplicated rows or
//! trajectories; config errors that name the key.

use super::common::{context, session};
use rollscope::model::embedded::{EmbeddedSpec, init_folder};
use rollscope::model::{LanguageModel, LoadOptions};
use rollscope::run::policy::{PolicyRequest, resolve_policy};
use rollscope::run::{RunConfig, RunEvent, train_grpo, train_sft};
use rollscope::store::{Filter, Query, Store};
use rollscope::trajectory::RunStatus;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A small SFT run on scripted calculator demonstrations.
pub const SMALL_SFT: &str = r#"
checkpoint_every = 0
[tasks]
train = "arith:1:train"
train_size = 48
eval = "arith:1:eval"
eval_size = 3
[sft]
epochs = 2
batch_size = 8
[trainer]
learning_rate = 1e-3
[rollout]
tools = ["calculator"]
max_new_tokens = 16
max_tokens = 48
"#;

/// A small run config: few tasks, short turns, a checkpoint every step.
pub const SMALL_GRPO: &str = r#"
name = "test"
seed = 3
checkpoint_every = 1
[tasks]
train = "arith:1:train"
train_size = 40
eval = "arith:1:eval"
eval_size = 3
[rollout]
tools = ["calculator"]
max_turns = 2
max_new_tokens = 12
max_tokens = 40
[grpo]
steps = 3
tasks_per_step = 2
group = 3
dynamic_sampling = false
[eval]
every = 2
"#;

fn metric_steps(store: &Store, run: &str) -> Vec<u64> {
    store
        .metrics(run)
        .unwrap()
        .iter()
        .map(|row| row.step)
        .collect()
}

fn jsonl_steps(path: &Path) -> Vec<u64> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).unwrap()["step"]
                .as_u64()
                .unwrap()
        })
        .collect()
}

/// The steps of the complete rows of a metrics file that may be being written.
fn written_steps(path: &Path) -> Vec<u64> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter_map(|row| row["step"].as_u64())
        .collect()
}

pub fn run_trajectories(store: &Store, run: &str) -> Vec<(u64, u64, u32)> {
    let filter = Filter {
        run: Some(run.to_string()),
        ..Filter::default()
    };
    let summaries = store
        .query(&Query {
            filter,
            ..Query::default()
        })
        .unwrap();
    summaries
        .iter()
        .map(|s| {
            let t = store.get(s.id).unwrap().unwrap();
            (
                t.policy_version.unwrap(),
                t.group.unwrap(),
                t.sample.unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_grpo_run_stores_rows_trajectories_checkpoints_and_its_policy() {
    let root = tempfile::tempdir().unwrap();
    let paths = session(root.path());
    let context = context(&paths);
    let config = RunConfig::parse(SMALL_GRPO).unwrap();
    let mut events = Vec::new();
    let outcome = train_grpo(&context, &config, &mut |event| events.push(event)).unwrap();
    assert_eq!((outcome.status, outcome.step), (RunStatus::Done, 3));
    assert_eq!(metric_steps(&context.store, &outcome.run), vec![0, 1, 2, 3]);
    let files = rollscope::run::RunFiles::of(&paths, &outcome.run);
    assert_eq!(jsonl_steps(&files.metrics()), vec![0, 1, 2, 3]);
    let rows = context.store.metrics(&outcome.run).unwrap();
    for name in [
        "reward",
        "kl",
        "grad_norm",
        "entropy",
        "loss",
        "clip_ratio/region_mean",
        "completions/mean_length",
        "num_turns",
        "tools/call_frequency",
        "step_time",
        "timing/generate",
        "timing/train",
        "frac_reward_zero_std",
        "success_rate",
    ] {
        assert!(
            rows[1].values.contains_key(name),
            "step 1 lacks {name}: {:?}",
            rows[1].values.keys()
        );
    }
    assert!(
        rows[2].values.contains_key("eval/accuracy"),
        "eval every 2 steps"
    );
    assert!(
        rows[3].values.contains_key("eval/accuracy"),
        "and after the last"
    );
    let trained = run_trajectories(&context.store, &outcome.run);
    let unique: BTreeSet<_> = trained.iter().collect();
    assert_eq!((trained.len(), unique.len()), (3 * 2 * 3, 3 * 2 * 3));
    assert_eq!(
        trained.iter().map(|t| t.0).collect::<BTreeSet<_>>(),
        BTreeSet::from([0, 1, 2]),
        "step k samples with policy version k − 1"
    );
    for step in 1..=3 {
        assert!(
            files
                .checkpoints()
                .join(format!("checkpoint-{step}"))
                .is_dir()
        );
    }
    let saved = LanguageModel::load(&outcome.model, &LoadOptions::default()).unwrap();
    let base =
        LanguageModel::load(&paths.models_dir().join("base"), &LoadOptions::default()).unwrap();
    let changed = saved
        .named_parameters()
        .iter()
        .zip(base.named_parameters())
        .any(|((_, a), (_, b))| {
            let diff = (a.as_tensor() - b.as_tensor()).unwrap().abs().unwrap();
            diff.max_all().unwrap().to_scalar::<f32>().unwrap() > 0.0
        });
    assert!(changed, "the saved policy differs from the base model");
    assert!(matches!(
        events.first(),
        Some(RunEvent::Started {
            step: 0,
            total_steps: 3,
            ..
        })
    ));
    assert!(matches!(
        events.last(),
        Some(RunEvent::Finished {
            status: RunStatus::Done,
            ..
        })
    ));
}

#[test]
fn an_sft_run_on_demonstrations_lowers_its_loss_and_evaluates() {
    let root = tempfile::tempdir().unwrap();
    let paths = session(root.path());
    let context = context(&paths);
    let config = RunConfig::parse(SMALL_SFT).unwrap();
    let outcome = train_sft(&context, &config, &mut |_| {}).unwrap();
    assert_eq!(outcome.status, RunStatus::Done);
    let rows = context.store.metrics(&outcome.run).unwrap();
    assert_eq!(rows.len() as u64, outcome.step);
    let first = rows.first().unwrap().values["loss"];
    let last = rows.last().unwrap().values["loss"];
    assert!(last < 0.7 * first, "loss {first} → {last}");
    assert!(rows.last().unwrap().values.contains_key("eval/accuracy"));
    assert!(outcome.eval.is_some());
    assert!(outcome.model.join("model.safetensors").is_file());
    let newest = resolve_policy(&paths, &PolicyRequest::default(), || {
        Ok(context.store.runs()?)
    })
    .unwrap();
    assert_eq!(newest.dir, outcome.model, "the newest policy");
}

#[test]
fn training_starts_from_the_model_session_toml_names() {
    let root = tempfile::tempdir().unwrap();
    let paths = session(root.path());
    let custom = root.path().join("custom");
    let spec = EmbeddedSpec {
        seed: 7,
        ..EmbeddedSpec::default()
    };
    init_folder(&custom, &spec, &LoadOptions::default()).unwrap();
    std::fs::create_dir_all(&paths.dir).unwrap();
    let line = format!("model = {:?}\n", custom.display().to_string());
    std::fs::write(paths.config_path(), line).unwrap();
    let context = context(&paths);
    let quick = SMALL_SFT
        .replace("train_size = 48", "train_size = 8")
        .replace("epochs = 2", "epochs = 1")
        .replace("eval_size = 3", "eval_size = 1");
    let config = RunConfig::parse(&quick).unwrap();
    assert!(config.model.is_none(), "the run config names no model");
    let outcome = train_sft(&context, &config, &mut |_| {}).unwrap();
    let run = context.store.get_run(&outcome.run).unwrap().unwrap();
    assert_eq!(run.model, custom.display().to_string());
    let meta = std::fs::read_to_string(
        paths
            .run_dir(&outcome.run)
            .join("checkpoints")
            .join(format!("checkpoint-{}", outcome.step))
            .join("trainer_state.json"),
    )
    .unwrap();
    assert!(meta.contains(&custom.display().to_string()), "{meta}");
}

#[test]
fn a_killed_grpo_run_resumes_without_lost_or_duplicated_rows_or_trajectories() {
    let root = tempfile::tempdir().unwrap();
    let paths = session(root.path());
    let config_path = root.path().join("run.toml");
    let config = SMALL_GRPO
        .replace("steps = 3", "steps = 5")
        .replace("checkpoint_every = 1", "checkpoint_every = 2");
    std::fs::write(&config_path, config).unwrap();
    let binary = env!("CARGO_BIN_EXE_rollscope");
    let sessions = root.path().to_str().unwrap();
    let mut child = Command::new(binary)
        .args(["--sessions-dir", sessions, "train", "grpo", "--config"])
        .arg(&config_path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let run = "grpo-0001";
    let files = rollscope::run::RunFiles::of(&paths, run);
    // Kill it once a row past its checkpoint after step 2 is written, mid-run.
    let deadline = Instant::now() + Duration::from_secs(300);
    while !written_steps(&files.metrics()).contains(&3) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let running = child.try_wait().unwrap().is_none();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(running, "the kill landed while the run was still going");
    let at_kill = written_steps(&files.metrics());
    let checkpointed = (0..=5)
        .rev()
        .find(|step| {
            files
                .checkpoints()
                .join(format!("checkpoint-{step}"))
                .is_dir()
        })
        .expect("a checkpoint before the kill");
    assert!(
        at_kill.iter().any(|&step| step > checkpointed),
        "rows past checkpoint-{checkpointed} existed when it was killed: {at_kill:?}"
    );
    assert!(
        !at_kill.contains(&5),
        "the run had not finished when it was killed: {at_kill:?}"
    );
    let status = Command::new(binary)
        .args(["--sessions-dir", sessions, "train", "grpo", "--resume", run])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let store = super::common::served_store(&paths);
    assert_eq!(metric_steps(&store, run), vec![0, 1, 2, 3, 4, 5]);
    assert_eq!(jsonl_steps(&files.metrics()), vec![0, 1, 2, 3, 4, 5]);
    let trained = run_trajectories(&store, run);
    let unique: BTreeSet<_> = trained.iter().collect();
    assert_eq!(trained.len(), 5 * 2 * 3, "every step's rollouts, once");
    assert_eq!(unique.len(), trained.len());
    let info = store.get_run(run).unwrap().unwrap();
    assert_eq!((info.status, info.step), (RunStatus::Done, 5));
}

#[test]
fn config_errors_name_the_key() {
    let unknown = RunConfig::parse("[grpo]\nstepz = 3\n").unwrap_err();
    assert!(format!("{unknown:#}").contains("stepz"), "{unknown:#}");
    let mismatch = RunConfig::parse("[rollout]\ntemperature = 0.7\n").unwrap_err();
    assert!(
        format!("{mismatch:#}").contains("grpo.update.temperature"),
        "{mismatch:#}"
    );
    let group = RunConfig::parse("[grpo]\ngroup = 1\n").unwrap_err();
    assert!(format!("{group:#}").contains("grpo.group"), "{group:#}");
    let tasks = RunConfig::parse("[tasks]\ntrain = \"nope\"\n").unwrap_err();
    assert!(format!("{tasks:#}").contains("tasks.train"), "{tasks:#}");
}
