//! The outline of an open trajectory: its sections and, for each turn, what it ran in a few
//! words, before any section's lines are built (cheap at any length).

use super::render::tool_call::editor_command;
use super::rich::TextLine;
use crate::trajectory::{StepLocation, ToolCall, Trajectory};
use serde_json::Value;

/// What a section of the trajectory screen holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// System prompt, task and ground truth (collapsed to one entry).
    Prompt,
    /// A step (an assistant turn, or a span of a single-message solution), 0-based.
    Step(usize),
    /// The outcome reward, its components, the answer.
    Outcome,
}

/// One section's title and lines.
#[derive(Clone, Debug, PartialEq)]
pub struct SectionContent {
    /// Which section.
    pub section: Section,
    /// Its lines.
    pub lines: Vec<TextLine>,
    /// What the turn ran, in a few words (`bash: pytest -x`), when it called a tool.
    pub brief: Option<String>,
    /// Whether `lines` are built (an outline's sections are built when first shown).
    pub built: bool,
}

/// The sections of a trajectory with their briefs, their lines not yet built (cheap at any
/// length: nothing is highlighted or wrapped); `steps` are the trajectory's.
pub fn outline(trajectory: &Trajectory, steps: &[StepLocation]) -> Vec<SectionContent> {
    let unbuilt = |section, brief| SectionContent {
        section,
        lines: Vec::new(),
        brief,
        built: false,
    };
    let mut sections = vec![unbuilt(Section::Prompt, None)];
    for (index, location) in steps.iter().enumerate() {
        let message = &trajectory.messages[location.message];
        let last_of_message = steps
            .get(index + 1)
            .is_none_or(|next| next.message != location.message);
        let brief = match message.tool_calls.first() {
            Some(call) if last_of_message => Some(tool_brief(call)),
            _ => fenced_brief(message.span_text(location.span)),
        };
        sections.push(unbuilt(Section::Step(index), brief));
    }
    sections.push(unbuilt(Section::Outcome, None));
    sections
}

/// A tool call in a few words: its name and the first line of its main argument (the
/// command, code, path or query; else the first text argument; else the raw arguments).
pub fn tool_brief(call: &ToolCall) -> String {
    const MAIN: [&str; 8] = [
        "command",
        "cmd",
        "code",
        "script",
        "path",
        "file_path",
        "query",
        "url",
    ];
    let arguments = call.parsed_arguments();
    let object = arguments.as_ref().and_then(Value::as_object);
    // A file editor's call: its command and file (`str_replace /workspace/app.py`).
    if let Some((command, path)) = object.and_then(editor_command) {
        return format!("{}: {command} {path}", call.name);
    }
    let main = object.and_then(|object| {
        MAIN.iter()
            .find_map(|key| object.get(*key).and_then(Value::as_str))
            .or_else(|| object.values().find_map(Value::as_str))
    });
    if object.is_some_and(serde_json::Map::is_empty) {
        return call.name.clone();
    }
    let argument = main.unwrap_or(&call.arguments);
    let first = argument
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty());
    match first {
        Some(line) => format!("{}: {}", call.name, crate::text::clip(line, 60)),
        None => call.name.clone(),
    }
}

/// The first line of the last fenced code block of a turn's text: the action of agents that
/// write their commands in the text (SWE-agent, mini-swe-agent).
fn fenced_brief(text: &str) -> Option<String> {
    let (before, _) = text.rsplit_once("```")?;
    let (_, block) = before.rsplit_once("```")?;
    let mut lines = block.lines();
    let opening = lines.next().unwrap_or("").trim();
    let first = match opening.contains(' ') || lines.clone().next().is_none() {
        true => Some(opening),
        false => lines.map(str::trim).find(|line| !line.is_empty()),
    };
    first
        .filter(|line| !line.is_empty())
        .map(|line| crate::text::clip(line, 60).into_owned())
}
