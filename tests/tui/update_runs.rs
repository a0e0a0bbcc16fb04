//! Update tests for launching and steering runs from the Runs tab: the launch form, the
//! Runs tab's own keys, live progress into the run list, pause / resume / stop.

use crate::common::*;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rollscope::engine::{Command, RunActivity, RunProgress, Update};
use rollscope::run::{GRPO_PRESET, Phase, RunConfig};
use rollscope::trajectory::{RunInfo, RunKind, RunStatus};
use rollscope::tui::launch_form::LaunchField;
use rollscope::tui::state::runs::describe;
use rollscope::tui::{Action, App, Msg};

fn progress(run: &str, status: RunStatus, step: u64) -> RunProgress {
    RunProgress {
        run: run.into(),
        status,
        step,
        total_steps: 30,
        activity: None,
        error: None,
    }
}

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

#[test]
fn live_progress_reaches_the_run_list_and_a_new_run_is_selected() {
    let mut app = runs_app(vec![run_info("grpo-0001", RunKind::Grpo, RunStatus::Done)]);
    let mut started = progress("grpo-0002", RunStatus::Running, 0);
    let commands = app.update(Msg::Engine(Update::RunChanged(started.clone())));
    assert_eq!(commands[0], Command::LoadRuns);
    assert!(
        matches!(commands[1..], [Command::List { .. }]),
        "a new run recounts the list: {commands:?}"
    );
    started.activity = Some(RunActivity {
        step: 3,
        phase: Phase::Rollouts,
        done: 37,
        total: 64,
    });
    assert!(
        app.update(Msg::Engine(Update::RunChanged(started.clone())))
            .is_empty(),
        "the run list is asked for once"
    );
    assert_eq!(describe(&started), "step 3/30 · rollouts 37/64");
    let commands = app.update(Msg::Engine(Update::Runs(vec![
        run_info("grpo-0001", RunKind::Grpo, RunStatus::Done),
        run_info("grpo-0002", RunKind::Grpo, RunStatus::Running),
        run_info("sft-0003", RunKind::Sft, RunStatus::Done),
    ])));
    assert_eq!(app.tabs.runs.selected_run().unwrap().id, "grpo-0002");
    assert_eq!(
        commands,
        vec![Command::LoadMetrics {
            run: "grpo-0002".into()
        }]
    );
    app.update(Msg::Engine(Update::RunChanged(progress(
        "grpo-0002",
        RunStatus::Paused,
        4,
    ))));
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
    let mut failed = progress("grpo-0002", RunStatus::Failed, 4);
    failed.error = Some("out of memory".into());
    app.update(Msg::Engine(Update::RunChanged(failed)));
    let notice = app.status.notice.clone().unwrap();
    assert!(notice.error && notice.text.contains("out of memory"));
    assert_eq!(
        app.tabs.runs.selected_run().unwrap().status,
        RunStatus::Failed
    );
    assert!(app.tabs.runs.active().is_none());
}

#[test]
fn pause_resume_and_stop_steer_the_live_run_and_refuse_others() {
    let mut app = runs_app(vec![
        run_info("grpo-0001", RunKind::Grpo, RunStatus::Stopped),
        run_info("sft-0002", RunKind::Sft, RunStatus::Stopped),
        run_info("grpo-0003", RunKind::Grpo, RunStatus::Running),
    ]);
    app.update(Msg::Engine(Update::RunChanged(progress(
        "grpo-0003",
        RunStatus::Running,
        3,
    ))));
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
        vec![Command::PauseRun("grpo-0003".into())]
    );
    app.update(Msg::Engine(Update::RunChanged(progress(
        "grpo-0003",
        RunStatus::Paused,
        4,
    ))));
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
        app.update(char_key('r')).is_empty(),
        "grpo-0003 still trains"
    );
    assert!(app.update(char_key('x')).is_empty() && warned(&app));
    app.update(Msg::Engine(Update::RunChanged(progress(
        "grpo-0003",
        RunStatus::Stopped,
        4,
    ))));
    assert_eq!(
        app.update(char_key('r')),
        vec![Command::ResumeRun("grpo-0001".into())],
        "a stopped GRPO run resumes from its checkpoint once nothing trains"
    );
}

#[test]
fn the_header_counts_follow_a_run_as_it_writes_rollouts() {
    let mut app = listed_app(8, 8);
    act(&mut app, &[Action::Down, Action::Down]);
    assert!(render(&app).contains("8 rollouts"));
    let tag = app.tabs.rollouts.list.tag;
    let relisted = |commands: &[Command]| {
        commands
            .iter()
            .any(|command| matches!(command, Command::List { tag: listed, .. } if *listed == tag))
    };
    let commands = app.update(Msg::Engine(Update::RunChanged(progress(
        "grpo-0009",
        RunStatus::Running,
        1,
    ))));
    assert!(
        relisted(&commands),
        "a finished step recounts: {commands:?}"
    );
    app.update(Msg::Engine(Update::Window(rollscope::engine::Window {
        tag,
        start: 0,
        rows: summaries(24),
        matching: Some(24),
        stored: Some(24),
    })));
    let screen = render(&app);
    assert!(screen.contains("24 rollouts"), "{screen}");
    assert!(screen.contains("3 of 24"), "the cursor stays\n{screen}");
    let mut activity = progress("grpo-0009", RunStatus::Running, 1);
    activity.activity = Some(RunActivity {
        step: 2,
        phase: Phase::Rollouts,
        done: 3,
        total: 8,
    });
    let commands = app.update(Msg::Engine(Update::RunChanged(activity)));
    assert!(
        !relisted(&commands),
        "progress inside a step does not recount"
    );
    let commands = app.update(Msg::Engine(Update::RunChanged(progress(
        "grpo-0009",
        RunStatus::Done,
        1,
    ))));
    assert!(relisted(&commands), "the run's end recounts");
}
