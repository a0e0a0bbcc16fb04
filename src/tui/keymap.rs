//! Keys to actions: built-in vim-and-arrows defaults, overridable from a TOML file.
//!
//! A keymap file may rebind an action (`page_down = ["ctrl-d", "pagedown"]` replaces its
//! keys) or a key (`[keys]` then `"x" = "quit"`). The digits `1`–`4` always set the four
//! error labels. The Runs tab's actions (`new_run`, `follow_run`, `pause_run`, `resume_run`,
//! `stop_run`, `choose_charts`, `run_table`) are bound in a table of their own that shadows the global keys in that tab only, so `n`
//! and `r` can launch and resume there and still write notes and diff elsewhere.

pub use super::key_chord::KeyChord;

use super::action::{Action, Scope};
use crate::config_file::{ConfigError, ConfigErrorKind, enum_named, line_of, locate};
use anyhow::Context;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use toml::de::{DeTable, DeValue};

/// The built-in bindings, in the order help lists them.
const DEFAULTS: &[(Action, &[&str])] = &[
    (Action::Quit, &["q", "ctrl-c"]),
    (Action::Back, &["esc"]),
    (Action::Help, &["?"]),
    (Action::Command, &[":"]),
    (Action::Search, &["/"]),
    (Action::NextHit, &["}"]),
    (Action::PrevHit, &["{"]),
    (Action::NextTab, &["tab"]),
    (Action::PrevTab, &["shift-tab"]),
    (Action::TabRollouts, &["f1"]),
    (Action::TabRuns, &["f2"]),
    (Action::TabStats, &["f3"]),
    (Action::TabCurate, &["f4"]),
    (Action::Down, &["j", "down"]),
    (Action::Up, &["k", "up"]),
    (Action::Left, &["h", "left"]),
    (Action::Right, &["l", "right"]),
    (Action::ScrollLeft, &["<", "shift-left"]),
    (Action::ScrollRight, &[">", "shift-right"]),
    (Action::PageDown, &["pagedown", "ctrl-d", "ctrl-f"]),
    (Action::PageUp, &["pageup", "ctrl-u", "ctrl-b"]),
    (Action::Top, &["home"]),
    (Action::Bottom, &["end", "G"]),
    (Action::Open, &["enter"]),
    (Action::Group, &["g"]),
    (Action::Sort, &["s"]),
    (Action::Reverse, &["S"]),
    (Action::Outcome, &["f"]),
    (Action::Unlabelled, &["U"]),
    (Action::Tokens, &["t"]),
    (Action::Entropy, &["e"]),
    (Action::Fold, &["z"]),
    (Action::Transcript, &["v"]),
    (Action::Pin, &["space"]),
    (Action::Reference, &["r"]),
    (Action::LabelCalculation, &["1"]),
    (Action::LabelReasoning, &["2"]),
    (Action::LabelUnderstanding, &["3"]),
    (Action::LabelFormat, &["4"]),
    (Action::LabelKind5, &["5"]),
    (Action::LabelKind6, &["6"]),
    (Action::LabelKind7, &["7"]),
    (Action::LabelKind8, &["8"]),
    (Action::LabelKind9, &["9"]),
    (Action::Note, &["n"]),
    (Action::Undo, &["u"]),
    (Action::Accept, &["a"]),
    (Action::NextBadcase, &["]"]),
    (Action::PrevBadcase, &["["]),
    (Action::Smoothing, &["m"]),
    (Action::Refresh, &["ctrl-r"]),
    (Action::Fork, &["F"]),
    (Action::Repair, &["R"]),
    (Action::Branch, &["b"]),
    (Action::ForkParent, &["B"]),
    (Action::NewRun, &["n"]),
    (Action::FollowRun, &["i"]),
    (Action::PauseRun, &["p"]),
    (Action::ResumeRun, &["r"]),
    (Action::StopRun, &["x"]),
    (Action::ChooseCharts, &["c"]),
    (Action::RunTable, &["t"]),
];

/// The label digits, fixed whatever a keymap file says.
const LABEL_DIGITS: [(char, Action); 9] = [
    ('1', Action::LabelCalculation),
    ('2', Action::LabelReasoning),
    ('3', Action::LabelUnderstanding),
    ('4', Action::LabelFormat),
    ('5', Action::LabelKind5),
    ('6', Action::LabelKind6),
    ('7', Action::LabelKind7),
    ('8', Action::LabelKind8),
    ('9', Action::LabelKind9),
];

/// A keymap file read: actions to keys, and the `[keys]` table of keys to actions, each
/// entry with its line.
#[derive(Debug, Default)]
struct KeymapFile {
    keys: Vec<(String, Action, usize)>,
    actions: BTreeMap<Action, (Vec<String>, usize)>,
}

impl KeymapFile {
    /// Reads a keymap file's text; errors name `origin`, the line and the action meant.
    fn read(text: &str, origin: &str) -> Result<Self, ConfigError> {
        let table = DeTable::parse(text).map_err(|error| locate(&error, text, origin))?;
        let at = |span: std::ops::Range<usize>| line_of(text, span.start);
        let invalid = |line: usize, message: String| ConfigError {
            origin: origin.to_string(),
            line: Some(line),
            kind: ConfigErrorKind::Invalid,
            message,
        };
        let mut file = Self::default();
        for (key, value) in table.get_ref().iter() {
            let line = at(key.span());
            if key.get_ref() == "keys" {
                let DeValue::Table(keys) = value.get_ref() else {
                    return Err(invalid(
                        line,
                        "[keys] must be a table of \"key\" = \"action\"".into(),
                    ));
                };
                for (chord, action) in keys.iter() {
                    let line = at(action.span());
                    let Some(name) = action.get_ref().as_str() else {
                        let message = format!(
                            "[keys] `{}` must name an action, e.g. \"quit\"",
                            chord.get_ref()
                        );
                        return Err(invalid(line, message));
                    };
                    let action = enum_named::<Action>(name, "action", origin, line)?;
                    file.keys.push((chord.get_ref().to_string(), action, line));
                }
                continue;
            }
            let action = enum_named::<Action>(key.get_ref(), "action", origin, line)?;
            let chords: Option<Vec<String>> = value.get_ref().as_array().and_then(|items| {
                items
                    .iter()
                    .map(|item| item.get_ref().as_str().map(str::to_string))
                    .collect()
            });
            let Some(chords) = chords else {
                let message = format!(
                    "`{}` needs a list of keys, e.g. [\"ctrl-d\"]",
                    key.get_ref()
                );
                return Err(invalid(line, message));
            };
            file.actions.insert(action, (chords, line));
        }
        Ok(file)
    }
}

/// Which action each key triggers: global bindings, and the Runs tab's own.
#[derive(Clone, Debug, PartialEq)]
pub struct Keymap {
    bindings: HashMap<KeyChord, Action>,
    runs: HashMap<KeyChord, Action>,
}

impl Default for Keymap {
    fn default() -> Self {
        let mut keymap = Self {
            bindings: HashMap::new(),
            runs: HashMap::new(),
        };
        for (action, keys) in DEFAULTS {
            for key in *keys {
                if let Ok(chord) = KeyChord::parse(key) {
                    keymap.table(*action).insert(chord, *action);
                }
            }
        }
        keymap
    }
}

impl Keymap {
    /// The defaults with a keymap file's overrides; errors name the file, the line and the
    /// entry.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the keymap {}", path.display()))?;
        Self::read(&text, &path.display().to_string())
    }

    /// The defaults with the overrides of a keymap file's text.
    pub fn from_toml(text: &str) -> anyhow::Result<Self> {
        Self::read(text, "the keymap")
    }

    fn read(text: &str, origin: &str) -> anyhow::Result<Self> {
        let file = KeymapFile::read(text, origin)?;
        let mut keymap = Self::default();
        for (action, (keys, line)) in &file.actions {
            keymap.table(*action).retain(|_, bound| bound != action);
            for key in keys {
                let chord = KeyChord::parse(key)
                    .map_err(|error| anyhow::anyhow!("{origin}:{line}: {action:?}: {error}"))?;
                keymap
                    .bind(chord, *action)
                    .with_context(|| format!("{origin}:{line}"))?;
            }
        }
        for (key, action, line) in &file.keys {
            let chord = KeyChord::parse(key)
                .map_err(|error| anyhow::anyhow!("{origin}:{line}: [keys] {error}"))?;
            keymap
                .bind(chord, *action)
                .with_context(|| format!("{origin}:{line}"))?;
        }
        for (digit, action) in LABEL_DIGITS {
            keymap.bindings.insert(
                KeyChord::new(KeyCode::Char(digit), KeyModifiers::NONE),
                action,
            );
        }
        Ok(keymap)
    }

    fn bind(&mut self, chord: KeyChord, action: Action) -> anyhow::Result<()> {
        let digit = LABEL_DIGITS
            .iter()
            .find(|(digit, _)| chord == KeyChord::new(KeyCode::Char(*digit), KeyModifiers::NONE));
        if let Some((digit, label)) = digit
            && *label != action
        {
            anyhow::bail!("key `{digit}` always sets a label; bind {action:?} to another key");
        }
        self.table(action).insert(chord, action);
        Ok(())
    }

    /// The bindings of the scope an action belongs to.
    fn table(&mut self, action: Action) -> &mut HashMap<KeyChord, Action> {
        match action.scope() {
            Scope::Everywhere => &mut self.bindings,
            Scope::Runs => &mut self.runs,
        }
    }

    /// The action a key event triggers globally.
    pub fn action(&self, event: &KeyEvent) -> Option<Action> {
        self.bindings.get(&KeyChord::of(event)).copied()
    }

    /// The action a key event triggers in a scope: its own bindings first, then the global.
    pub fn action_in(&self, event: &KeyEvent, scope: Scope) -> Option<Action> {
        let chord = KeyChord::of(event);
        let own = match scope {
            Scope::Everywhere => None,
            Scope::Runs => self.runs.get(&chord),
        };
        own.or_else(|| self.bindings.get(&chord)).copied()
    }

    /// The keys bound to an action, in a stable order (defaults first).
    pub fn keys_for(&self, action: Action) -> Vec<KeyChord> {
        let table = match action.scope() {
            Scope::Everywhere => &self.bindings,
            Scope::Runs => &self.runs,
        };
        let mut keys: Vec<KeyChord> = table
            .iter()
            .filter(|(_, bound)| **bound == action)
            .map(|(chord, _)| *chord)
            .collect();
        let rank = |chord: &KeyChord| {
            DEFAULTS
                .iter()
                .flat_map(|(_, keys)| keys.iter())
                .position(|key| KeyChord::parse(key).as_ref() == Ok(chord))
                .unwrap_or(usize::MAX)
        };
        keys.sort_by_key(|chord| (rank(chord), chord.to_string()));
        keys
    }

    /// The first key of an action as text, or `–` when it has none.
    pub fn first_key(&self, action: Action) -> String {
        self.keys_for(action)
            .first()
            .map_or_else(|| "–".to_string(), ToString::to_string)
    }
}
