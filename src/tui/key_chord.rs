//! A key with its modifiers, as a keymap file names it (`ctrl-d`, `shift-tab`, `G`) and as
//! help prints it.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::fmt;

/// A key with its modifiers, normalised so that `J` and `shift-j` are the same chord.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyChord {
    /// The key.
    pub code: KeyCode,
    /// Ctrl and Alt (Shift is folded into the character).
    pub modifiers: KeyModifiers,
}

impl KeyChord {
    /// A chord of a key and modifiers, normalised.
    pub fn new(code: KeyCode, modifiers: KeyModifiers) -> Self {
        let modifiers = match code {
            KeyCode::Char(_) | KeyCode::BackTab => modifiers - KeyModifiers::SHIFT,
            _ => modifiers,
        };
        Self {
            code,
            modifiers: modifiers
                & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT),
        }
    }

    /// The chord a key event carries.
    pub fn of(event: &KeyEvent) -> Self {
        Self::new(event.code, event.modifiers)
    }

    /// Parses `j`, `G`, `?`, `ctrl-d`, `alt-x`, `shift-tab`, `enter`, `f1`, `pagedown`, `space`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut modifiers = KeyModifiers::NONE;
        let mut rest = text;
        loop {
            let lower = rest.to_ascii_lowercase();
            let (flag, len) = if lower.starts_with("ctrl-") {
                (KeyModifiers::CONTROL, 5)
            } else if lower.starts_with("alt-") {
                (KeyModifiers::ALT, 4)
            } else if lower.starts_with("shift-") && rest.len() > 6 {
                (KeyModifiers::SHIFT, 6)
            } else {
                break;
            };
            modifiers |= flag;
            rest = &rest[len..];
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (Some(c), None) if modifiers.contains(KeyModifiers::SHIFT) => {
                KeyCode::Char(c.to_ascii_uppercase())
            }
            (Some(c), None) => KeyCode::Char(c),
            _ => named_key(&rest.to_ascii_lowercase(), modifiers).ok_or_else(|| {
                format!("unknown key `{text}`: use e.g. j, G, ctrl-d, enter, f1, pagedown")
            })?,
        };
        Ok(Self::new(code, modifiers))
    }
}

fn named_key(name: &str, modifiers: KeyModifiers) -> Option<KeyCode> {
    Some(match name {
        "enter" | "return" => KeyCode::Enter,
        "esc" | "escape" => KeyCode::Esc,
        "tab" if modifiers.contains(KeyModifiers::SHIFT) => KeyCode::BackTab,
        "tab" => KeyCode::Tab,
        "backtab" => KeyCode::BackTab,
        "space" => KeyCode::Char(' '),
        "backspace" => KeyCode::Backspace,
        "delete" | "del" => KeyCode::Delete,
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        "pageup" => KeyCode::PageUp,
        "pagedown" => KeyCode::PageDown,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        _ => {
            let number: u8 = name.strip_prefix('f')?.parse().ok()?;
            (1..=12).contains(&number).then_some(KeyCode::F(number))?
        }
    })
}

impl fmt::Display for KeyChord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.modifiers.contains(KeyModifiers::CONTROL) {
            f.write_str("ctrl-")?;
        }
        if self.modifiers.contains(KeyModifiers::ALT) {
            f.write_str("alt-")?;
        }
        if self.modifiers.contains(KeyModifiers::SHIFT) {
            f.write_str("shift-")?;
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::F(n) => write!(f, "F{n}"),
            KeyCode::Enter => f.write_str("enter"),
            KeyCode::Esc => f.write_str("esc"),
            KeyCode::Tab => f.write_str("tab"),
            KeyCode::BackTab => f.write_str("shift-tab"),
            KeyCode::Up => f.write_str("↑"),
            KeyCode::Down => f.write_str("↓"),
            KeyCode::Left => f.write_str("←"),
            KeyCode::Right => f.write_str("→"),
            KeyCode::PageUp => f.write_str("pgup"),
            KeyCode::PageDown => f.write_str("pgdn"),
            KeyCode::Home => f.write_str("home"),
            KeyCode::End => f.write_str("end"),
            KeyCode::Backspace => f.write_str("backspace"),
            KeyCode::Delete => f.write_str("del"),
            other => write!(f, "{other:?}"),
        }
    }
}
