//! What the trajectory screen is built from: reasoning, tool calls highlighted by language,
//! observations with their error state.

use crate::common::*;
use rollscope::engine::{LoadedTrajectory, Update, Window};
use rollscope::store::Summary;
use rollscope::trajectory::{Message, Reward, ToolCall, Trajectory, TrajectoryId};
use rollscope::tui::content::{Section, sections};
use rollscope::tui::highlight::Highlighter;
use rollscope::tui::rich::{TextLine, Tone, plain};
use rollscope::tui::{Action, Msg};

/// A trajectory that uses a Python tool, a shell tool and a tool with broken arguments.
pub fn tool_user() -> Trajectory {
    let mut think = Message::assistant("I will compute it in Python.");
    think.reasoning = Some("17 + 25 is easy, but let me check.".into());
    think.tool_calls.push(ToolCall::new("python", r#"{"code": "import math\ndef total(a, b):\n    return a + b  # sum\nprint(total(17, 25))"}"#));
    let mut shell = Message::assistant("Now the shell.");
    shell.tool_calls.push(ToolCall::new(
        "bash",
        r#"{"command": "echo $((17 + 25)) | grep -c 42"}"#,
    ));
    let mut broken = Message::assistant("And a broken call.");
    broken
        .tool_calls
        .push(ToolCall::new("calculator", "17 + 25 (not json"));
    let mut failed = Message::tool("Traceback: ZeroDivisionError");
    failed.is_error = true;
    failed.name = Some("calculator".into());
    let mut trajectory = Trajectory::new(
        TrajectoryId(0x42),
        vec![
            Message::system("You are careful."),
            Message::user("Tom has 17 apples and buys 25 more."),
            think,
            Message::tool("42"),
            shell,
            Message::tool("1"),
            broken,
            failed,
            Message::assistant("Final Answer: 42"),
        ],
    );
    trajectory.task_id = Some("arith-tools".into());
    trajectory.reward = Some(Reward::scalar(1.0));
    trajectory
}

fn tones(lines: &[TextLine], text: &str) -> Vec<Tone> {
    lines
        .iter()
        .flat_map(|line| line.pieces.iter())
        .filter(|piece| piece.text.contains(text))
        .map(|piece| piece.tone)
        .collect()
}

#[test]
fn sections_hold_reasoning_code_and_observations() {
    let loaded = LoadedTrajectory {
        trajectory: tool_user(),
        task: None,
        spellings: None,
        parent: None,
        tree: Vec::new(),
    };
    let built = sections(&loaded, &Highlighter::default(), false);
    let kinds: Vec<Section> = built.iter().map(|section| section.section).collect();
    assert_eq!(
        kinds,
        [
            Section::Prompt,
            Section::Step(0),
            Section::Step(1),
            Section::Step(2),
            Section::Step(3),
            Section::Outcome
        ]
    );
    let python = &built[1].lines;
    assert!(
        tones(python, "17 + 25 is easy").contains(&Tone::Muted),
        "reasoning is shown muted"
    );
    assert!(tones(python, "import").contains(&Tone::CodeKeyword));
    assert!(tones(python, "def").contains(&Tone::CodeKeyword));
    assert!(tones(python, "# sum").contains(&Tone::CodeComment));
    assert!(
        python
            .iter()
            .any(|line| plain(&line.pieces).contains("─ observation · tool · not trained"))
    );
    let shell = &built[2].lines;
    assert!(
        tones(shell, "echo").iter().any(|tone| *tone != Tone::Text),
        "shell code is highlighted"
    );
    let broken = &built[3].lines;
    assert!(
        broken
            .iter()
            .any(|line| plain(&line.pieces) == "arguments are not JSON:")
    );
    assert!(
        tones(broken, "ZeroDivisionError").contains(&Tone::Fail),
        "a failed observation shows as an error"
    );
    assert!(
        broken
            .iter()
            .any(|line| plain(&line.pieces).ends_with(" · error"))
    );
}

#[test]
fn json_arguments_are_pretty_printed_with_keys_highlighted() {
    let call = ToolCall::new("calculator", r#"{"expression":"17+25","precise":true}"#);
    let lines = rollscope::tui::render::tool_call::tool_call_lines(&call, &Highlighter::default());
    let text: Vec<String> = lines.iter().map(|line| plain(&line.pieces)).collect();
    assert_eq!(
        text,
        [
            "→ calculator",
            "{",
            "  \"expression\": \"17+25\",",
            "  \"precise\": true",
            "}"
        ]
    );
    assert!(tones(&lines, "expression").contains(&Tone::CodeKey));
    assert!(tones(&lines, "17+25").contains(&Tone::CodeString));
    assert!(tones(&lines, "true").contains(&Tone::CodeNumber));
}

/// The app with `trajectory` as the only row, opened.
pub fn opened(trajectory: Trajectory, width: u16, height: u16) -> rollscope::tui::App {
    let mut app = app(width, height);
    let tag = list_tag(&app.start());
    let commands = app.update(Msg::Engine(Update::Window(Window {
        tag,
        start: 0,
        rows: vec![Summary::of(&trajectory, 0)],
        matching: Some(1),
        stored: Some(1),
    })));
    let rollscope::engine::Command::LoadTrajectory { tag, .. } = commands[0] else {
        panic!("preview")
    };
    let loaded = LoadedTrajectory {
        trajectory,
        task: None,
        spellings: None,
        parent: None,
        tree: Vec::new(),
    };
    app.update(Msg::Engine(Update::Trajectory {
        tag,
        loaded: Box::new(loaded),
    }));
    act(&mut app, &[Action::Open]);
    app
}
