//! The error kinds a session labels with: the four built in and its own, named in
//! session.toml:
//!
//! ```toml
//! [[labels]]
//! key = 5
//! name = "hallucination"
//! description = "States a number that appears nowhere in the question or a tool result."
//! ```
//!
//! A session kind is stored by its key (`label5`–`label9`), so renaming it keeps its labels.

use crate::trajectory::{ErrorKind, KindKey};
use serde::{Deserialize, Serialize};

/// One of a session's own error kinds, as written under `[[labels]]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionLabelKind {
    /// The key that sets it in the TUI, `5`–`9`.
    pub key: u8,
    /// Its name in the TUI, filters and `stats` (lower-case letters, digits, `-`, `_`).
    pub name: String,
    /// What it means, for the help screen and teammates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The kinds a session labels with: the four built in and those `[[labels]]` adds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Vec<SessionLabelKind>", into = "Vec<SessionLabelKind>")]
pub struct LabelKinds {
    own: Vec<(KindKey, SessionLabelKind)>,
}

impl TryFrom<Vec<SessionLabelKind>> for LabelKinds {
    type Error = String;

    /// Checks each entry: a key of `5`–`9` used once, a name of its own.
    fn try_from(entries: Vec<SessionLabelKind>) -> Result<Self, String> {
        let mut own: Vec<(KindKey, SessionLabelKind)> = Vec::new();
        for (position, entry) in entries.into_iter().enumerate() {
            let at = format!("[[labels]] entry {} (`{}`)", position + 1, entry.name);
            let key = KindKey::new(entry.key).ok_or_else(|| {
                format!(
                    "{at}: key {} is not one of 5–9 (1–4 are calculation, reasoning, \
                     understanding and format)",
                    entry.key
                )
            })?;
            let valid = !entry.name.is_empty()
                && entry.name.chars().all(|c| {
                    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_')
                });
            if !valid {
                return Err(format!(
                    "{at}: a name uses lower-case letters, digits, `-` and `_` only"
                ));
            }
            if ErrorKind::from_stored(&entry.name).is_some() {
                return Err(format!(
                    "{at}: `{}` is a built-in or stored kind's name",
                    entry.name
                ));
            }
            if let Some((_, other)) = own.iter().find(|(used, _)| *used == key) {
                return Err(format!(
                    "{at}: key {} is already `{}`",
                    entry.key, other.name
                ));
            }
            if own.iter().any(|(_, other)| other.name == entry.name) {
                return Err(format!("{at}: the name is used twice"));
            }
            own.push((key, entry));
        }
        own.sort_by_key(|(key, _)| *key);
        Ok(Self { own })
    }
}

impl From<LabelKinds> for Vec<SessionLabelKind> {
    fn from(kinds: LabelKinds) -> Self {
        kinds.own.into_iter().map(|(_, entry)| entry).collect()
    }
}

impl LabelKinds {
    /// Whether the session adds no kinds of its own.
    pub fn is_empty(&self) -> bool {
        self.own.is_empty()
    }

    /// The kinds to label with, in key order: the four built in, then the session's.
    pub fn kinds(&self) -> Vec<ErrorKind> {
        ErrorKind::ALL
            .into_iter()
            .chain(self.own.iter().map(|(key, _)| ErrorKind::Session(*key)))
            .collect()
    }

    /// Whether a kind can be set here: a built-in one, or one the session names.
    pub fn defines(&self, kind: ErrorKind) -> bool {
        self.entry(kind).is_some() || kind.is_builtin()
    }

    /// The kind's name here: the session's name for its own kinds, the stored name otherwise.
    pub fn name(&self, kind: ErrorKind) -> &str {
        self.entry(kind)
            .map_or(kind.as_str(), |entry| entry.name.as_str())
    }

    /// The session's description of one of its kinds.
    pub fn description(&self, kind: ErrorKind) -> Option<&str> {
        self.entry(kind)?.description.as_deref()
    }

    /// Reads a kind typed by a user: a session kind's name, else what `ErrorKind` parses.
    pub fn parse(&self, text: &str) -> Result<ErrorKind, String> {
        let lower = text.to_ascii_lowercase();
        if let Some((key, _)) = self.own.iter().find(|(_, entry)| entry.name == lower) {
            return Ok(ErrorKind::Session(*key));
        }
        text.parse::<ErrorKind>().map_err(|error| {
            if self.own.is_empty() {
                error
            } else {
                let names: Vec<&str> = self.own.iter().map(|(_, e)| e.name.as_str()).collect();
                format!("{error}; this session's kinds: {}", names.join(", "))
            }
        })
    }

    fn entry(&self, kind: ErrorKind) -> Option<&SessionLabelKind> {
        let ErrorKind::Session(key) = kind else {
            return None;
        };
        self.own
            .iter()
            .find(|(own, _)| *own == key)
            .map(|(_, entry)| entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(key: u8, name: &str) -> SessionLabelKind {
        SessionLabelKind {
            key,
            name: name.to_string(),
            description: None,
        }
    }

    #[test]
    fn session_kinds_are_named_parsed_and_ordered() {
        let kinds =
            LabelKinds::try_from(vec![entry(7, "units"), entry(5, "hallucination")]).unwrap();
        let seven = ErrorKind::Session(KindKey::new(7).unwrap());
        let five = ErrorKind::Session(KindKey::new(5).unwrap());
        assert_eq!(kinds.kinds()[4..], [five, seven]);
        assert_eq!(kinds.name(seven), "units");
        assert_eq!(kinds.name(ErrorKind::Format), "format");
        assert_eq!(kinds.parse("Hallucination"), Ok(five));
        assert_eq!(kinds.parse("label7"), Ok(seven));
        assert_eq!(kinds.parse("calc"), Ok(ErrorKind::Calculation));
        let error = kinds.parse("bogus").unwrap_err();
        assert!(
            error.ends_with("this session's kinds: hallucination, units"),
            "{error}"
        );
        assert!(kinds.defines(seven));
        assert!(!kinds.defines(ErrorKind::Session(KindKey::new(6).unwrap())));
        assert_eq!(
            kinds.name(ErrorKind::Session(KindKey::new(6).unwrap())),
            "label6"
        );
    }

    #[test]
    fn bad_entries_are_refused_with_the_entry_named() {
        let refused = |entries: Vec<SessionLabelKind>| LabelKinds::try_from(entries).unwrap_err();
        assert!(refused(vec![entry(4, "x")]).contains("key 4 is not one of 5–9"));
        assert!(refused(vec![entry(5, "a"), entry(5, "b")]).contains("key 5 is already `a`"));
        assert!(refused(vec![entry(5, "a"), entry(6, "a")]).contains("the name is used twice"));
        assert!(refused(vec![entry(6, "format")]).contains("built-in"));
        assert!(refused(vec![entry(6, "label8")]).contains("built-in"));
        assert!(refused(vec![entry(6, "Big Error")]).contains("entry 1 (`Big Error`)"));
    }
}
