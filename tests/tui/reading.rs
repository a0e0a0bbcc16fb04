//! Reading real transcripts: prose wraps at words by display width, code and JSON keep
//! their lines and scroll sideways, wide characters never leave stray cells.

use crate::common::*;
use crate::content::opened;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use rollscope::trajectory::{Message, Reward, ToolCall, Trajectory, TrajectoryId};
use rollscope::tui::{Action, App, view};

/// A trajectory whose first turn has a long sentence, a long JSON argument and a line of
/// flags and CJK characters.
fn long_lines() -> Trajectory {
    let mut sentence = "word ".repeat(31);
    sentence.push_str("arguments surrogate-ish ");
    sentence.push_str(&"tail ".repeat(30));
    let mut turn = Message::assistant(sentence);
    let expression = format!("{}TAIL42", "1+".repeat(70));
    turn.tool_calls.push(ToolCall::new(
        "calculator",
        format!(r#"{{"expression": "{expression}"}}"#),
    ));
    let flags = "🇫🇷🇯🇵数学".repeat(12);
    let mut trajectory = Trajectory::new(
        TrajectoryId(0x77),
        vec![
            Message::system("sys"),
            Message::user("question"),
            turn,
            Message::tool(format!(r#"{{"flags": "x{flags}"}}"#)),
            Message::assistant("Final Answer: 2"),
        ],
    );
    trajectory.task_id = Some("long-lines".into());
    trajectory.reward = Some(Reward::scalar(0.0));
    trajectory
}

/// The screen's rows as text.
fn rows(app: &App) -> Vec<String> {
    render(app).lines().map(str::to_string).collect()
}

#[test]
fn prose_wraps_at_words_and_never_cuts_one() {
    for width in [100u16, 160, 61] {
        let app = opened(long_lines(), width, 40);
        let screen = render(&app);
        assert!(screen.contains("arguments"), "{screen}");
        assert!(screen.contains("surrogate-ish"), "{screen}");
        for row in rows(&app) {
            let words: Vec<&str> = row.split([' ', '│']).collect();
            assert!(
                !words.contains(&"argum") && !words.contains(&"wor"),
                "a word cut in half: {row}"
            );
        }
    }
}

#[test]
fn json_keeps_its_lines_and_scrolls_sideways() {
    let mut app = opened(long_lines(), 100, 40);
    let screen = render(&app);
    assert!(screen.contains("\"expression\": \"1+1+"), "{screen}");
    assert!(
        !screen.contains("TAIL42"),
        "the JSON line is not wrapped onto a second row\n{screen}"
    );
    act(&mut app, &[Action::ScrollRight; 20]);
    let scrolled = render(&app);
    assert!(scrolled.contains("TAIL42\""), "{scrolled}");
    assert!(scrolled.contains("← col"), "the pane says it is scrolled");
    assert!(
        scrolled.contains("arguments"),
        "prose stays put while code scrolls\n{scrolled}"
    );
    act(&mut app, &[Action::ScrollLeft; 20]);
    assert!(render(&app).contains("\"expression\": \"1+1+"));
}

#[test]
fn wide_characters_leave_no_stray_cells_when_scrolled() {
    let mut app = opened(long_lines(), 100, 40);
    for shift in 0..6 {
        let mut terminal = Terminal::new(TestBackend::new(100, 40)).expect("terminal");
        terminal
            .draw(|frame| view::draw(frame, &app))
            .expect("draw");
        let buffer = terminal.backend().buffer().clone();
        let flag_row = (0..40)
            .find(|&y| (0..100).any(|x| buffer[(x, y)].symbol().contains('数')))
            .unwrap_or_else(|| panic!("the flags row is shown after {shift} scrolls"));
        assert_eq!(
            buffer[(99, flag_row)].symbol(),
            "│",
            "the pane's border stays in its column after {shift} scrolls"
        );
        for x in 0..100 {
            let symbol = buffer[(x, flag_row)].symbol();
            let regional = symbol
                .chars()
                .filter(|c| ('\u{1F1E6}'..='\u{1F1FF}').contains(c))
                .count();
            assert!(
                regional == 0 || regional == 2,
                "half a flag at column {x} after {shift} scrolls"
            );
        }
        act(&mut app, &[Action::ScrollRight]);
    }
}

#[test]
fn help_in_the_token_view_lists_the_token_keys() {
    let mut app = listed_app(8, 8);
    act(&mut app, &[Action::Open, Action::Tokens]);
    assert!(
        app.tabs.rollouts.trajectory.tokens.is_some(),
        "the synthetic rollout has a token trace"
    );
    act(&mut app, &[Action::Help]);
    let help = render(&app);
    assert!(help.contains("next token"), "{help}");
    assert!(help.contains("shade by log-prob / entropy"), "{help}");
    assert!(!help.contains("next turn"), "{help}");
}

#[test]
fn a_message_leaves_the_key_hints_and_is_cut_with_an_ellipsis() {
    let mut app = listed_app(8, 8);
    app.notify(format!(
        "saved 1f3a: {} end-of-message",
        "calculation ".repeat(20)
    ));
    let screen = render(&app);
    let bottom = screen.lines().last().unwrap();
    for hint in ["j/k move", "enter open", "? help", "q quit"] {
        assert!(bottom.contains(hint), "{hint:?} stays in view: {bottom}");
    }
    assert!(bottom.contains("saved 1f3a: calculation"), "{bottom}");
    assert!(
        bottom.trim_end_matches(['"', ' ']).ends_with('…'),
        "a long message says it was cut: {bottom}"
    );
    assert!(!bottom.contains("end-of-message"));
    app.notify("short note");
    let bottom = render(&app).lines().last().unwrap().to_string();
    assert!(
        bottom.contains("short note") && bottom.contains("q quit"),
        "{bottom}"
    );
    act(&mut app, &[Action::TabRuns]);
    let bottom = render(&app).lines().last().unwrap().to_string();
    assert!(
        !bottom.contains("short note"),
        "a tab switch clears the message: {bottom}"
    );
}

/// An app listing `tasks` (one row each, run `grpo-0002/eval` at step 41), `width` wide.
fn listing(tasks: &[&str], width: u16) -> App {
    listing_runs(tasks, &["grpo-0002/eval"], width)
}

/// An app listing `tasks`, row `i` of run `runs[i % runs.len()]` at step 41 (an empty run:
/// a file imported alone, from SWE-agent, with no step), `width` wide.
fn listing_runs(tasks: &[&str], runs: &[&str], width: u16) -> App {
    let mut app = app(width, 30);
    let tag = list_tag(&app.start());
    let rows: Vec<rollscope::store::Summary> = tasks
        .iter()
        .enumerate()
        .map(|(index, task)| {
            let mut summary = rollscope::store::Summary::of(&trajectory(index as u64), 0);
            summary.task_id = (*task).to_string();
            summary.run = runs[index % runs.len()].into();
            summary.step = (!summary.run.is_empty()).then_some(41);
            summary.source_format = "swe-agent".into();
            summary
        })
        .collect();
    app.update(rollscope::tui::Msg::Engine(
        rollscope::engine::Update::Window(rollscope::engine::Window {
            tag,
            start: 0,
            rows,
            matching: Some(tasks.len()),
            stored: Some(tasks.len()),
        }),
    ));
    app
}

#[test]
fn list_columns_fit_their_values_and_cut_with_an_ellipsis() {
    let tasks = ["arith-1-00015", "arith-1-00016", "gsm8k-word-problem-00093"];
    let wide = render(&listing(&tasks, 140));
    for shown in ["arith-1-00015", "gsm8k-word-problem-00093", "0002/eval·41"] {
        assert!(
            wide.contains(shown),
            "{shown} in full at 140 columns\n{wide}"
        );
    }
    let narrow = render(&listing(&tasks, 80));
    assert!(narrow.contains("arith-1-00…"), "{narrow}");
    assert!(
        !narrow.contains("arith-1-0001 "),
        "never cut without a mark\n{narrow}"
    );
    assert!(narrow.contains("0002/…·41"), "the step survives\n{narrow}");
    assert!(narrow.contains("answered"), "{narrow}");
}

#[test]
fn the_run_column_names_imports_by_folder_and_lone_files_by_their_format() {
    let tasks = ["t-1", "t-2", "t-3", "t-4"];
    let runs = ["grpo-0007", "verl_grpo_gsm8k", "trl-2", ""];
    let screen = render(&listing_runs(&tasks, &runs, 140));
    for shown in ["0007·41", "verl_grpo_gsm8k·41", "trl-2·41", "swe-agent"] {
        assert!(screen.contains(shown), "{shown}\n{screen}");
    }
    assert!(!screen.contains("grpo-0007"), "{screen}");
}

#[test]
fn the_outcome_breakdown_adds_up_on_screen() {
    let mut trajectory = long_lines();
    let mut reward = Reward::scalar(0.75);
    reward.components.insert("correct".into(), 1.0);
    reward.components.insert("format_strict".into(), -0.05);
    reward.components.insert("length".into(), -0.2);
    trajectory.reward = Some(reward);
    let screen = render(&opened(trajectory, 120, 40));
    assert!(screen.contains("parts of the total"), "{screen}");
    for row in [
        "correct        +1.00",
        "format_strict  -0.05",
        "length         -0.20",
        "= fail          0.75",
    ] {
        assert!(screen.contains(row), "{row:?} aligned\n{screen}");
    }
    let mut raw = long_lines();
    let mut reward = Reward::scalar(0.0);
    reward.components.insert("correct".into(), 0.0);
    reward.components.insert("format".into(), 1.0);
    raw.reward = Some(reward);
    let screen = render(&opened(raw, 120, 40));
    assert!(
        screen.contains("scores (not parts)"),
        "scores that do not sum to the total are not shown as its parts\n{screen}"
    );
    let mut scored = long_lines();
    let mut task = rollscope::trajectory::Task::new("t", "test", "question");
    task.ground_truth = Some("2".into());
    let config = rollscope::agent::reward::RewardConfig::default();
    scored.reward = Some(rollscope::agent::reward::outcome_reward(
        &task, &scored, &config,
    ));
    let mut app = opened(scored, 120, 40);
    let screen = render(&app);
    assert!(
        screen.contains("parts of the total") && screen.contains("correct    +1.00"),
        "a narrow pane keeps its parts readable\n{screen}"
    );
    act(&mut app, &[Action::Right, Action::Right, Action::Right]);
    let screen = render(&app);
    for row in [
        "correct        1.00  (weight 1)",
        "format         0.10  (weight 0.1)",
    ] {
        assert!(
            screen.contains(row),
            "{row:?}: the weight beside its part\n{screen}"
        );
    }
}

#[test]
fn the_group_diff_scrolls_sideways_with_h_and_l() {
    use rollscope::engine::{GroupKey, LoadedGroup, Tag};
    use rollscope::tui::state::group::GroupState;
    let key = GroupKey::Grpo {
        run: "grpo-0001".into(),
        step: 1,
        group: 0,
    };
    let member = |index: u64, answer: &str| {
        let mut member = trajectory(index);
        member.messages.push(Message::assistant(format!(
            "{} Final Answer: {answer}",
            "long line ".repeat(20)
        )));
        member
    };
    let mut state = GroupState::default();
    state.start_loading(key.clone(), Tag(7));
    assert!(state.receive(
        Tag(7),
        LoadedGroup {
            key,
            members: vec![member(0, "41"), member(1, "42")],
            task: None,
        },
        None,
    ));
    assert!(state.diff.len() > 2, "the samples differ");
    state.on_action(Action::Right, 10);
    assert_eq!(state.scroll, 0, "l no longer scrolls down");
    assert_eq!(state.across, 8, "l scrolls the diff right");
    state.on_action(Action::ScrollRight, 10);
    state.on_action(Action::Left, 10);
    assert_eq!(state.across, 8);
    state.on_action(Action::PageDown, 1);
    assert_eq!(state.scroll, 1, "page keys still scroll down");
}

#[test]
fn reasoning_is_folded_to_a_line_and_z_shows_it_whole() {
    let mut thinking = Message::assistant(
        "<think>First I add seven and five, then check the carry.</think>\nThe sum is 12.",
    );
    thinking.reasoning = Some("kept apart by the server: twelve".into());
    let mut trajectory = Trajectory::new(
        TrajectoryId(0x78),
        vec![Message::system("sys"), Message::user("7 + 5?"), thinking],
    );
    trajectory.reward = Some(Reward::scalar(1.0));
    let mut app = opened(trajectory, 120, 30);
    let screen = render(&app);
    assert!(screen.contains("The sum is 12."), "{screen}");
    assert!(
        !screen.contains("<think>") && !screen.contains("carry"),
        "{screen}"
    );
    assert!(!screen.contains("kept apart"), "{screen}");
    assert_eq!(
        screen.matches("▸ reasoning").count(),
        1,
        "the kept reasoning and the <think> block are one block\n{screen}"
    );
    assert!(screen.contains("16 words folded"), "{screen}");
    assert!(screen.contains("z unfold"), "{screen}");
    act(&mut app, &[Action::Fold]);
    let screen = render(&app);
    assert!(screen.contains("then check the carry."), "{screen}");
    assert!(
        screen.contains("kept apart by the server: twelve"),
        "{screen}"
    );
    assert_eq!(screen.matches("▾ reasoning").count(), 1, "{screen}");
    assert!(screen.contains("The sum is 12."), "{screen}");
    act(&mut app, &[Action::Fold]);
    assert!(!render(&app).contains("carry"));
}

#[test]
fn at_80_columns_every_tab_is_named() {
    for (width, named) in [(80u16, 4usize), (120, 4), (50, 1)] {
        let app = listed_app(10, 10);
        let mut app = app;
        app.update(rollscope::tui::Msg::Resize(width, 24));
        let top = render(&app).lines().next().unwrap().to_string();
        let shown = ["Rollouts", "Runs", "Stats", "Curate"]
            .iter()
            .filter(|tab| top.contains(*tab))
            .count();
        assert_eq!(shown, named, "{width} columns: {top}");
    }
}

struct Spelled(Vec<&'static str>);

impl rollscope::tui::token_text::TokenText for Spelled {
    fn text(&self, id: u32) -> String {
        self.0[id as usize].to_string()
    }
}

#[test]
fn reasoning_tokens_are_those_of_think_blocks_even_when_a_tag_is_split() {
    use rollscope::tui::token_text::reasoning_tokens;
    let whole = Spelled(vec![
        "<think>",
        "add",
        "↵",
        "</think>",
        "Answer",
        "<|im_end|>",
    ]);
    assert_eq!(
        reasoning_tokens(&[0, 1, 2, 3, 4, 5], &whole),
        vec![true, true, true, true, false, false]
    );
    let split = Spelled(vec!["Hi", "<th", "ink>", "x", "</th", "ink>", "y"]);
    assert_eq!(
        reasoning_tokens(&[0, 1, 2, 3, 4, 5, 6], &split),
        vec![false, true, true, true, true, true, false]
    );
    let none = Spelled(vec!["7", "+", "5"]);
    assert_eq!(reasoning_tokens(&[0, 1, 2], &none), vec![false; 3]);
}
