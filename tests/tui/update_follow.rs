//! Following another stack's run from the Runs tab: `i` and `:follow` ask for its paths,
//! `r` resumes a stopped follow, `x` stops a running one.

use crate::common::*;
use crate::update_runs::runs_app;
use crossterm::event::KeyCode;
use rollscope::engine::{Command, Update};
use rollscope::trajectory::{RunKind, RunStatus};
use rollscope::tui::{Action, App, Msg};

/// The status bar's message.
fn notice(app: &App) -> String {
    app.status
        .notice
        .as_ref()
        .map_or_else(String::new, |notice| notice.text.clone())
}

/// Whether the status bar's message is a warning.
fn warned(app: &App) -> bool {
    app.status
        .notice
        .as_ref()
        .is_some_and(|notice| notice.error)
}

#[test]
fn i_asks_for_the_paths_to_follow_and_a_stopped_follow_resumes_with_r() {
    let mut app = runs_app(vec![run_info("grpo-0001", RunKind::Grpo, RunStatus::Done)]);
    assert!(app.update(char_key('i')).is_empty());
    let screen = render(&app);
    assert!(
        screen.contains("follow (files or run folders):"),
        "the prompt says what it wants:\n{screen}"
    );
    let commands = submit(&mut app, "'/runs/trl out' ~/verl/rollouts");
    let home = std::path::PathBuf::from(std::env::var_os("HOME").expect("a home folder"));
    assert_eq!(
        commands,
        vec![Command::FollowRun(vec![
            "/runs/trl out".into(),
            home.join("verl/rollouts"),
        ])],
        "quoted words keep their spaces; ~ is the home folder"
    );
    assert!(app.update(char_key('i')).is_empty());
    assert!(submit(&mut app, "").is_empty(), "nothing to follow");
    assert!(warned(&app) && notice(&app).contains("rollout_data_dir"));
    assert!(app.update(char_key('i')).is_empty());
    assert!(submit(&mut app, "'unclosed").is_empty());
    assert!(notice(&app).contains("unclosed quote"));

    act(&mut app, &[Action::TabRollouts]);
    assert_eq!(
        submit(&mut app, ":follow /runs/a.jsonl"),
        vec![Command::FollowRun(vec!["/runs/a.jsonl".into()])],
        "`:follow` does the same from any tab"
    );
    assert_eq!(app.tab, rollscope::tui::Tab::Runs, "and shows the Runs tab");

    app.update(Msg::Engine(Update::Runs(vec![
        run_info("import-0002", RunKind::Import, RunStatus::Stopped),
        run_info("import-0003", RunKind::Import, RunStatus::Running),
    ])));
    act(&mut app, &[Action::Up]);
    assert_eq!(
        app.update(char_key('r')),
        vec![Command::ResumeRun("import-0002".into())],
        "a stopped follow resumes in a process of its own"
    );
    assert!(notice(&app).contains("reading its paths again"));
    act(&mut app, &[Action::Down]);
    assert_eq!(
        app.update(char_key('x')),
        vec![Command::StopRun("import-0003".into())]
    );
}

/// Types text into the open prompt and presses Enter.
fn submit(app: &mut App, text: &str) -> Vec<Command> {
    let mut commands = type_text(app, text);
    commands.extend(app.update(key(KeyCode::Enter)));
    commands
}
