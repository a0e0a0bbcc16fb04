//! The end-to-end case: a GRPO run training, two TUI engines labelling, and CLI `list`,
//! `show`, `label` and `export` processes, all on one session at once.

use super::common::{cli, connect, demo, failures, session, stdout};
use rollscope::engine::{Command, Engine, EngineConfig, LabelDraft, Update};
use rollscope::model::LoadOptions;
use rollscope::model::embedded::{EmbeddedSpec, init_folder};
use rollscope::store::{Filter, Query};
use rollscope::trajectory::{ErrorKind, LabelStatus, RunKind, RunStatus, TrajectoryId};
use std::collections::BTreeSet;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

const GRPO: &str = r#"
name = "live"
seed = 3
checkpoint_every = 0
[tasks]
train = "arith:1:train"
train_size = 40
eval = "arith:1:eval"
eval_size = 2
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
"#;

/// An engine over the session's server, labelling as `author`.
fn engine(
    paths: &rollscope::session::SessionPaths,
    author: &str,
) -> (Engine, std::sync::mpsc::Receiver<Update>) {
    let config = EngineConfig {
        annotator: Some(author.into()),
        ..EngineConfig::default()
    };
    Engine::spawn(Arc::new(connect(paths)), config).unwrap()
}

/// Waits for `count` saved-label updates.
fn saved(updates: &std::sync::mpsc::Receiver<Update>, count: usize) {
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut seen = 0;
    while seen < count {
        let left = deadline.saturating_duration_since(Instant::now());
        match updates.recv_timeout(left) {
            Ok(Update::LabelsSaved { .. }) => seen += 1,
            Ok(Update::Failed { message, .. }) => panic!("engine failed: {message}"),
            Ok(_) => {}
            Err(error) => panic!("{seen} of {count} labels saved: {error}"),
        }
    }
}

#[test]
fn a_training_run_two_tuis_and_cli_commands_share_one_session() {
    let root = tempfile::tempdir().unwrap();
    let paths = session(root.path());
    let spec = EmbeddedSpec {
        hidden_size: 64,
        num_hidden_layers: 2,
        intermediate_size: 128,
        ..EmbeddedSpec::default()
    };
    init_folder(&paths.base_model(), &spec, &LoadOptions::default()).unwrap();
    demo(root.path(), 120);
    let ids = failures(root.path(), 8);
    assert_eq!(ids.len(), 8);
    let config = root.path().join("grpo.toml");
    std::fs::write(&config, GRPO).unwrap();
    let training = cli(root.path(), "trainer", &["train", "grpo", "--config"])
        .arg(&config)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (alice, alice_updates) = engine(&paths, "alice");
    let (bob, bob_updates) = engine(&paths, "bob");
    let export = root.path().join("passing.jsonl");
    let mut commands = Vec::new();
    for id in &ids {
        commands.push(cli(
            root.path(),
            "carol",
            &["label", id, "--turn", "1", "--kind", "calculation"],
        ));
        commands.push(cli(root.path(), "reader", &["show", id]));
        commands.push(cli(
            root.path(),
            "reader",
            &["list", "--json", "--limit", "20"],
        ));
    }
    let mut exporter = cli(
        root.path(),
        "reader",
        &["export", "--format", "openai", "--pass", "-o"],
    );
    exporter.arg(&export);
    commands.push(exporter);
    let children: Vec<_> = commands
        .iter_mut()
        .map(|command| {
            command
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for id in &ids {
        let id: TrajectoryId = id.parse().unwrap();
        for (engine, kind) in [
            (&alice, ErrorKind::Reasoning),
            (&bob, ErrorKind::Calculation),
        ] {
            let draft = LabelDraft {
                step: 0,
                kind,
                status: LabelStatus::Confirmed,
                note: None,
            };
            assert!(engine.send(Command::SaveLabel { id, draft }));
        }
    }
    for child in children {
        stdout(child.wait_with_output().unwrap());
    }
    saved(&alice_updates, ids.len());
    saved(&bob_updates, ids.len());
    let trained = training.wait_with_output().unwrap();
    assert!(
        trained.status.success(),
        "train grpo: {}",
        String::from_utf8_lossy(&trained.stderr)
    );
    drop((alice, bob));

    let store = connect(&paths);
    for id in &ids {
        let trajectory = store.get(id.parse().unwrap()).unwrap().unwrap();
        let mut labels: Vec<(String, u32, ErrorKind)> = trajectory
            .labels
            .iter()
            .filter(|label| {
                let author = label.author.as_deref().unwrap_or_default();
                ["alice", "bob", "carol"].contains(&author)
            })
            .map(|label| {
                (
                    label.author.clone().unwrap_or_default(),
                    label.step,
                    label.kind,
                )
            })
            .collect();
        labels.sort_by_key(|(author, step, kind)| (author.clone(), *step, kind.index()));
        assert_eq!(
            labels,
            vec![
                ("alice".to_string(), 0, ErrorKind::Reasoning),
                ("bob".to_string(), 0, ErrorKind::Calculation),
                ("carol".to_string(), 0, ErrorKind::Calculation),
            ],
            "{id}: every author's label, once"
        );
    }
    let run = store
        .runs()
        .unwrap()
        .into_iter()
        .find(|run| run.kind == RunKind::Grpo && run.seed == 3)
        .expect("the training run's record");
    assert_eq!((run.status, run.step), (RunStatus::Done, 3));
    let steps: Vec<u64> = store
        .metrics(&run.id)
        .unwrap()
        .iter()
        .map(|row| row.step)
        .collect();
    assert_eq!(
        steps,
        (0..=run.step).collect::<Vec<_>>(),
        "every step's row, once"
    );
    let query = Query {
        filter: Filter {
            run: Some(run.id.clone()),
            ..Filter::default()
        },
        ..Query::default()
    };
    let rollouts = store.query(&query).unwrap();
    let unique: BTreeSet<_> = rollouts.iter().map(|summary| summary.id).collect();
    assert_eq!(rollouts.len(), 3 * 2 * 3, "every step's rollouts");
    assert_eq!(unique.len(), rollouts.len(), "none twice");
    let exported = std::fs::read_to_string(&export).unwrap();
    assert!(
        exported.lines().count() > 0,
        "the export wrote passing rollouts"
    );
}
