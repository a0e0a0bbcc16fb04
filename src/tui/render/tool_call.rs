//! A tool call drawn by its tool and arguments: file edits (`str_replace`, `create`,
//! `insert` of OpenHands' and Anthropic's editors) as a diff or the new file highlighted by
//! its extension, shell and Python code highlighted, arguments with multi-line text as a
//! block per argument, everything else as pretty-printed JSON.

use super::diff::{diff_lines, edit_lines, is_diff};
use crate::trajectory::ToolCall;
use crate::tui::highlight::{Highlighter, Language};
use crate::tui::rich::{RichLine, TextLine, Tone, code, paragraph, piece, prose};
use serde_json::{Map, Value};

/// A tool call: its name (and, for an edit, the command and file), then its arguments.
pub fn tool_call_lines(call: &ToolCall, highlighter: &Highlighter) -> Vec<TextLine> {
    let mut head = vec![piece(Tone::Accent, "→ "), piece(Tone::CodeKey, &call.name)];
    let Some(arguments) = call.parsed_arguments() else {
        let mut lines = prose(vec![head]);
        lines.extend(prose(vec![vec![piece(
            Tone::Warn,
            "arguments are not JSON:",
        )]]));
        lines.extend(prose(paragraph(Tone::Text, &call.arguments)));
        return lines;
    };
    if let Some(edit) = arguments.as_object().and_then(FileEdit::of) {
        head.push(piece(Tone::CodeKeyword, &format!(" {}", edit.command)));
        head.push(piece(Tone::Text, &format!(" {}", edit.path)));
        let mut lines = prose(vec![head]);
        lines.extend(edit.lines(highlighter));
        return lines;
    }
    let mut lines = prose(vec![head]);
    if let Some((language, source)) = embedded_code(&call.name, &arguments) {
        lines.extend(code(highlighter.highlight(language, source)));
        return lines;
    }
    match arguments.as_object() {
        Some(object) if object.values().any(multi_line) => {
            lines.extend(argument_blocks(&call.name, object, highlighter));
        }
        _ => {
            let pretty =
                serde_json::to_string_pretty(&arguments).unwrap_or_else(|_| call.arguments.clone());
            lines.extend(code(highlighter.highlight(Language::Json, &pretty)));
        }
    }
    lines
}

/// A file editor's command and file (`str_replace`, `/workspace/app.py`), where the
/// arguments are an editor's call.
pub fn editor_command(arguments: &Map<String, Value>) -> Option<(&str, &str)> {
    FileEdit::of(arguments).map(|edit| (edit.command, edit.path))
}

/// Whether a tool runs the commands its argument names: a shell or a file editor (its
/// argument says more than its name).
pub fn runs_commands(tool: &str) -> bool {
    let lower = tool.to_ascii_lowercase();
    code_language(tool, "") == Some(Language::Bash)
        || lower.contains("editor")
        || lower.contains("str_replace")
}

/// The extension of the file a call shows, whose output is that file: an editor's `view` of
/// a path, or a shell command that prints one (`cat`, `head`, `tail`, `nl`, `sed -n`, the
/// last of a `&&` chain).
pub fn shown_file_language(call: &ToolCall) -> Option<&'static str> {
    let arguments = call.parsed_arguments()?;
    let object = arguments.as_object()?;
    let path = match FileEdit::of(object) {
        Some(edit) if edit.command == "view" => edit.path.to_string(),
        Some(_) => return None,
        None => {
            let (_, command) = embedded_code(&call.name, &arguments)?;
            let last = command.rsplit("&&").next()?.trim();
            let words = shlex::split(last)?;
            let printer = ["cat", "head", "tail", "nl", "sed", "bat"];
            if !printer.contains(&words.first()?.as_str()) {
                return None;
            }
            words.last()?.clone()
        }
    };
    extension_language(&path)
}

/// The language token of a path's extension, among those the transcripts meet.
fn extension_language(path: &str) -> Option<&'static str> {
    let extension = path.rsplit_once('.')?.1.to_ascii_lowercase();
    let known = [
        "py", "rs", "js", "ts", "go", "java", "c", "h", "cpp", "hpp", "rb", "sh", "json", "toml",
        "yaml", "yml", "md", "html", "css", "sql", "xml",
    ];
    known.iter().copied().find(|known| *known == extension)
}

fn multi_line(value: &Value) -> bool {
    value.as_str().is_some_and(|text| text.contains('\n'))
}

/// A file editor's call: `{command, path, old_str, new_str, file_text, insert_line, …}`.
struct FileEdit<'a> {
    command: &'a str,
    path: &'a str,
    arguments: &'a Map<String, Value>,
}

impl<'a> FileEdit<'a> {
    /// The edit a call's arguments describe, if they name an editor command and a path.
    fn of(arguments: &'a Map<String, Value>) -> Option<Self> {
        let command = arguments.get("command")?.as_str()?;
        let path = arguments.get("path")?.as_str()?;
        [
            "str_replace",
            "create",
            "insert",
            "view",
            "undo_edit",
            "write",
        ]
        .contains(&command)
        .then_some(Self {
            command,
            path,
            arguments,
        })
    }

    fn text(&self, key: &str) -> Option<&'a str> {
        self.arguments.get(key).and_then(Value::as_str)
    }

    /// The edit's lines: a replacement as a diff, a new file highlighted by its extension,
    /// an insertion as added lines after the line it names, a view's line range.
    fn lines(&self, highlighter: &Highlighter) -> Vec<TextLine> {
        match self.command {
            "str_replace" => edit_lines(
                self.text("old_str").unwrap_or(""),
                self.text("new_str").unwrap_or(""),
            ),
            "create" | "write" => {
                let text = self
                    .text("file_text")
                    .or_else(|| self.text("content"))
                    .unwrap_or("");
                let extension = self.path.rsplit_once('.').map_or("", |(_, ext)| ext);
                code(highlighter.highlight_named(extension, text))
            }
            "insert" => {
                let after = self
                    .arguments
                    .get("insert_line")
                    .map_or("?".to_string(), Value::to_string);
                let mut lines = prose(vec![vec![piece(
                    Tone::Muted,
                    &format!("after line {after}"),
                )]]);
                lines.extend(edit_lines("", self.text("new_str").unwrap_or("")));
                lines
            }
            _ => match self.arguments.get("view_range") {
                Some(range) => prose(vec![vec![piece(Tone::Muted, &format!("lines {range}"))]]),
                None => Vec::new(),
            },
        }
    }
}

/// Arguments as one block each: a short value on its key's line, multi-line text under it
/// (a diff coloured, code highlighted as the tool's language, other text as written), nested
/// values as pretty JSON.
fn argument_blocks(
    tool: &str,
    arguments: &Map<String, Value>,
    highlighter: &Highlighter,
) -> Vec<TextLine> {
    let mut lines = Vec::new();
    for (key, value) in arguments {
        let label = piece(Tone::CodeKey, &format!("{key}: "));
        match value {
            Value::String(text) if text.contains('\n') => {
                lines.extend(prose(vec![vec![label]]));
                if is_diff(text) {
                    lines.extend(diff_lines(text));
                } else {
                    let body: Vec<RichLine> = match code_language(tool, key) {
                        Some(language) => highlighter.highlight(language, text),
                        None => paragraph(Tone::Text, text),
                    };
                    lines.extend(code(body));
                }
            }
            Value::String(text) => {
                lines.extend(prose(vec![vec![label, piece(Tone::CodeString, text)]]))
            }
            Value::Object(_) | Value::Array(_) => {
                lines.extend(prose(vec![vec![label]]));
                let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
                lines.extend(code(highlighter.highlight(Language::Json, &pretty)));
            }
            scalar => lines.extend(prose(vec![vec![
                label,
                piece(Tone::CodeNumber, &scalar.to_string()),
            ]])),
        }
    }
    lines
}

/// Code a tool call carries as its only argument: Python for python tools, shell for shells.
fn embedded_code<'a>(tool: &str, arguments: &'a Value) -> Option<(Language, &'a str)> {
    let object = arguments.as_object()?;
    if object.len() != 1 {
        return None;
    }
    let (key, value) = object.iter().next()?;
    Some((code_language(tool, key)?, value.as_str()?))
}

/// The language of a tool's argument that holds code: Python for python tools and `code`,
/// shell for shells and `command`, `cmd`, `script`.
fn code_language(tool: &str, key: &str) -> Option<Language> {
    let tool = tool.to_ascii_lowercase();
    let words: Vec<&str> = tool.split(|c: char| !c.is_ascii_alphanumeric()).collect();
    let named = |names: &[&str]| words.iter().any(|word| names.contains(word));
    if named(&["python", "ipython", "python3", "jupyter"]) || key == "code" {
        Some(Language::Python)
    } else if named(&["bash", "shell", "sh", "terminal", "exec", "cmd"])
        || ["command", "cmd", "script"].contains(&key)
    {
        Some(Language::Bash)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::rich::plain;

    fn call(name: &str, arguments: Value) -> ToolCall {
        ToolCall {
            id: None,
            name: name.into(),
            arguments: arguments.to_string(),
            encoding: Default::default(),
        }
    }

    fn shown(lines: &[TextLine]) -> Vec<String> {
        lines.iter().map(|line| plain(&line.pieces)).collect()
    }

    #[test]
    fn a_str_replace_edit_is_a_diff_under_its_file() {
        let highlighter = Highlighter::default();
        let edit = call(
            "str_replace_editor",
            serde_json::json!({
                "command": "str_replace",
                "path": "/workspace/app.py",
                "old_str": "x = 1\ny = 2",
                "new_str": "x = 1\ny = 3",
            }),
        );
        let lines = tool_call_lines(&edit, &highlighter);
        assert_eq!(
            shown(&lines),
            [
                "→ str_replace_editor str_replace /workspace/app.py",
                "  x = 1",
                "- y = 2",
                "+ y = 3"
            ]
        );
        assert_eq!(lines[2].pieces[0].tone, Tone::DiffRemove);
        assert_eq!(lines[3].pieces[0].tone, Tone::DiffAdd);
    }

    #[test]
    fn multi_line_arguments_keep_their_lines() {
        let highlighter = Highlighter::default();
        let lines = tool_call_lines(
            &call(
                "submit_report",
                serde_json::json!({"title": "fix", "body": "line one\nline two", "tries": 2}),
            ),
            &highlighter,
        );
        assert_eq!(
            shown(&lines),
            [
                "→ submit_report",
                "title: fix",
                "body: ",
                "line one",
                "line two",
                "tries: 2"
            ]
        );
    }

    #[test]
    fn calls_that_show_a_file_name_its_language() {
        let language = |name: &str, arguments: Value| shown_file_language(&call(name, arguments));
        assert_eq!(
            language(
                "str_replace_editor",
                serde_json::json!({"command": "view", "path": "/w/app.py"})
            ),
            Some("py")
        );
        assert_eq!(
            language(
                "bash",
                serde_json::json!({"command": "cd /testbed && cat src/lib.rs"})
            ),
            Some("rs")
        );
        assert_eq!(
            language(
                "bash",
                serde_json::json!({"command": "sed -n '1,40p' setup.cfg"})
            ),
            None
        );
        assert_eq!(
            language(
                "bash",
                serde_json::json!({"command": "pytest -x tests/a.py"})
            ),
            None
        );
        assert_eq!(
            language(
                "str_replace_editor",
                serde_json::json!({"command": "create", "path": "a.py", "file_text": ""})
            ),
            None
        );
    }

    #[test]
    fn single_line_arguments_stay_json() {
        let highlighter = Highlighter::default();
        let lines = tool_call_lines(
            &call("calculate", serde_json::json!({"expression": "152 + 103"})),
            &highlighter,
        );
        assert_eq!(
            shown(&lines),
            ["→ calculate", "{", "  \"expression\": \"152 + 103\"", "}"]
        );
    }
}
