//! Bitwise reproducible training: the same seed and config, trained by two `rollscope`
//! processes at once (each loading the other's cores, so their threads are scheduled
//! differently), give the same final weights byte for byte and the same metrics rows bit
//! for bit (wall-clock figures aside), the gradient norm of every step included. The
//! batches are large enough (thousands of token rows) for the kernels to split their work
//! into many tasks, where a sum combined in the order the tasks finish would differ.

use super::common::session;
use rollscope::model::{ISA_ENV, Isa};
use rollscope::session::SessionPaths;
use rollscope::store::{Filter, Query};
use rollscope::trajectory::metric;
use std::collections::BTreeMap;
use std::process::{Command, Stdio};

/// SFT in batches of 32 calculator demonstrations (about 6000 token rows each), 4 steps.
const WIDE_SFT: &str = r#"
checkpoint_every = 0
[tasks]
train = "arith:1:train"
train_size = 64
eval = "arith:1:eval"
eval_size = 1
[sft]
epochs = 2
batch_size = 32
[trainer]
learning_rate = 1e-3
[rollout]
tools = ["calculator"]
max_new_tokens = 8
max_tokens = 24
"#;

/// GRPO on 8 tasks × 8 samples a step, 2 steps.
const WIDE_GRPO: &str = r#"
seed = 3
checkpoint_every = 0
[tasks]
train = "arith:1:train"
train_size = 40
eval = "arith:1:eval"
eval_size = 1
[rollout]
tools = ["calculator"]
max_turns = 2
max_new_tokens = 12
max_tokens = 40
[grpo]
steps = 2
tasks_per_step = 8
group = 8
dynamic_sampling = false
[eval]
every = 0
"#;

/// Runs `rollscope train KIND --config CONFIG` in two fresh sessions at the same time.
fn train_twice(kind: &str, config: &str) -> Vec<(tempfile::TempDir, SessionPaths)> {
    train_at_once(kind, config, &[None, None])
}

/// Runs `rollscope train KIND --config CONFIG` in a fresh session per entry of `isas` at the
/// same time, each with `--isa` when its entry names one.
fn train_at_once(
    kind: &str,
    config: &str,
    isas: &[Option<Isa>],
) -> Vec<(tempfile::TempDir, SessionPaths)> {
    let sessions: Vec<_> = isas
        .iter()
        .map(|_| {
            let root = tempfile::tempdir().unwrap();
            let paths = session(root.path());
            std::fs::write(root.path().join("run.toml"), config).unwrap();
            (root, paths)
        })
        .collect();
    let children: Vec<_> = sessions
        .iter()
        .zip(isas)
        .map(|((root, _), isa)| {
            let mut command = Command::new(env!("CARGO_BIN_EXE_rollscope"));
            if let Some(isa) = isa {
                command.args(["--isa", isa.name()]);
            }
            command
                .env_remove(ISA_ENV)
                .arg("--sessions-dir")
                .arg(root.path())
                .args(["train", kind, "--config"])
                .arg(root.path().join("run.toml"))
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    sessions
}

/// Every metrics row of the run as `step → name → bits`, wall-clock figures left out.
fn metric_bits(paths: &SessionPaths, run: &str) -> BTreeMap<u64, BTreeMap<String, u64>> {
    let store = super::common::served_store(paths);
    store
        .metrics(run)
        .unwrap()
        .into_iter()
        .map(|row| {
            let values = row
                .values
                .into_iter()
                .filter(|(name, _)| !metric::is_timing(name))
                .map(|(name, value)| (name, value.to_bits()))
                .collect();
            (row.step, values)
        })
        .collect()
}

/// The token ids and the bits of the sampled log-probs of each of the run's trajectories, by
/// group and sample.
type Traces = BTreeMap<(Option<u64>, Option<u32>), (Vec<u32>, Vec<u32>)>;

fn trace_bits(paths: &SessionPaths, run: &str) -> Traces {
    let store = super::common::served_store(paths);
    let query = Query {
        filter: Filter {
            run: Some(run.to_string()),
            ..Filter::default()
        },
        ..Query::default()
    };
    store
        .query(&query)
        .unwrap()
        .iter()
        .map(|summary| {
            let trajectory = store.get(summary.id).unwrap().unwrap();
            let trace = trajectory.token_trace.unwrap_or_default();
            let logprobs = trace.logprobs.iter().map(|value| value.to_bits()).collect();
            (
                (trajectory.group, trajectory.sample),
                (trace.token_ids, logprobs),
            )
        })
        .collect()
}

/// Asserts that the two sessions' runs `run` recorded the same rows and saved the same policy.
fn assert_identical(sessions: &[(tempfile::TempDir, SessionPaths)], run: &str) {
    let [(_, first), (_, second)] = sessions else {
        panic!("two sessions expected");
    };
    let (rows, other_rows) = (metric_bits(first, run), metric_bits(second, run));
    assert!(rows.len() > 1, "{run} recorded {} rows", rows.len());
    for (step, values) in &rows {
        let other = &other_rows[step];
        for (name, bits) in values {
            assert_eq!(
                Some(bits),
                other.get(name),
                "{run} step {step}: {name} is {} in one process and {:?} in the other",
                f64::from_bits(*bits),
                other.get(name).map(|bits| f64::from_bits(*bits))
            );
        }
    }
    assert_eq!(rows, other_rows, "{run}: the same rows and names");
    assert!(
        trace_bits(first, run) == trace_bits(second, run),
        "{run}: the rollouts differ between the processes"
    );
    assert!(
        weights(first, run) == weights(second, run),
        "{run}: the saved weights differ between the processes"
    );
}

/// The bytes of a run's saved weights.
fn weights(paths: &SessionPaths, run: &str) -> Vec<u8> {
    std::fs::read(paths.models_dir().join(run).join("model.safetensors")).unwrap()
}

#[test]
fn two_sft_processes_at_once_train_the_same_bits() {
    let sessions = train_twice("sft", WIDE_SFT);
    assert_identical(&sessions, "sft-0001");
}

#[test]
fn two_grpo_processes_at_once_train_the_same_bits() {
    let sessions = train_twice("grpo", WIDE_GRPO);
    assert_identical(&sessions, "grpo-0001");
}

/// `--isa` reaches every product of a training process: the instruction set below this
/// machine's best (portable on a CPU with nothing better) trains the same bits in two
/// processes, and other bits than the best one does, since each rounds its own way.
#[test]
fn an_instruction_set_named_by_isa_trains_its_own_same_bits() {
    let available = Isa::available();
    let best = Isa::best();
    let asked = available.iter().rev().nth(1).copied().unwrap_or(best);
    let sessions = train_at_once("sft", WIDE_SFT, &[Some(asked), Some(asked), None]);
    assert_identical(&sessions[..2], "sft-0001");
    if asked != best {
        assert!(
            weights(&sessions[0].1, "sft-0001") != weights(&sessions[2].1, "sft-0001"),
            "{asked} and {best} trained the same weights: --isa changed nothing"
        );
    }
}
