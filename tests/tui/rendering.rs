//! How a transcript draws what agents write: an OpenHands `str_replace` edit as a diff, a long
//! JSON result pretty-printed, markdown rendered, a SWE-agent patch coloured, tau-bench's
//! expected actions checked against the calls made; snapshots at 80×24 and 200×60.

use crate::common::*;
use crate::snapshots::snapshot;
use crossterm::event::KeyCode;
use rollscope::trajectory::Trajectory;
use rollscope::tui::{Action, App};

/// The written OpenHands stream in `tests/data/transcripts` (see its README).
fn openhands_edit() -> Trajectory {
    imported_from("tests/data/transcripts", "openhands_str_replace_edit.json")
}

/// Brings the outcome to the top of the transcript (`l` past the last turn).
fn to_outcome(app: &mut App) {
    for _ in 0..1000 {
        if render(app).contains("conversation · outcome") {
            return;
        }
        act(app, &[Action::Right]);
    }
    panic!("the outcome never came to the top");
}

/// Brings turn `turn` (1-based) to the top of the transcript.
fn to_turn(app: &mut App, turn: usize) {
    act(app, &[Action::Top]);
    act(app, &vec![Action::Right; turn]);
}

#[test]
fn an_openhands_edit_reads_as_a_diff_under_its_file() {
    let mut app = crate::content::opened(openhands_edit(), 120, 40);
    to_turn(&mut app, 1);
    let screen = render(&app);
    assert!(
        screen.contains("→ str_replace_editor str_replace /workspace/pricing.py"),
        "{screen}"
    );
    assert!(screen.contains("- def total_price(flights):"), "{screen}");
    assert!(
        screen.contains("+ def total_price(flights, baggage_fee=0):"),
        "{screen}"
    );
    assert!(!screen.contains("\\n"), "no escaped line breaks: {screen}");
}

#[test]
fn a_long_json_result_gets_its_line_breaks() {
    let mut app = crate::content::opened(openhands_edit(), 120, 40);
    to_turn(&mut app, 2);
    let screen = render(&app);
    assert!(
        screen.contains("\"flight_number\": \"HAT001\","),
        "{screen}"
    );
    assert!(screen.contains("\"economy\": 107,"), "{screen}");
}

#[test]
fn markdown_in_the_agents_text_is_rendered() {
    let mut app = crate::content::opened(openhands_edit(), 120, 40);
    to_turn(&mut app, 3);
    let screen = render(&app);
    assert!(screen.contains("## Done"), "{screen}");
    assert!(
        screen.contains("1. it takes a baggage_fee (default 0);"),
        "{screen}"
    );
    assert!(
        screen.contains("• HAT001 at 08:00, economy $107"),
        "{screen}"
    );
    assert!(screen.contains("  • 3 business seats left"), "{screen}");
    assert!(screen.contains("│ Prices are per passenger."), "{screen}");
    assert!(
        screen.contains("total_price(flights, baggage_fee=50)"),
        "{screen}"
    );
    assert!(
        !screen.contains("**") && !screen.contains("```"),
        "{screen}"
    );
}

#[test]
fn a_swe_agent_patch_reads_as_a_diff() {
    let mut app = crate::content::opened(imported("6e44b9__sweagenttestrepo-1c2844.traj"), 120, 40);
    to_outcome(&mut app);
    let screen = render(&app);
    assert!(screen.contains("a patch of"), "{screen}");
    assert!(
        screen.contains("+def division(a: float, b: float) -> float:"),
        "{screen}"
    );
    assert!(
        screen.contains("-def division(a: float, b: float) -> float"),
        "{screen}"
    );
    assert!(!screen.contains('↵'), "{screen}");
}

#[test]
fn a_tau_bench_failure_shows_the_expected_actions_against_the_calls_made() {
    let trajectory = imported("tau_bench_airline_one.json");
    let expected = trajectory
        .extra
        .get("info")
        .and_then(|info| info.pointer("/task/actions"))
        .and_then(|actions| actions.as_array())
        .expect("tau-bench keeps the expected actions")
        .len();
    let mut app = crate::content::opened(trajectory, 120, 60);
    to_outcome(&mut app);
    let screen = render(&app);
    assert!(
        screen.contains(&format!("expected actions ({expected})")),
        "{screen}"
    );
    assert!(
        screen.contains("✗ book_reservation made in turn"),
        "{screen}"
    );
    assert!(screen.contains("(- sent, + expected)"), "{screen}");
}

#[test]
fn rendered_transcripts_at_80x24_and_200x60() {
    // Each case: its trajectory and the turn brought to the top (none: the outcome).
    type Case = (&'static str, fn() -> Trajectory, Option<usize>);
    let cases: [Case; 5] = [
        ("openhands_edit", openhands_edit, Some(1)),
        ("long_json", openhands_edit, Some(2)),
        ("markdown", openhands_edit, Some(3)),
        (
            "swe_agent_patch",
            || imported("6e44b9__sweagenttestrepo-1c2844.traj"),
            None,
        ),
        (
            "tau_bench_expected_actions",
            || imported("tau_bench_airline_one.json"),
            None,
        ),
    ];
    for (name, trajectory, turn) in cases {
        for (width, height) in [(80, 24), (200, 60)] {
            let mut app = crate::content::opened(trajectory(), width, height);
            match turn {
                Some(turn) => to_turn(&mut app, turn),
                None => to_outcome(&mut app),
            }
            snapshot(&format!("rendered_{name}_{width}x{height}"), &app);
        }
    }
}

#[test]
fn a_long_system_prompt_folds_after_its_first_lines_until_z_at_the_height_chosen() {
    let trajectory = imported("6e44b9__sweagenttestrepo-1c2844.traj");
    let system_lines = trajectory.messages[0].content.lines().count();
    assert!(system_lines > 16, "the fixture's system prompt is long");
    let mut app = crate::content::opened(trajectory, 120, 40);
    act(&mut app, &[Action::Top]);
    let hidden = |app: &App| -> usize {
        let screen = render(app);
        let folded = screen
            .lines()
            .find(|line| line.contains("more lines folded (z unfolds)"))
            .unwrap_or_else(|| panic!("{screen}"));
        folded
            .split("▸ ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|count| count.parse().ok())
            .expect("a count of folded lines")
    };
    assert_eq!(hidden(&app), system_lines - 12, "12 lines by default");
    type_text(&mut app, ":fold 5");
    app.update(key(KeyCode::Enter));
    assert_eq!(hidden(&app), system_lines - 5, "`:fold 5` shows five");
    type_text(&mut app, ":fold many");
    app.update(key(KeyCode::Enter));
    let notice = app.status.notice.as_ref().map(|notice| notice.text.clone());
    assert!(
        notice.is_some_and(|text| text.contains("N is a number of lines (now 5)")),
        "a height that is no number is refused"
    );
    act(&mut app, &[Action::Fold]);
    assert!(!render(&app).contains("more lines folded"));
}
