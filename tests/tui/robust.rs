//! Every view at tiny sizes, hostile content (500 turns, a 1 MB observation, invalid UTF-8,
//! ANSI escapes), and an empty store: all draw, nothing escapes to the terminal.

use crate::common::*;
use rollscope::engine::{LoadedTrajectory, Overview, Update};
use rollscope::trajectory::{
    Message, Reward, ScoreSource, StepScore, ToolCall, Trajectory, TrajectoryId,
};
use rollscope::tui::{Action, App, Msg};

/// Puts the app on each view in turn and draws it; `check` sees every screen.
fn every_view(app: &mut App, check: &mut dyn FnMut(&App, &str, &str)) {
    let views: [(&str, &[Action]); 9] = [
        ("list", &[]),
        ("trajectory", &[Action::Open]),
        (
            "outcome",
            &[
                Action::Bottom,
                Action::Right,
                Action::Right,
                Action::Right,
                Action::Right,
                Action::Right,
            ],
        ),
        (
            "prompt",
            &[
                Action::Left,
                Action::Left,
                Action::Left,
                Action::Left,
                Action::Left,
                Action::Left,
            ],
        ),
        ("tokens", &[Action::Right, Action::Tokens, Action::Bottom]),
        ("runs", &[Action::Back, Action::Back, Action::TabRuns]),
        ("stats", &[Action::TabStats]),
        ("curate", &[Action::TabCurate]),
        ("help", &[Action::TabRollouts, Action::Help]),
    ];
    for (name, actions) in views {
        let commands = act(app, actions);
        answer_preview(app, &commands);
        if name == "stats" {
            app.update(Msg::Engine(Update::Overview(Box::new(Overview::of(
                &summaries(64),
            )))));
        }
        let screen = render(app);
        check(app, name, &screen);
    }
    app.help = None;
}

#[test]
fn every_view_draws_at_every_small_size() {
    for width in [1u16, 2, 5, 10, 20, 33] {
        for height in [1u16, 2, 3, 4, 6, 9, 13] {
            let mut app = listed_app(64, 64);
            app.update(Msg::Resize(width, height));
            every_view(&mut app, &mut |app, _, screen| {
                assert_eq!(screen.lines().count(), usize::from(app.viewport.height));
            });
        }
    }
}

#[test]
fn the_group_screen_draws_small_too() {
    for (width, height) in [(20u16, 6u16), (7, 3), (1, 1)] {
        let mut app = listed_app(64, 64);
        let commands = act(&mut app, &[Action::Group]);
        let Some(rollscope::engine::Command::LoadGroup { tag, key }) = commands.last() else {
            panic!("expected LoadGroup")
        };
        let members = (0..8).map(trajectory).collect();
        let group = rollscope::engine::LoadedGroup {
            key: key.clone(),
            members,
            task: None,
        };
        app.update(Msg::Engine(Update::Group {
            tag: *tag,
            group: Box::new(group),
        }));
        app.update(Msg::Resize(width, height));
        render(&app);
    }
}

fn hostile() -> Trajectory {
    let mut messages = vec![
        Message::system("sys"),
        Message::user("a hostile trajectory"),
    ];
    let escape = "\u{1b}[2J\u{1b}]0;pwned\u{7}\u{1b}[31mred\u{9b}31m";
    let invalid = String::from_utf8_lossy(&[0x66, 0x6f, 0xff, 0xfe, 0x6f, 0xc3, 0x28]).into_owned();
    for turn in 0..500 {
        let mut action = Message::assistant(format!("turn {turn} {escape}"));
        action.tool_calls.push(ToolCall::new(
            "python",
            format!(r#"{{"code": "print({turn}) # {}"}}"#, "\\u001b[1m"),
        ));
        messages.push(action);
        let content = match turn {
            0 => "x".repeat(1 << 20),
            1 => invalid.clone(),
            2 => format!("{escape}\r\nline\u{0}two\u{7f}"),
            _ => format!("{turn}"),
        };
        let mut observation = Message::tool(content);
        observation.is_error = turn == 1;
        messages.push(observation);
    }
    let mut trajectory = Trajectory::new(TrajectoryId(0xbad), messages);
    trajectory.task_id = Some(format!("task{escape}"));
    trajectory.reward = Some(Reward::scalar(0.0));
    trajectory.step_scores = (0..500)
        .map(|step| StepScore {
            step,
            value: f64::from(step % 7) / 6.0,
            source: ScoreSource::Rule,
            note: Some(escape.into()),
        })
        .collect();
    trajectory.token_trace = Some(rollscope::trajectory::TokenTrace {
        token_ids: (0..100_000).collect(),
        loss_mask: (0..100_000).map(|index| u8::from(index % 3 != 0)).collect(),
        logprobs: (0..100_000)
            .map(|index| -(index % 50) as f32 / 10.0)
            .collect(),
        entropies: Vec::new(),
    });
    trajectory
}

#[test]
fn hostile_content_renders_inert_at_any_size() {
    let trajectory = hostile();
    for (width, height) in [(200u16, 50u16), (80, 24), (20, 6), (3, 2)] {
        let mut app = app(width, height);
        let tag = list_tag(&app.start());
        let summary = rollscope::store::Summary::of(&trajectory, 0);
        let commands = app.update(Msg::Engine(Update::Window(rollscope::engine::Window {
            tag,
            start: 0,
            rows: vec![summary],
            matching: Some(1),
            stored: Some(1),
        })));
        let rollscope::engine::Command::LoadTrajectory { tag, .. } = commands[0] else {
            panic!("preview")
        };
        let loaded = LoadedTrajectory {
            trajectory: trajectory.clone(),
            task: None,
            spellings: None,
            parent: None,
            tree: Vec::new(),
        };
        app.update(Msg::Engine(Update::Trajectory {
            tag,
            loaded: Box::new(loaded),
        }));
        let mut screens = vec![render(&app)];
        act(&mut app, &[Action::Open]);
        for _ in 0..3 {
            screens.push(render(&app));
            act(&mut app, &[Action::Right]);
        }
        act(
            &mut app,
            &[Action::PageDown, Action::PageDown, Action::Bottom],
        );
        screens.push(render(&app));
        for _ in 0..600 {
            act(&mut app, &[Action::Right]);
        }
        screens.push(render(&app));
        act(&mut app, &[Action::Left]);
        screens.push(render(&app));
        act(&mut app, &[Action::Tokens, Action::Bottom]);
        screens.push(render(&app));
        for screen in &screens {
            assert!(!screen.contains('\u{1b}'), "an escape reached the screen");
            assert!(!screen.contains('\u{9b}') && !screen.contains('\u{7}'));
        }
        if width == 200 {
            let shown = screens.join("\n");
            assert!(shown.contains('␛'), "escapes are shown as symbols");
            assert!(shown.contains("turn 500 of 500"));
        }
    }
}

#[test]
fn a_megabyte_observation_is_cut_with_a_note() {
    let trajectory = hostile();
    let loaded = LoadedTrajectory {
        trajectory,
        task: None,
        spellings: None,
        parent: None,
        tree: Vec::new(),
    };
    let sections = rollscope::tui::content::sections(&loaded, &Default::default(), false);
    let first_turn = &sections[1].lines;
    let shown: usize = first_turn
        .iter()
        .map(|line| {
            line.pieces
                .iter()
                .map(|piece| piece.text.len())
                .sum::<usize>()
        })
        .sum();
    assert!(shown < 70_000, "{shown} bytes kept of 1 MiB");
    let last = rollscope::tui::rich::plain(&first_turn.last().unwrap().pieces);
    assert!(last.contains("more bytes not shown"), "{last}");
}

#[test]
fn an_empty_store_says_how_to_fill_it() {
    let mut app = app(100, 30);
    let tag = list_tag(&app.start());
    app.update(Msg::Engine(Update::Window(rollscope::engine::Window {
        tag,
        start: 0,
        rows: Vec::new(),
        matching: Some(0),
        stored: Some(0),
    })));
    let screen = render(&app);
    assert!(screen.contains("the store is empty"));
    every_view(&mut app, &mut |_, _, _| {});
}

/// Draws the app and returns the style of the first cell of the first occurrence of `text`.
fn style_of(app: &App, text: &str) -> ratatui::style::Style {
    style_at(app, text, 0)
}

/// The style of the cell `below` rows under the first cell of `text`.
fn style_at(app: &App, text: &str, below: u16) -> ratatui::style::Style {
    let size = app.viewport;
    let mut terminal =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(size.width, size.height))
            .unwrap();
    terminal
        .draw(|frame| rollscope::tui::view::draw(frame, app))
        .unwrap();
    let buffer = terminal.backend().buffer();
    for y in 0..size.height {
        let row: String = (0..size.width)
            .map(|x| buffer[(x, y)].symbol().to_string())
            .collect();
        if let Some(byte) = row.find(text) {
            let x = row[..byte].chars().count() as u16;
            return buffer[(x, y + below)].style();
        }
    }
    panic!("`{text}` is not on screen");
}

#[test]
fn roles_reach_the_screen_in_the_theme_colours() {
    use ratatui::style::Modifier;
    let mut app = listed_app(64, 64);
    let theme = app.theme.clone();
    assert_eq!(
        style_of(&app, "bc07cdd0").bg,
        Some(theme.selection_bg),
        "the cursor row is selected"
    );
    assert_eq!(style_of(&app, "understanding?").fg, Some(theme.suggested));
    assert!(
        style_of(&app, "understanding?")
            .add_modifier
            .contains(Modifier::ITALIC)
    );
    act(&mut app, &[Action::Open, Action::Right]);
    assert_eq!(
        style_of(&app, "─ observation").fg,
        Some(theme.muted),
        "an observation's header says it is not trained"
    );
    assert_eq!(
        style_at(&app, "─ observation", 1).fg,
        Some(theme.text),
        "tool output reads as text, not dim"
    );
    let failed = (0..64)
        .find(|&index| trajectory(index).has_confirmed_error(None))
        .unwrap();
    let mut app = listed_app(64, 64);
    let commands = act(&mut app, &vec![Action::Down; failed as usize]);
    let pruned = app.prune(commands);
    answer_preview(&mut app, &pruned);
    let kind = trajectory(failed).labels[0].kind.to_string();
    let style = style_of(&app, &format!("{kind} "));
    assert_eq!(
        (style.fg, style.bg),
        (Some(theme.selection_fg), Some(theme.selection_bg)),
        "the selected row reads in the selection's colours"
    );
    assert!(style.add_modifier.contains(Modifier::BOLD));
    let commands = act(&mut app, &[Action::Down]);
    let pruned = app.prune(commands);
    answer_preview(&mut app, &pruned);
    let style = style_of(&app, &format!("{kind} "));
    assert_eq!(style.fg, Some(theme.confirmed));
    assert!(
        style.add_modifier.contains(Modifier::BOLD),
        "confirmed labels are bold"
    );
}
