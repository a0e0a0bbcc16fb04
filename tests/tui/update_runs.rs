//! Update tests for launching and steering runs from the Runs tab: the launch form, the
//! Runs tab's own keys, live progress into the run list, pause / resume / stop.

use crate::common::*;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rollscope::engine::{Command, Update};
use rollscope::run::{GRPO_PRESET, Phase, RunConfig};
use rollscope::trajectory::{RunActivity, RunInfo, RunKind, RunProcess, RunStatus};
use rollscope::tui::launch_form::LaunchField;
use rollscope::tui::state::runs::describe;
use rollscope::tui::{Action, App, Msg};

/// An app on the Runs tab holding `runs`, the last one selected.
pub fn runs_app(runs: Vec<RunInfo>) -> App {
    let mut app = app(120, 40);
    app.start();
    act(&mut app, &[Action::TabRuns]);
    app.update(Msg::Engine(Update::Runs(runs)));
    app
}

fn ctrl(c: char) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

#[test]
fn n_opens_the_form_from_the_preset_and_enter_launches_the_edited_config() {
    let mut app = runs_app(vec![]);
    assert!(app.update(char_key('n')).is_empty());
    let form = app.tabs.runs.form.as_ref().expect("the form is open");
    let preset = RunConfig::parse(GRPO_PRESET).unwrap();
    assert_eq!(form.input(LaunchField::Tasks), preset.tasks.train);
    assert_eq!(form.input(LaunchField::Model), "");
    assert_eq!(
        form.input(LaunchField::Group),
        preset.grpo.group.to_string()
    );
    let rate: f64 = form.input(LaunchField::LearningRate).parse().unwrap();
    assert_eq!(rate, preset.trainer.learning_rate);
    let beta: f64 = form.input(LaunchField::Beta).parse().unwrap();
    assert_eq!(beta, preset.grpo.update.objective.beta);
    assert_eq!(
        form.input(LaunchField::Steps),
        preset.grpo.steps.to_string()
    );
    assert_eq!(form.input(LaunchField::Seed), preset.seed.to_string());
    app.update(ctrl('u'));
    type_text(&mut app, "arith:3:train");
    app.update(key(KeyCode::Tab));
    app.update(key(KeyCode::Tab));
    assert_eq!(
        app.tabs.runs.form.as_ref().unwrap().field,
        LaunchField::Group
    );
    app.update(key(KeyCode::Backspace));
    type_text(&mut app, "4");
    app.update(key(KeyCode::Down));
    app.update(key(KeyCode::Down));
    app.update(ctrl('u'));
    type_text(&mut app, "0");
    app.update(key(KeyCode::BackTab));
    assert_eq!(
        app.tabs.runs.form.as_ref().unwrap().field,
        LaunchField::LearningRate
    );
    app.update(ctrl('u'));
    type_text(&mut app, "1e-5");
    let commands = app.update(key(KeyCode::Enter));
    let [Command::LaunchRun(config)] = commands.as_slice() else {
        panic!("one LaunchRun, got {commands:?}");
    };
    assert_eq!(config.tasks.train, "arith:3:train");
    assert_eq!(config.tasks.eval, "arith:3:eval");
    assert_eq!(config.model, None);
    assert_eq!(config.grpo.group, 4);
    assert_eq!(config.trainer.learning_rate, 1e-5);
    assert_eq!(config.grpo.update.objective.beta, 0.0);
    assert_eq!(config.grpo.tasks_per_step, preset.grpo.tasks_per_step);
    assert!(app.tabs.runs.form.is_none());
    app.update(char_key('n'));
    let again = app.tabs.runs.form.as_ref().unwrap();
    assert_eq!(
        again.input(LaunchField::Group),
        "4",
        "prefilled from the last launch"
    );
}

#[test]
fn invalid_values_name_their_field_and_esc_cancels() {
    let mut app = runs_app(vec![]);
    act(&mut app, &[Action::NewRun]);
    app.update(key(KeyCode::Down));
    app.update(key(KeyCode::Down));
    app.update(ctrl('u'));
    type_text(&mut app, "1");
    app.update(key(KeyCode::Down));
    assert!(app.update(key(KeyCode::Enter)).is_empty());
    let form = app.tabs.runs.form.as_ref().unwrap();
    let (field, message) = form.problem.clone().expect("a problem");
    assert_eq!(field, Some(LaunchField::Group));
    assert_eq!(
        form.field,
        LaunchField::Group,
        "the focus goes to the field at fault"
    );
    assert!(message.starts_with("G: ") && message.contains("grpo.group must be at least 2"));
    app.update(key(KeyCode::Backspace));
    assert!(
        app.tabs.runs.form.as_ref().unwrap().problem.is_none(),
        "editing clears it"
    );
    type_text(&mut app, "x");
    app.update(key(KeyCode::Enter));
    let (_, message) = app.tabs.runs.form.clone().unwrap().problem.unwrap();
    assert_eq!(message, "G: `x` is not a whole number");
    app.update(ctrl('u'));
    type_text(&mut app, "2");
    for _ in 0..2 {
        app.update(key(KeyCode::Down));
    }
    app.update(ctrl('u'));
    type_text(&mut app, "-1");
    app.update(key(KeyCode::Enter));
    let (field, message) = app.tabs.runs.form.clone().unwrap().problem.unwrap();
    assert_eq!(field, Some(LaunchField::Beta));
    assert!(message.starts_with("β: -1 must be 0 or more"), "{message}");
    app.update(key(KeyCode::Up));
    app.update(ctrl('u'));
    type_text(&mut app, "fast");
    app.update(key(KeyCode::Enter));
    let (field, _) = app.tabs.runs.form.clone().unwrap().problem.unwrap();
    assert_eq!(field, Some(LaunchField::LearningRate));
    app.update(key(KeyCode::Esc));
    assert!(app.tabs.runs.form.is_none());
    assert_eq!(
        app.tab,
        rollscope::tui::Tab::Runs,
        "esc closes only the form"
    );
}

#[test]
fn the_runs_keys_shadow_global_keys_in_the_runs_tab_only() {
    let mut app = listed_app(64, 64);
    app.update(char_key('n'));
    assert!(
        app.tabs.runs.form.is_none(),
        "n writes a note outside the Runs tab"
    );
    assert!(app.prompt.is_some());
    app.update(key(KeyCode::Esc));
    let keys = |action| app.keymap.first_key(action);
    assert_eq!(
        [
            keys(Action::NewRun),
            keys(Action::PauseRun),
            keys(Action::ResumeRun),
            keys(Action::StopRun),
            keys(Action::Note),
            keys(Action::Reference),
        ],
        ["n", "p", "r", "x", "n", "r"].map(String::from)
    );
    let mut runs = runs_app(vec![run_info("grpo-0001", RunKind::Grpo, RunStatus::Done)]);
    runs.update(char_key('n'));
    assert!(runs.tabs.runs.form.is_some() && runs.prompt.is_none());
}

/// A run training in process `pid`, at `step` of 30.
fn trained_by(id: &str, status: RunStatus, step: u64, pid: u32) -> RunInfo {
    RunInfo {
        step,
        process: Some(RunProcess {
            pid,
            host: "here".into(),
            started_ticks: 1,
            log: None,
        }),
        ..run_info(id, RunKind::Grpo, status)
    }
}

fn launched(app: &mut App, pid: u32) -> Vec<Command> {
    app.update(Msg::Engine(Update::Launched {
        pid,
        log: format!("/s/jobs/{pid}.log").into(),
    }))
}

#[test]
fn a_launched_run_is_selected_and_its_progress_and_end_are_announced() {
    let mut app = runs_app(vec![run_info("grpo-0001", RunKind::Grpo, RunStatus::Done)]);
    assert_eq!(launched(&mut app, 4242), vec![Command::LoadRuns]);
    let notice = app.status.notice.clone().unwrap().text;
    assert!(
        notice.contains("process 4242") && notice.contains("/s/jobs/4242.log"),
        "{notice}"
    );
    let mut started = trained_by("grpo-0002", RunStatus::Running, 2, 4242);
    started.activity = Some(RunActivity {
        step: 3,
        phase: Phase::Rollouts,
        done: 37,
        total: 64,
    });
    let commands = app.update(Msg::Engine(Update::Runs(vec![
        run_info("grpo-0001", RunKind::Grpo, RunStatus::Done),
        trained_by("grpo-0000", RunStatus::Running, 1, 9),
        started.clone(),
    ])));
    assert_eq!(app.tabs.runs.selected_run().unwrap().id, "grpo-0002");
    assert_eq!(
        commands,
        vec![Command::LoadMetrics {
            run: "grpo-0002".into()
        }]
    );
    assert_eq!(describe(&started), "step 3/30 · rollouts 37/64");
    let screen = render(&app);
    assert!(
        screen.contains("▶ grpo-0002 step 3/30 · rollouts"),
        "{screen}"
    );
    let here: Vec<_> = app
        .tabs
        .runs
        .training_here()
        .iter()
        .map(|run| run.id.clone())
        .collect();
    assert_eq!(
        here,
        ["grpo-0002"],
        "the run another process trains is not ours"
    );
    app.update(Msg::Engine(Update::Runs(vec![
        run_info("grpo-0001", RunKind::Grpo, RunStatus::Done),
        trained_by("grpo-0002", RunStatus::Paused, 4, 4242),
    ])));
    let record = app.tabs.runs.selected_run().unwrap();
    assert_eq!((record.status, record.step), (RunStatus::Paused, 4));
    assert!(
        app.status
            .notice
            .as_ref()
            .unwrap()
            .text
            .contains("paused after step 4")
    );
    let mut failed = trained_by("grpo-0002", RunStatus::Failed, 4, 4242);
    failed.note = Some("out of memory".into());
    app.update(Msg::Engine(Update::Runs(vec![failed])));
    let notice = app.status.notice.clone().unwrap();
    assert!(notice.error && notice.text.contains("out of memory"));
    assert!(app.tabs.runs.live().is_none() && app.tabs.runs.training_here().is_empty());
    app.update(Msg::Engine(Update::Runs(vec![trained_by(
        "grpo-0002",
        RunStatus::Interrupted,
        4,
        4242,
    )])));
    let notice = app.status.notice.clone().unwrap();
    assert!(
        notice.error && notice.text.contains("`r` resumes it"),
        "{}",
        notice.text
    );
}

#[test]
fn pause_resume_and_stop_steer_any_training_run_and_refuse_others() {
    let mut app = runs_app(vec![
        run_info("grpo-0001", RunKind::Grpo, RunStatus::Stopped),
        run_info("sft-0002", RunKind::Sft, RunStatus::Stopped),
        trained_by("grpo-0003", RunStatus::Running, 3, 77),
    ]);
    let warned = |app: &App| {
        app.status
            .notice
            .as_ref()
            .is_some_and(|notice| notice.error)
    };
    assert!(
        app.update(char_key('r')).is_empty() && warned(&app),
        "running: no resume"
    );
    assert_eq!(
        app.update(char_key('p')),
        vec![Command::PauseRun("grpo-0003".into())],
        "a run another process trains is steered all the same"
    );
    app.update(Msg::Engine(Update::Runs(vec![
        run_info("grpo-0001", RunKind::Grpo, RunStatus::Stopped),
        run_info("sft-0002", RunKind::Sft, RunStatus::Stopped),
        trained_by("grpo-0003", RunStatus::Paused, 4, 77),
    ])));
    assert!(
        app.update(char_key('p')).is_empty() && warned(&app),
        "already paused"
    );
    assert_eq!(
        app.update(char_key('r')),
        vec![Command::ResumeRun("grpo-0003".into())]
    );
    assert_eq!(
        app.update(char_key('x')),
        vec![Command::StopRun("grpo-0003".into())]
    );
    act(&mut app, &[Action::Up]);
    assert!(
        app.update(char_key('r')).is_empty(),
        "an SFT run resumes from the CLI"
    );
    assert!(
        app.status
            .notice
            .as_ref()
            .unwrap()
            .text
            .contains("train sft --resume")
    );
    act(&mut app, &[Action::Up]);
    assert!(
        app.update(char_key('x')).is_empty() && warned(&app),
        "stopped: no stop"
    );
    assert_eq!(
        app.update(char_key('r')),
        vec![Command::ResumeRun("grpo-0001".into())],
        "a stopped GRPO run resumes from its checkpoint in a process of its own"
    );
    app.update(Msg::Engine(Update::Runs(vec![trained_by(
        "grpo-0001",
        RunStatus::Interrupted,
        5,
        78,
    )])));
    assert_eq!(
        app.update(char_key('r')),
        vec![Command::ResumeRun("grpo-0001".into())],
        "so does one whose process is gone"
    );
}

#[test]
fn quitting_with_a_run_launched_here_asks_whether_to_keep_it_or_stop_it() {
    let training = || {
        let mut app = runs_app(vec![]);
        launched(&mut app, 7);
        app.update(Msg::Engine(Update::Runs(vec![
            trained_by("grpo-0002", RunStatus::Running, 3, 7),
            trained_by("grpo-0003", RunStatus::Running, 1, 8),
        ])));
        app
    };
    let mut app = training();
    assert!(app.update(char_key('q')).is_empty());
    assert!(app.quit_prompt && !app.quit);
    let screen = render(&app);
    assert!(
        screen.contains("runs launched here still train"),
        "{screen}"
    );
    assert!(screen.contains("grpo-0002 step 3/30") && !screen.contains("grpo-0003 step"));
    assert!(screen.contains("keep them going in the background"));
    assert!(app.update(key(KeyCode::Esc)).is_empty());
    assert!(!app.quit_prompt && !app.quit, "esc stays");
    app.update(char_key('q'));
    assert_eq!(
        app.update(char_key('s')),
        vec![Command::StopRun("grpo-0002".into())],
        "only the run launched here is stopped"
    );
    assert!(app.quit);
    let mut app = training();
    app.update(char_key('q'));
    assert!(app.update(char_key('b')).is_empty() && app.quit);
    let mut app = runs_app(vec![trained_by("grpo-0003", RunStatus::Running, 1, 8)]);
    app.update(char_key('q'));
    assert!(app.quit, "a run launched elsewhere does not hold the TUI");
}
