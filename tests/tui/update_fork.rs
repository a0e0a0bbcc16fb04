//! Forks from the trajectory screen: `F` asks for the continuations (and an edited tool
//! result) and starts a background fork of the current turn; the outcome lists the branches;
//! `b` walks their children, `B` goes back up to the parent.

use crate::common::*;
use crossterm::event::KeyCode;
use rollscope::engine::{Command, ForkLaunch, LoadedTrajectory, Update};
use rollscope::trajectory::{ForkBranch, ForkOrigin, PrefixKind, Role, Trajectory};
use rollscope::tui::{Action, App, Msg};

fn notice(app: &App) -> String {
    app.status
        .notice
        .as_ref()
        .map_or_else(String::new, |notice| notice.text.clone())
}

/// Clears the prompt's prefilled `8`, types `text` and presses Enter.
fn submit(app: &mut App, text: &str) -> Vec<Command> {
    app.update(key(KeyCode::Backspace));
    let mut commands = type_text(app, text);
    commands.extend(app.update(key(KeyCode::Enter)));
    commands
}

/// Answers the `LoadTrajectory` among `commands` with `trajectory`, which must be the one asked.
fn answer(app: &mut App, commands: &[Command], trajectory: &Trajectory) {
    answer_with_parent(app, commands, trajectory, None);
}

/// As `answer`, with the parent the engine loads for a fork.
fn answer_with_parent(
    app: &mut App,
    commands: &[Command],
    trajectory: &Trajectory,
    parent: Option<&Trajectory>,
) {
    let (tag, id) = commands
        .iter()
        .find_map(|command| match command {
            Command::LoadTrajectory { tag, id } => Some((*tag, *id)),
            _ => None,
        })
        .expect("a LoadTrajectory command");
    assert_eq!(id, trajectory.id, "the trajectory asked for");
    app.update(Msg::Engine(Update::Trajectory {
        tag,
        loaded: Box::new(LoadedTrajectory {
            trajectory: trajectory.clone(),
            task: None,
            spellings: None,
            parent: parent.map(|parent| Box::new(parent.clone())),
            tree: Vec::new(),
        }),
    }));
}

/// The first turn (1-based) after turn 1 that a tool result comes just before.
fn turn_after_a_result(trajectory: &Trajectory) -> Option<usize> {
    let mut turn = 0;
    let mut result = false;
    for message in &trajectory.messages {
        match message.role {
            Role::Assistant if turn >= 1 && result => return Some(turn + 1),
            Role::Assistant => {
                turn += 1;
                result = false;
            }
            Role::Tool => result = true,
            _ => {}
        }
    }
    None
}

fn child(parent: &Trajectory, index: u64, turn: u32) -> Trajectory {
    let mut child = trajectory(100 + index);
    child.fork = Some(ForkOrigin {
        parent: parent.id,
        turn,
        index: index as u32,
        seed: index,
        edits: Vec::new(),
        policy: "models/base".into(),
        prefix: PrefixKind::Tokens,
    });
    child
}

#[test]
fn f_forks_the_current_turn_and_b_and_capital_b_walk_the_tree() {
    let mut app = listed_app(4, 4);
    act(&mut app, &[Action::Open]);
    let parent = trajectory(0);
    assert_eq!(app.tabs.rollouts.trajectory.id(), Some(parent.id));

    assert!(app.update(char_key('F')).is_empty());
    assert!(
        render(&app).contains("fork from this turn"),
        "the prompt asks"
    );
    let commands = app.update(key(KeyCode::Enter));
    assert_eq!(
        commands,
        vec![Command::ForkTrajectory(ForkLaunch {
            id: parent.id,
            turn: 1,
            n: 8,
            observation: None,
            policy: None,
        })],
        "Enter takes the eight continuations offered"
    );
    assert!(notice(&app).contains("forking t1 × 8"), "{}", notice(&app));

    app.update(char_key('F'));
    assert!(
        submit(&mut app, "4 obs=42").is_empty(),
        "no result comes before turn 1"
    );
    assert!(notice(&app).contains("no tool result"), "{}", notice(&app));
    app.update(char_key('F'));
    assert!(submit(&mut app, "many").is_empty());
    assert!(
        notice(&app).contains("number of continuations"),
        "{}",
        notice(&app)
    );

    let turn = turn_after_a_result(&parent)
        .expect("the synthetic rollout has a tool result between turns");
    act(&mut app, &vec![Action::Right; turn - 1]);
    app.update(char_key('F'));
    assert_eq!(
        submit(&mut app, "4 obs='41 apples' policy=3"),
        vec![Command::ForkTrajectory(ForkLaunch {
            id: parent.id,
            turn,
            n: 4,
            observation: Some("41 apples".into()),
            policy: Some("3".into()),
        })]
    );

    assert!(app.update(char_key('b')).is_empty());
    assert!(notice(&app).contains("no branches"), "{}", notice(&app));
    assert!(app.update(char_key('B')).is_empty());
    assert!(notice(&app).contains("not a fork"), "{}", notice(&app));

    let children = [child(&parent, 1, 2), child(&parent, 2, 2)];
    let mut forked = parent.clone();
    forked.branches.push(ForkBranch {
        run: "rollout-0009".into(),
        turn: 2,
        children: children.iter().map(|c| c.id).collect(),
        passed: 1,
        edited: false,
    });
    let reload = act(&mut app, &[Action::Refresh]);
    answer(&mut app, &reload, &forked);
    act(&mut app, &[Action::Right; 12]);
    let screen = render(&app);
    assert!(
        screen.contains("branches") && screen.contains("from t2 × 2"),
        "{screen}"
    );
    assert!(screen.contains("1 pass (50%)"), "{screen}");

    let opened = app.update(char_key('b'));
    answer_with_parent(&mut app, &opened, &children[0], Some(&forked));
    assert!(
        notice(&app).contains("branch child 1 of 2"),
        "{}",
        notice(&app)
    );
    assert!(
        render(&app).contains("fork of"),
        "a child says where it came from"
    );
    let next = app.update(char_key('b'));
    answer(&mut app, &next, &children[1]);
    let round = app.update(char_key('b'));
    answer(&mut app, &round, &children[0]);
    let up = app.update(char_key('B'));
    answer(&mut app, &up, &forked);
    assert_eq!(app.tabs.rollouts.trajectory.id(), Some(parent.id));
}

/// Opens synthetic trajectory `index` of a listed app from the top of the list.
fn open_index(app: &mut App, index: u64) {
    let mut commands = act(app, &[Action::Back, Action::Top]);
    for _ in 0..index {
        commands.extend(act(app, &[Action::Down]));
    }
    commands.extend(act(app, &[Action::Open]));
    answer_preview(app, &commands);
    assert_eq!(
        app.tabs.rollouts.trajectory.id(),
        Some(trajectory(index).id)
    );
}

#[test]
fn capital_r_repairs_a_labelled_failure_from_the_turn_of_its_first_label() {
    let labelled_failure = (0..64)
        .find(|&index| {
            let t = trajectory(index);
            t.passed() == Some(false) && t.labels.first().is_some_and(|l| l.step == 1)
        })
        .expect("the synthetic set labels some failures at step 1");
    let passed = (0..64)
        .find(|&index| trajectory(index).passed() == Some(true))
        .expect("a passing synthetic trajectory");
    let mut app = listed_app(64, 64);

    open_index(&mut app, passed);
    assert!(app.update(char_key('R')).is_empty());
    assert!(
        notice(&app).contains("repair is for failures"),
        "{}",
        notice(&app)
    );

    open_index(&mut app, labelled_failure);
    let failure = trajectory(labelled_failure);
    let turn = failure.turn_of_step(1).expect("step 1 is in a turn");
    assert_eq!(
        app.update(char_key('R')),
        vec![Command::ForkTrajectory(ForkLaunch {
            id: failure.id,
            turn,
            n: 8,
            observation: None,
            policy: None,
        })],
        "R forks from the turn of the first label, whatever turn the cursor is on"
    );
    let kind = failure.labels[0].kind.to_string();
    assert!(
        notice(&app).contains(&format!("repairing from t{turn}")) && notice(&app).contains(&kind),
        "{}",
        notice(&app)
    );
}
