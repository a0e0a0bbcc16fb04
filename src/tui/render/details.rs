//! What an import kept beside the conversation (a trajectory's `extra`), drawn as the outcome's
//! details: tau-bench's expected actions checked against the calls the agent made, then every
//! field by its shape (patches as diffs, text as text, small values inline, large nested ones
//! summarised).

use super::diff::{diff_lines, edit_lines, is_diff};
use crate::trajectory::{StepLocation, Trajectory};
use crate::tui::highlight::{Highlighter, Language};
use crate::tui::rich::{TextLine, Tone, code, paragraph, piece, prose};
use serde_json::{Map, Value};

/// Multi-line text longer than this shows its first lines and a count of the rest.
const MAX_BLOCK_LINES: usize = 40;

/// Nested values longer than this (as pretty JSON) are summarised in one line.
const MAX_NESTED_LINES: usize = 24;

/// Where tau-bench keeps the actions a task expects (`info.task.actions`).
const EXPECTED_ACTIONS: &str = "/info/task/actions";

/// Where tau-bench repeats them in the reward's report.
const REWARD_ACTIONS: &str = "/info/reward_info/actions";

/// The details of a trajectory's import: nothing when it kept none.
/// `steps` are the trajectory's (a call's turn is its step's number).
pub fn details_lines(
    trajectory: &Trajectory,
    steps: &[StepLocation],
    highlighter: &Highlighter,
) -> Vec<TextLine> {
    if trajectory.extra.is_empty() {
        return Vec::new();
    }
    let mut lines = prose(vec![
        Vec::new(),
        vec![piece(Tone::Accent, "details (kept from the import)")],
    ]);
    let expected = trajectory
        .extra
        .get("info")
        .and_then(|info| info.pointer("/task/actions"));
    if let Some(Value::Array(actions)) = expected {
        lines.extend(expected_actions(trajectory, steps, actions, highlighter));
    }
    let walk = Walk {
        skip: &[EXPECTED_ACTIONS, REWARD_ACTIONS],
        answer: trajectory.final_answer.as_deref(),
        highlighter,
    };
    lines.extend(walk.fields(&trajectory.extra, "", 0));
    lines
}

/// Each expected action and whether the agent made it: `✓` with the same arguments (and the
/// turn), `✗` with other arguments (a diff from what it sent to what was expected), `✗` never.
fn expected_actions(
    trajectory: &Trajectory,
    steps: &[StepLocation],
    actions: &[Value],
    highlighter: &Highlighter,
) -> Vec<TextLine> {
    // A message's calls belong to its last step, where the transcript draws them.
    let calls: Vec<(usize, &str, Option<Value>)> = trajectory
        .messages
        .iter()
        .enumerate()
        .filter_map(|(index, message)| {
            let turn = steps.iter().rposition(|step| step.message == index)?;
            Some((turn + 1, message))
        })
        .flat_map(|(turn, message)| {
            message
                .tool_calls
                .iter()
                .map(move |call| (turn, call.name.as_str(), call.parsed_arguments()))
        })
        .collect();
    let mut lines = prose(vec![vec![piece(
        Tone::Accent,
        &format!("expected actions ({})", actions.len()),
    )]]);
    for (index, action) in actions.iter().enumerate() {
        let name = action.get("name").and_then(Value::as_str).unwrap_or("?");
        let expected = action.get("kwargs").or_else(|| action.get("arguments"));
        let made: Vec<&(usize, &str, Option<Value>)> = calls
            .iter()
            .filter(|(_, called, _)| *called == name)
            .collect();
        let same = made
            .iter()
            .find(|(_, _, arguments)| arguments.as_ref() == expected);
        let mut head = vec![piece(Tone::Muted, &format!("{:>2}. ", index + 1))];
        match (same, made.last()) {
            (Some((turn, _, _)), _) => {
                head.push(piece(Tone::Pass, "✓ "));
                head.push(piece(Tone::CodeKey, name));
                head.push(piece(Tone::Muted, &format!(" made in turn {turn}")));
                lines.extend(prose(vec![head]));
            }
            (None, Some((turn, _, sent))) => {
                head.push(piece(Tone::Fail, "✗ "));
                head.push(piece(Tone::CodeKey, name));
                head.push(piece(
                    Tone::Muted,
                    &format!(" made in turn {turn} with other arguments (- sent, + expected)"),
                ));
                lines.extend(prose(vec![head]));
                lines.extend(edit_lines(&pretty(sent.as_ref()), &pretty(expected)));
            }
            (None, None) => {
                head.push(piece(Tone::Fail, "✗ "));
                head.push(piece(Tone::CodeKey, name));
                head.push(piece(Tone::Muted, " never made; expected arguments:"));
                lines.extend(prose(vec![head]));
                lines.extend(code(
                    highlighter.highlight(Language::Json, &pretty(expected)),
                ));
            }
        }
    }
    lines
}

fn pretty(value: Option<&Value>) -> String {
    value.map_or_else(String::new, |value| {
        serde_json::to_string_pretty(value).unwrap_or_default()
    })
}

/// How the fields are drawn: the JSON pointers already drawn, the trajectory's answer (a
/// field holding it says so instead of repeating it), the highlighter.
struct Walk<'a> {
    skip: &'a [&'a str],
    answer: Option<&'a str>,
    highlighter: &'a Highlighter,
}

impl Walk<'_> {
    /// The fields of an object, one block each, indented by depth.
    fn fields(&self, object: &Map<String, Value>, at: &str, depth: usize) -> Vec<TextLine> {
        let indent = "  ".repeat(depth);
        let mut lines = Vec::new();
        for (key, value) in object {
            let pointer = format!("{at}/{key}");
            if self.skip.contains(&pointer.as_str()) {
                continue;
            }
            let label = piece(Tone::CodeKey, &format!("{indent}{key}: "));
            let note = |text: &str| prose(vec![vec![label.clone(), piece(Tone::Muted, text)]]);
            match value {
                Value::String(text) if Some(text.as_str()) == self.answer && text.len() > 80 => {
                    lines.extend(note("the answer, shown above"))
                }
                Value::String(text) if text.contains('\n') => {
                    lines.extend(note(&format!("{} lines", text.lines().count())));
                    lines.extend(indented(block(text), &indent));
                }
                Value::String(text) => {
                    lines.extend(prose(vec![vec![label, piece(Tone::CodeString, text)]]))
                }
                Value::Object(inner) if depth < 2 && !inner.is_empty() => {
                    lines.extend(prose(vec![vec![label]]));
                    lines.extend(self.fields(inner, &pointer, depth + 1));
                }
                Value::Object(_) | Value::Array(_) => {
                    let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
                    let count = pretty.lines().count();
                    if pretty.len() <= 80 {
                        let compact = serde_json::to_string(value).unwrap_or_default();
                        lines.extend(prose(vec![vec![label, piece(Tone::Text, &compact)]]));
                    } else if count <= MAX_NESTED_LINES {
                        lines.extend(prose(vec![vec![label]]));
                        let json = code(self.highlighter.highlight(Language::Json, &pretty));
                        lines.extend(indented(json, &indent));
                    } else {
                        lines.extend(note(&format!(
                            "{count} lines of JSON (rollscope show ID --json prints them)"
                        )));
                    }
                }
                scalar => lines.extend(prose(vec![vec![
                    label,
                    piece(Tone::CodeNumber, &scalar.to_string()),
                ]])),
            }
        }
        lines
    }
}

/// Lines moved right by an indent and two spaces more, under their key.
fn indented(mut lines: Vec<TextLine>, indent: &str) -> Vec<TextLine> {
    for line in &mut lines {
        line.pieces
            .insert(0, piece(Tone::Text, &format!("{indent}  ")));
    }
    lines
}

/// Multi-line text: a diff coloured, anything else as written, its first lines only.
fn block(text: &str) -> Vec<TextLine> {
    let mut lines = if is_diff(text) {
        diff_lines(text)
    } else {
        code(paragraph(Tone::Text, text))
    };
    if lines.len() > MAX_BLOCK_LINES {
        let more = lines.len() - MAX_BLOCK_LINES;
        lines.truncate(MAX_BLOCK_LINES);
        lines.extend(prose(vec![vec![piece(
            Tone::Muted,
            &format!("… {more} more lines (rollscope show ID --json prints them)"),
        )]]));
    }
    lines
}
