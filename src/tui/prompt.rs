//! The one-line prompt at the bottom: `:` commands, `/` search, `n` notes, the Curate form's
//! text fields. It takes every key while open: only Esc and Enter close it (Backspace on an
//! empty prompt does nothing), and a submission that fails reopens it with its text and the
//! error, so what was typed never falls through to the list's keys.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// What the prompt is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PromptKind {
    /// A `:` command.
    Command,
    /// A `/` text search.
    Search,
    /// A note on the current turn's label.
    Note,
    /// The Curate form's source filter.
    Source,
    /// The Curate form's export path.
    ExportPath,
    /// The files or run folders of another stack's run to follow.
    Follow,
    /// How to fork the open trajectory from the current turn.
    Fork,
}

impl PromptKind {
    /// The text shown before the input.
    pub fn lead(self) -> &'static str {
        match self {
            Self::Command => ":",
            Self::Search => "/",
            Self::Note => "note: ",
            Self::Source => "source filter: ",
            Self::ExportPath => "export to: ",
            Self::Follow => "follow (files or run folders): ",
            Self::Fork => "fork from this turn: continuations [obs=TEXT] [policy=DIR|STEP]: ",
        }
    }
}

/// An open prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prompt {
    /// What it is for.
    pub kind: PromptKind,
    /// What was typed.
    pub input: String,
    /// Whether the input is a recalled one shown selected: typing replaces it, backspace
    /// clears it, `→`/`End` keeps it for editing.
    pub selected: bool,
    /// Why its last submission failed, shown above it until the next key.
    pub error: Option<String>,
}

/// What a key did to the prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PromptEvent {
    /// Still typing.
    Editing,
    /// Closed without effect.
    Cancelled,
    /// Closed with this input.
    Submitted(PromptKind, String),
}

impl Prompt {
    /// An empty prompt.
    pub fn new(kind: PromptKind) -> Self {
        Self::with_input(kind, "")
    }

    /// A prompt with text already in it.
    pub fn with_input(kind: PromptKind, input: &str) -> Self {
        Self {
            kind,
            input: input.to_string(),
            selected: false,
            error: None,
        }
    }

    /// The prompt again after its submission failed: the input kept for editing, the error
    /// shown.
    pub fn failed(kind: PromptKind, input: &str, error: impl Into<String>) -> Self {
        Self {
            error: Some(error.into()),
            ..Self::with_input(kind, input)
        }
    }

    /// A prompt that recalls the last input, selected, as a search box does.
    pub fn recalled(kind: PromptKind, input: &str) -> Self {
        Self {
            selected: !input.is_empty(),
            ..Self::with_input(kind, input)
        }
    }

    /// Applies a key: characters type, backspace deletes, ctrl-u clears, enter submits,
    /// esc cancels; nothing else closes it. On a selected recalled input a character replaces
    /// it and backspace clears it.
    pub fn key(&mut self, key: &KeyEvent) -> PromptEvent {
        let control = key.modifiers.contains(KeyModifiers::CONTROL);
        self.error = None;
        if std::mem::take(&mut self.selected) {
            match key.code {
                KeyCode::Backspace => {
                    self.input.clear();
                    return PromptEvent::Editing;
                }
                KeyCode::Char(c) if !control && !c.is_control() => self.input.clear(),
                KeyCode::Right | KeyCode::End => return PromptEvent::Editing,
                _ => {}
            }
        }
        match key.code {
            KeyCode::Enter => PromptEvent::Submitted(self.kind, self.input.trim().to_string()),
            KeyCode::Esc => PromptEvent::Cancelled,
            KeyCode::Backspace => {
                self.input.pop();
                PromptEvent::Editing
            }
            KeyCode::Char('u') if control => {
                self.input.clear();
                PromptEvent::Editing
            }
            KeyCode::Char(c) if !control && !c.is_control() => {
                self.input.push(c);
                PromptEvent::Editing
            }
            _ => PromptEvent::Editing,
        }
    }
}
