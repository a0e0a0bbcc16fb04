//! The engine trains: a real GRPO run of a tiny embedded model in a temporary session,
//! launched, paused, resumed, stopped and resumed again through the engine's channels, with
//! its metrics rows in the store; and the launches the engine refuses at once.

use rollscope::engine::{Command, Engine, EngineConfig, RunProgress, Update};
use rollscope::model::LoadOptions;
use rollscope::model::embedded::{EmbeddedSpec, init_folder};
use rollscope::run::{GRPO_PRESET, Phase, RunConfig};
use rollscope::session::SessionPaths;
use rollscope::store::Store;
use rollscope::train::checkpoint_dir;
use rollscope::trajectory::RunStatus;
use std::sync::Arc;
use std::sync::mpsc::Receiver;
use std::time::Duration;

/// A session in a temporary folder with its store open, and a small embedded model as its
/// newest policy when `with_model`.
fn session(with_model: bool) -> (tempfile::TempDir, SessionPaths, Arc<Store>) {
    let root = tempfile::tempdir().unwrap();
    let paths = SessionPaths::new(root.path(), "s").unwrap();
    let store = Arc::new(Store::open(&paths.store_dir()).unwrap());
    if with_model {
        let spec = EmbeddedSpec {
            hidden_size: 64,
            num_hidden_layers: 2,
            intermediate_size: 128,
            ..EmbeddedSpec::default()
        };
        init_folder(
            &paths.models_dir().join("base"),
            &spec,
            &LoadOptions::default(),
        )
        .unwrap();
    }
    (root, paths, store)
}

fn engine(paths: &SessionPaths, store: Arc<Store>) -> (Engine, Receiver<Update>) {
    let config = EngineConfig {
        session: Some(paths.clone()),
        ..EngineConfig::default()
    };
    Engine::spawn(store, config).unwrap()
}

/// The GRPO preset cut down to seconds: 2 tasks × G = 2 per step, 2 held-out tasks.
fn tiny_config(steps: u64) -> RunConfig {
    let mut config = RunConfig::parse(GRPO_PRESET).unwrap();
    config.grpo.steps = steps;
    config.grpo.tasks_per_step = 2;
    config.grpo.group = 2;
    config.tasks.train_size = 16;
    config.tasks.eval_size = 2;
    config.rollout.max_turns = 2;
    config.rollout.max_new_tokens = 8;
    config
}

/// Receives updates until `wanted` picks one; a failure fails the test.
fn wait_for<T>(updates: &Receiver<Update>, mut wanted: impl FnMut(&Update) -> Option<T>) -> T {
    loop {
        let update = updates
            .recv_timeout(Duration::from_secs(120))
            .expect("the engine reports");
        if let Some(found) = wanted(&update) {
            return found;
        }
        if let Update::Failed {
            during, message, ..
        } = &update
        {
            panic!("{during}: {message}");
        }
        if let Update::RunChanged(RunProgress {
            error: Some(error), ..
        }) = &update
        {
            panic!("the run failed: {error}");
        }
    }
}

fn changed(update: &Update, check: impl Fn(&RunProgress) -> bool) -> Option<RunProgress> {
    match update {
        Update::RunChanged(progress) if check(progress) => Some(progress.clone()),
        _ => None,
    }
}

#[test]
fn a_launched_run_pauses_resumes_stops_and_resumes_to_the_end() {
    let (_root, paths, store) = session(true);
    let (engine, updates) = engine(&paths, Arc::clone(&store));
    // Enough steps that both pauses land before the last one, however loaded the machine
    // (a pause asked for during the last step finds the run done).
    let total = 8;
    assert!(engine.send(Command::LaunchRun(Box::new(tiny_config(total)))));
    let started = wait_for(&updates, |u| changed(u, |p| p.status == RunStatus::Running));
    let run = started.run.clone();
    assert_eq!((started.step, started.total_steps), (0, total));

    assert!(engine.send(Command::LaunchRun(Box::new(tiny_config(total)))));
    let refusal = wait_for(&updates, |update| match update {
        Update::Failed {
            during, message, ..
        } => Some((during.text(), message.clone())),
        _ => None,
    });
    assert_eq!(refusal.0, "launching a run");
    assert!(refusal.1.contains(&run) && refusal.1.contains("still training"));

    wait_for(&updates, |u| {
        changed(u, |p| {
            p.activity
                .is_some_and(|a| a.step == 1 && a.phase == Phase::Rollouts)
        })
    });
    assert!(engine.send(Command::LoadRuns));
    let listed = wait_for(&updates, |update| match update {
        Update::Runs(runs) => runs.iter().find(|info| info.id == run).cloned(),
        _ => None,
    });
    assert_eq!(
        listed.status,
        RunStatus::Running,
        "the engine answers while it trains"
    );
    assert!(engine.send(Command::PauseRun(run.clone())));
    let paused = wait_for(&updates, |u| changed(u, |p| p.status == RunStatus::Paused));
    assert!(paused.step >= 1 && paused.step < total);

    assert!(engine.send(Command::ResumeRun(run.clone())));
    let going = wait_for(&updates, |u| changed(u, |p| p.activity.is_some()));
    assert_eq!(going.status, RunStatus::Running);
    assert_eq!(going.activity.unwrap().step, paused.step + 1);
    assert!(engine.send(Command::PauseRun(run.clone())));
    let paused = wait_for(&updates, |u| changed(u, |p| p.status == RunStatus::Paused));
    assert!(paused.step < total, "paused after step {}", paused.step);
    assert!(engine.send(Command::StopRun(run.clone())));
    let stopped = wait_for(&updates, |u| changed(u, |p| p.status != RunStatus::Running));
    assert_eq!(
        (stopped.status, stopped.step),
        (RunStatus::Stopped, paused.step)
    );
    let checkpoints = paths.run_dir(&run).join("checkpoints");
    assert!(checkpoint_dir(&checkpoints, paused.step).is_dir());
    let record = store.get_run(&run).unwrap().unwrap();
    assert_eq!(
        (record.status, record.step),
        (RunStatus::Stopped, paused.step)
    );

    assert!(engine.send(Command::ResumeRun(run.clone())));
    let mut appended = Vec::new();
    let done = wait_for(&updates, |update| {
        if let Update::MetricsAppended { rows, .. } = update {
            appended.extend(rows.iter().map(|row| row.step));
        }
        changed(update, |p| p.status != RunStatus::Running)
    });
    assert_eq!((done.status, done.step), (RunStatus::Done, total));
    assert_eq!(appended, ((paused.step + 1)..=total).collect::<Vec<_>>());
    let steps: Vec<u64> = store
        .metrics(&run)
        .unwrap()
        .iter()
        .map(|r| r.step)
        .collect();
    assert_eq!(
        steps,
        (0..=total).collect::<Vec<_>>(),
        "one row per step, none twice"
    );
    let rows = store.metrics(&run).unwrap();
    assert!(rows[1].get("reward").is_some() && rows[1].get("step_time").is_some());
    assert_eq!(
        store.get_run(&run).unwrap().unwrap().status,
        RunStatus::Done
    );
    assert!(paths.models_dir().join(&run).join("config.json").is_file());
    engine.shutdown();
}

#[test]
fn launches_that_cannot_work_are_refused_at_once() {
    let failure = |updates: &Receiver<Update>| {
        wait_for(updates, |update| match update {
            Update::Failed {
                during, message, ..
            } => Some(format!("{during}: {message}")),
            _ => None,
        })
    };
    let (_root, paths, store) = session(false);
    let (sessionless, updates) =
        Engine::spawn(Arc::clone(&store), EngineConfig::default()).unwrap();
    sessionless.send(Command::LaunchRun(Box::new(tiny_config(1))));
    assert!(failure(&updates).contains("no session folder"));
    drop(sessionless);

    let (engine, updates) = engine(&paths, store);
    engine.send(Command::LaunchRun(Box::new(tiny_config(1))));
    assert!(failure(&updates).contains("has no model yet"));
    let mut config = tiny_config(1);
    config.model = Some(paths.dir.join("nowhere"));
    engine.send(Command::LaunchRun(Box::new(config)));
    assert!(failure(&updates).contains("no config.json there"));
    let mut config = tiny_config(1);
    config.grpo.group = 1;
    engine.send(Command::LaunchRun(Box::new(config)));
    assert!(failure(&updates).contains("grpo.group must be at least 2"));
    engine.send(Command::PauseRun("grpo-0009".into()));
    assert_eq!(
        failure(&updates),
        "pausing a run: grpo-0009 is not training in this session"
    );
    engine.send(Command::ResumeRun("grpo-0009".into()));
    assert!(failure(&updates).contains("no run `grpo-0009`"));
}
