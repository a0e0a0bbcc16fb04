//! The engine trains in background processes: a real GRPO run of a tiny embedded model in a
//! temporary session, launched through the engine's channels into a process of its own (the
//! hidden `rollscope job` reading the typed spec the engine wrote), paused, resumed, stopped, resumed again, killed and resumed to the
//! end, every step seen through the store as another TUI would see it; and the launches the
//! engine refuses at once.

use rollscope::engine::{Command, Engine, EngineConfig, JobLauncher, Update};
use rollscope::model::LoadOptions;
use rollscope::model::embedded::{EmbeddedSpec, init_folder};
use rollscope::run::{GRPO_PRESET, RunConfig, observed};
use rollscope::session::SessionPaths;
use rollscope::store::{ServerLauncher, Store};
use rollscope::train::checkpoint_dir;
use rollscope::trajectory::{RunInfo, RunStatus};
use std::sync::Arc;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// A session in a temporary folder with its store open (through its server when `served`,
/// as the background runs need), and a small embedded model as its newest policy when
/// `with_model`.
fn session(with_model: bool, served: bool) -> (tempfile::TempDir, SessionPaths, Arc<Store>) {
    let root = tempfile::tempdir().unwrap();
    let paths = SessionPaths::new(root.path(), "s").unwrap();
    let store = match served {
        true => {
            let launcher = ServerLauncher::rollscope(env!("CARGO_BIN_EXE_rollscope"));
            Store::connect(&paths.store_dir(), launcher).unwrap()
        }
        false => Store::open(&paths.store_dir()).unwrap(),
    };
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
    (root, paths, Arc::new(store))
}

fn engine(paths: &SessionPaths, store: Arc<Store>) -> (Engine, Receiver<Update>) {
    let config = EngineConfig {
        session: Some(paths.clone()),
        launcher: Some(JobLauncher::rollscope(env!("CARGO_BIN_EXE_rollscope"))),
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
    }
}

/// The pid of the process the engine launched.
fn launched(updates: &Receiver<Update>) -> u32 {
    wait_for(updates, |update| match update {
        Update::Launched { pid, log } => {
            assert!(log.is_file(), "{} holds the run's output", log.display());
            let spec = rollscope::engine::JobSpec::read(&log.with_extension("json")).unwrap();
            assert_eq!(spec.session, "s", "the spec names the session");
            Some(*pid)
        }
        _ => None,
    })
}

/// Polls the store, as another TUI would, until a run (seen now) satisfies `wanted`.
fn wait_run(store: &Store, mut wanted: impl FnMut(&RunInfo) -> bool) -> RunInfo {
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let runs = store.runs().unwrap().into_iter().map(observed);
        if let Some(run) = runs.into_iter().find(|run| wanted(run)) {
            return run;
        }
        assert!(
            Instant::now() < deadline,
            "no run got there: {:?}",
            store.runs()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn trained_by(run: &RunInfo, pid: u32) -> bool {
    run.process
        .as_ref()
        .is_some_and(|process| process.pid == pid)
}

#[test]
fn a_launched_run_trains_in_its_own_process_and_is_steered_through_the_store() {
    let (_root, paths, store) = session(true, true);
    let (engine, updates) = engine(&paths, Arc::clone(&store));
    // Enough steps that both pauses land before the last one, however loaded the machine
    // (a pause asked for during the last step finds the run done): a request reaches the
    // training process within a quarter of a second, a step takes about as long.
    let total = 40;
    assert!(engine.send(Command::LaunchRun(Box::new(tiny_config(total)))));
    let pid = launched(&updates);
    let started = wait_run(&store, |run| {
        trained_by(run, pid) && run.status == RunStatus::Running
    });
    let run = started.id.clone();
    assert_eq!(started.total_steps, total);
    assert!(engine.send(Command::LoadRuns));
    let listed = wait_for(&updates, |update| match update {
        Update::Runs(runs) => runs.iter().find(|info| info.id == run).cloned(),
        _ => None,
    });
    assert_eq!(
        listed.status,
        RunStatus::Running,
        "the engine sees it train"
    );

    assert!(engine.send(Command::ResumeRun(run.clone())));
    let refusal = wait_for(&updates, |update| match update {
        Update::Failed { message, .. } => Some(message.clone()),
        _ => None,
    });
    assert!(
        refusal.contains("only a stopped, failed or interrupted run resumes"),
        "{refusal}"
    );

    assert!(engine.send(Command::PauseRun(run.clone())));
    let paused = wait_run(&store, |info| {
        info.id == run && info.status == RunStatus::Paused
    });
    // A pause may land before the first step ends on a loaded machine (the run then waits
    // at step 0); it must land before the last.
    assert!(
        paused.step < total,
        "paused at step {} of {total}",
        paused.step
    );
    std::thread::sleep(Duration::from_millis(800));
    let waiting = store.get_run(&run).unwrap().unwrap();
    assert_eq!(
        (waiting.status, waiting.step),
        (RunStatus::Paused, paused.step),
        "a paused run waits"
    );
    assert!(engine.send(Command::ResumeRun(run.clone())));
    wait_run(&store, |info| {
        info.id == run && info.status == RunStatus::Running
    });
    assert!(engine.send(Command::PauseRun(run.clone())));
    let paused = wait_run(&store, |info| {
        info.id == run && info.status == RunStatus::Paused
    });
    assert!(paused.step < total, "paused after step {}", paused.step);
    assert!(engine.send(Command::StopRun(run.clone())));
    let stopped = wait_run(&store, |info| {
        info.id == run && info.status == RunStatus::Stopped
    });
    assert_eq!(stopped.step, paused.step);
    let checkpoints = paths.run_dir(&run).join("checkpoints");
    assert!(checkpoint_dir(&checkpoints, paused.step).is_dir());

    assert!(engine.send(Command::ResumeRun(run.clone())));
    let second = launched(&updates);
    assert_ne!(second, pid);
    let moving = wait_run(&store, |info| {
        info.id == run && trained_by(info, second) && info.step > paused.step
    });
    // SAFETY: kill has no memory effects; the pid is the child the engine just launched.
    assert_eq!(unsafe { libc::kill(second as i32, libc::SIGKILL) }, 0);
    let interrupted = wait_run(&store, |info| {
        info.id == run && info.status == RunStatus::Interrupted
    });
    assert!(interrupted.step >= moving.step);
    assert!(engine.send(Command::ResumeRun(run.clone())));
    let third = launched(&updates);
    let done = wait_run(&store, |info| {
        info.id == run && info.status == RunStatus::Done
    });
    assert!(trained_by(&done, third));
    assert_eq!(done.step, total);
    let steps: Vec<u64> = store
        .metrics(&run)
        .unwrap()
        .iter()
        .map(|r| r.step)
        .collect();
    assert_eq!(
        steps,
        (0..=total).collect::<Vec<_>>(),
        "one row per step, none twice, across three processes and a kill"
    );
    let rows = store.metrics(&run).unwrap();
    assert!(rows[1].get("reward").is_some() && rows[1].get("step_time").is_some());
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
    let (_root, paths, store) = session(false, false);
    let (sessionless, updates) =
        Engine::spawn(Arc::clone(&store), EngineConfig::default()).unwrap();
    sessionless.send(Command::LaunchRun(Box::new(tiny_config(1))));
    assert!(failure(&updates).contains("no session folder"));
    drop(sessionless);

    let config = EngineConfig {
        session: Some(paths.clone()),
        ..EngineConfig::default()
    };
    let (processless, updates) = Engine::spawn(Arc::clone(&store), config).unwrap();
    processless.send(Command::LaunchRun(Box::new(tiny_config(1))));
    assert!(failure(&updates).contains("cannot start processes"));
    drop(processless);

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
        "pausing a run: no run `grpo-0009` in this session; `rollscope runs` lists them"
    );
    engine.send(Command::ResumeRun("grpo-0009".into()));
    assert!(failure(&updates).contains("no run `grpo-0009`"));
}

#[test]
fn a_followed_run_reads_in_its_own_process_stops_and_resumes_where_it_stopped() {
    let (_root, paths, store) = session(false, true);
    let (engine, updates) = engine(&paths, Arc::clone(&store));
    let failure = |updates: &Receiver<Update>| {
        wait_for(updates, |update| match update {
            Update::Failed { message, .. } => Some(message.clone()),
            _ => None,
        })
    };
    let nowhere = paths.dir.join("no such run");
    engine.send(Command::FollowRun(vec![nowhere.clone()]));
    assert!(
        failure(&updates).contains(&format!("cannot follow {}", nowhere.display())),
        "a path that does not exist is refused at once"
    );

    let followed = tempfile::tempdir().unwrap();
    let trl = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/formats/trl");
    std::fs::create_dir(followed.path().join("completions")).unwrap();
    let steps: Vec<_> = std::fs::read_dir(trl.join("completions"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    let copy_step = |step: &std::path::Path| {
        let target = followed
            .path()
            .join("completions")
            .join(step.file_name().unwrap());
        std::fs::copy(step, target).unwrap();
    };
    let mut per_step = 0;
    let mut tally = |item: rollscope::formats::Item| {
        per_step += usize::from(matches!(item, rollscope::formats::Item::Trajectory(_)));
        Ok(())
    };
    rollscope::formats::import_file(&steps[0], Default::default(), &mut tally).unwrap();
    copy_step(&steps[0]);
    engine.send(Command::FollowRun(vec![followed.path().to_path_buf()]));
    let pid = launched(&updates);
    let count = |run: &str| {
        store
            .ids(&rollscope::store::Filter {
                run: Some(run.to_string()),
                ..Default::default()
            })
            .unwrap()
            .len()
    };
    let run = wait_run(&store, |run| {
        trained_by(run, pid) && count(&run.id) == per_step
    });
    assert_eq!(run.status, RunStatus::Running);
    engine.send(Command::FollowRun(vec![followed.path().join(".")]));
    assert!(
        failure(&updates).contains(&format!("{} already follows these paths", run.id)),
        "the same paths, spelt another way, are not followed twice"
    );
    copy_step(&steps[1]);
    wait_run(&store, |seen| {
        seen.id == run.id && count(&run.id) == 2 * per_step
    });
    engine.send(Command::StopRun(run.id.clone()));
    wait_run(&store, |seen| {
        seen.id == run.id && seen.status == RunStatus::Stopped
    });

    for step in &steps[2..] {
        copy_step(step);
    }
    let checkpoint = followed.path().join("checkpoint-4");
    std::fs::create_dir(&checkpoint).unwrap();
    std::fs::copy(
        trl.join("checkpoint-4/trainer_state.json"),
        checkpoint.join("trainer_state.json"),
    )
    .unwrap();
    engine.send(Command::ResumeRun(run.id.clone()));
    let again = launched(&updates);
    assert_ne!(again, pid);
    wait_run(&store, |seen| {
        seen.id == run.id && trained_by(seen, again) && count(&run.id) == steps.len() * per_step
    });
    engine.send(Command::StopRun(run.id.clone()));
    wait_run(&store, |seen| {
        seen.id == run.id && seen.status == RunStatus::Stopped
    });
    assert_eq!(count(&run.id), steps.len() * per_step, "nothing read twice");
    assert_eq!(
        store.runs().unwrap().len(),
        1,
        "one run for the whole follow"
    );
    let metrics = store.metrics(&run.id).unwrap();
    assert!(
        !metrics.is_empty(),
        "the trainer state's rows are the run's metrics"
    );
}
