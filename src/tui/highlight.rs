//! Syntax highlighting of tool-call arguments with syntect, mapped onto theme tones so code
//! follows the current theme (and stays readable in 16 colours).

use super::rich::{RichLine, Tone, paragraph, piece};
use syntect::easy::ScopeRangeIterator;
use syntect::parsing::{ParseState, ScopeStack, SyntaxSet};
use syntect::util::LinesWithEndings;

/// Code longer than this is shown plain: highlighting it would stall the screen.
const MAX_HIGHLIGHTED_BYTES: usize = 32 * 1024;

/// A line longer than this turns highlighting off for its text.
const MAX_HIGHLIGHTED_LINE: usize = 2000;

/// The languages tool arguments come in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    /// JSON arguments (most tools).
    Json,
    /// Code for a Python tool.
    Python,
    /// A command for a shell tool.
    Bash,
}

impl Language {
    fn token(self) -> &'static str {
        match self {
            Self::Json => "json",
            Self::Python => "py",
            Self::Bash => "sh",
        }
    }
}

/// Holds syntect's syntax definitions (loaded once, when the first trajectory opens).
pub struct Highlighter {
    syntaxes: SyntaxSet,
}

impl Default for Highlighter {
    fn default() -> Self {
        Self {
            syntaxes: SyntaxSet::load_defaults_newlines(),
        }
    }
}

impl std::fmt::Debug for Highlighter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Highlighter")
    }
}

impl Highlighter {
    /// Code as toned lines; plain when too long or when the parser fails.
    pub fn highlight(&self, language: Language, code: &str) -> Vec<RichLine> {
        self.highlight_named(language.token(), code)
    }

    /// Whether a language name or file extension (`rust`, `py`, `toml`) is one syntect knows.
    pub fn knows(&self, name: &str) -> bool {
        !name.is_empty() && self.syntaxes.find_syntax_by_token(name).is_some()
    }

    /// Code in the language a name or file extension names (a fence's `rust`, a path's
    /// `py`), as toned lines; plain when the name is unknown, the code too long or the parser
    /// fails.
    pub fn highlight_named(&self, name: &str, code: &str) -> Vec<RichLine> {
        let too_big = code.len() > MAX_HIGHLIGHTED_BYTES
            || code.lines().any(|line| line.len() > MAX_HIGHLIGHTED_LINE);
        let syntax = match name {
            "" => None,
            name => self.syntaxes.find_syntax_by_token(name),
        };
        let Some(syntax) = syntax else {
            return paragraph(Tone::Text, code);
        };
        if too_big {
            return paragraph(Tone::Text, code);
        }
        let mut state = ParseState::new(syntax);
        let mut stack = ScopeStack::new();
        let mut lines = Vec::new();
        for line in LinesWithEndings::from(code) {
            let Ok(ops) = state.parse_line(line, &self.syntaxes) else {
                return paragraph(Tone::Text, code);
            };
            let mut pieces: RichLine = Vec::new();
            for (range, op) in ScopeRangeIterator::new(&ops, line) {
                if stack.apply(op).is_err() {
                    return paragraph(Tone::Text, code);
                }
                let text = line[range].trim_end_matches(['\n', '\r']);
                if text.is_empty() {
                    continue;
                }
                push_piece(&mut pieces, tone_of(&stack), text);
            }
            lines.push(pieces);
        }
        lines
    }
}

fn push_piece(pieces: &mut RichLine, tone: Tone, text: &str) {
    match pieces.last_mut() {
        Some(last) if last.tone == tone => last.text.push_str(&piece(tone, text).text),
        _ => pieces.push(piece(tone, text)),
    }
}

/// The tone of a scope stack: comments, keys and strings win over the punctuation inside
/// them; otherwise the innermost scope that names a tone.
fn tone_of(stack: &ScopeStack) -> Tone {
    let names: Vec<String> = stack
        .as_slice()
        .iter()
        .map(|scope| scope.build_string())
        .collect();
    let any = |prefixes: &[&str]| {
        names
            .iter()
            .any(|name| prefixes.iter().any(|prefix| name.starts_with(prefix)))
    };
    if any(&["comment"]) {
        return Tone::CodeComment;
    }
    if any(&[
        "meta.mapping.key",
        "meta.structure.dictionary.key",
        "support.type.property-name",
    ]) {
        return Tone::CodeKey;
    }
    if any(&["string"]) {
        return Tone::CodeString;
    }
    for name in names.iter().rev() {
        let tone = if name.starts_with("constant") {
            Tone::CodeNumber
        } else if name.starts_with("keyword") || name.starts_with("storage") {
            Tone::CodeKeyword
        } else if name.starts_with("entity.name") || name.starts_with("support.function") {
            Tone::CodeKey
        } else if name.starts_with("punctuation") {
            Tone::Muted
        } else {
            continue;
        };
        return tone;
    }
    Tone::Text
}
