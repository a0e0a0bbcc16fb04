//! The whole conversation in one pane: turn boundaries, jumps between turns, the first and
//! last message, the per-turn view behind `v`, turn briefs in the sidebar, and a long
//! trajectory laid out only where it is shown.

use crate::common::*;
use rollscope::trajectory::{Message, ToolCall, Trajectory, TrajectoryId};
use rollscope::tui::Action;

#[test]
fn a_swe_agent_run_reads_as_one_conversation_from_first_to_last_message() {
    let mut app = crate::content::opened(imported("swe_agent_0x_ctf_networking_1.traj"), 120, 40);
    let steps = app
        .tabs
        .rollouts
        .trajectory
        .open
        .as_ref()
        .unwrap()
        .sections
        .len()
        - 2;
    let screen = render(&app);
    assert!(
        screen.contains(&format!("conversation · turn 1 of {steps}")),
        "{screen}"
    );
    assert!(
        screen.contains(&format!("── turn 1 of {steps} · assistant")),
        "{screen}"
    );
    assert!(
        screen.contains(&format!("── turn 2 of {steps} · assistant")),
        "{screen}"
    );

    act(&mut app, &[Action::Bottom]);
    let screen = render(&app);
    assert!(screen.contains("── outcome"), "{screen}");
    assert!(
        screen.contains("submit 'flag{d316759c281bf925d600be698a4973d5}'"),
        "{screen}"
    );
    assert!(screen.contains(" end "), "{screen}");
    assert_eq!(app.tabs.rollouts.trajectory.current_step(), Some(steps - 1));

    act(&mut app, &[Action::Top]);
    let screen = render(&app);
    assert!(screen.contains("── prompt · system and task"), "{screen}");
    assert!(screen.contains(" top "), "{screen}");
    assert_eq!(app.tabs.rollouts.trajectory.current_step(), None);

    act(&mut app, &[Action::Right, Action::Right]);
    assert_eq!(app.tabs.rollouts.trajectory.current_step(), Some(1));
    let screen = render(&app);
    let first_pane_row = screen
        .lines()
        .find(|line| line.contains("── "))
        .unwrap_or_default();
    assert!(first_pane_row.contains("── turn 2 of"), "{screen}");

    act(&mut app, &[Action::Transcript]);
    let screen = render(&app);
    assert!(
        screen.contains(&format!(" turn 2 of {steps} · assistant ")),
        "{screen}"
    );
    assert!(!screen.contains("── turn 3 of"), "{screen}");
    act(&mut app, &[Action::Transcript]);
    assert!(render(&app).contains("── turn 3 of"));
}

#[test]
fn scrolling_line_by_line_crosses_turns_and_makes_the_top_turn_current() {
    let mut app = crate::content::opened(imported("swe_agent_0x_ctf_networking_1.traj"), 120, 40);
    act(&mut app, &[Action::Top]);
    let mut seen = vec![app.tabs.rollouts.trajectory.section];
    for _ in 0..400 {
        act(&mut app, &[Action::Down]);
        seen.push(app.tabs.rollouts.trajectory.section);
    }
    assert!(seen.windows(2).all(|pair| pair[0] <= pair[1]), "{seen:?}");
    assert!(seen.contains(&1) && seen.contains(&2), "{seen:?}");
    let at_end = app.tabs.rollouts.trajectory.transcript.top;
    act(&mut app, &[Action::Down, Action::PageDown]);
    assert_eq!(app.tabs.rollouts.trajectory.transcript.top, at_end);
    for _ in 0..400 {
        act(&mut app, &[Action::Up]);
    }
    assert_eq!(app.tabs.rollouts.trajectory.section, 0);
    assert!(render(&app).contains(" top "));
}

#[test]
fn the_sidebar_and_the_boundaries_name_each_turns_tool_and_command() {
    let app = crate::content::opened(imported("openhands_wrong_initial_state.json"), 160, 40);
    let screen = render(&app);
    assert!(
        screen.contains("execute_bash: mv /workspace/game_2048.py"),
        "{screen}"
    );
    let sidebar: Vec<&str> = screen
        .lines()
        .filter(|line| line.contains("│ t1 ") || line.contains("│ t2 "))
        .collect();
    assert!(
        sidebar
            .iter()
            .any(|line| line.contains("  mv /workspace/game_2")),
        "short of room, a shell's command says more than its name: {sidebar:?}"
    );
    assert!(
        sidebar
            .iter()
            .any(|line| line.contains("  view /workspace")),
        "an editor's command and file: {sidebar:?}"
    );
    let app = crate::content::opened(imported("swe_agent_0x_ctf_networking_1.traj"), 120, 40);
    let screen = render(&app);
    assert!(screen.contains("tshark -n -r networking.pcap"), "{screen}");
}

/// A trajectory of `turns` assistant turns, each a shell call and its output.
fn long_trajectory(turns: usize) -> Trajectory {
    let mut messages = vec![
        Message::system("You are an agent."),
        Message::user("Do it."),
    ];
    for turn in 0..turns {
        let mut call = Message::assistant(format!("Turn {turn}: listing."));
        call.tool_calls.push(ToolCall::new(
            "bash",
            format!(r#"{{"command": "ls /tmp/{turn}"}}"#),
        ));
        messages.push(call);
        messages.push(Message::tool(format!("output of turn {turn}")));
    }
    messages.push(Message::assistant("Final Answer: done"));
    Trajectory::new(TrajectoryId(0x1099), messages)
}

#[test]
fn a_long_trajectory_jumps_to_its_last_message_and_back() {
    let turns = 20_000;
    let mut app = crate::content::opened(long_trajectory(turns), 100, 30);
    act(&mut app, &[Action::Bottom]);
    let screen = render(&app);
    assert!(screen.contains("Final Answer: done"), "{screen}");
    assert!(
        screen.contains(&format!("output of turn {}", turns - 1)),
        "{screen}"
    );
    act(&mut app, &[Action::PageUp]);
    let screen = render(&app);
    assert!(!screen.contains("Final Answer: done"), "{screen}");
    assert!(
        screen.contains(&format!("output of turn {}", turns / 10 - 1)),
        "{screen}"
    );
    act(&mut app, &[Action::Top]);
    assert!(render(&app).contains("Do it."));
}

#[test]
fn the_transcript_benchmark_opens_its_generated_trajectory_and_reaches_both_ends() {
    let options = rollscope::bench::TranscriptBenchOptions {
        messages: 2_000,
        scrolls: 3,
        size: (100, 30),
    };
    let trajectory = rollscope::bench::transcript::agent_trajectory(options.messages);
    assert_eq!(trajectory.messages.len(), 2_000);
    let report = rollscope::bench::bench_transcript(&options).unwrap();
    assert_eq!(report.messages, 2_000);
    assert_eq!(report.turns, trajectory.steps().len());
    assert!(report.open_ms > 0.0 && report.end_ms > 0.0);
}
