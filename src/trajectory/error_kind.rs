//! The kinds of error a failing step is labelled with: four built in (keys `1`–`4`) and up to
//! five of a session's own (keys `5`–`9`, named by `[[labels]]` in session.toml).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// The key of a session's own error kind, `5` to `9`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KindKey(u8);

impl KindKey {
    /// The keys a session's own kinds may use, in order.
    pub const ALL: [KindKey; 5] = [KindKey(5), KindKey(6), KindKey(7), KindKey(8), KindKey(9)];

    /// The key `digit`, if it is one of `5`–`9`.
    pub fn new(digit: u8) -> Option<Self> {
        (5..=9).contains(&digit).then_some(Self(digit))
    }

    /// The digit.
    pub fn digit(self) -> u8 {
        self.0
    }
}

/// The kind of error a failing step is labelled with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorKind {
    /// A false arithmetic claim or a wrong use of a tool result.
    Calculation,
    /// A wrong plan or inference.
    Reasoning,
    /// The question was misread: wrong quantity, unit or part.
    Understanding,
    /// The answer or a tool call is not in the expected form.
    Format,
    /// A session's own kind, stored by its key (`label5`–`label9`); the session names it.
    Session(KindKey),
}

/// The stored names of the session kinds, by key.
const SESSION_NAMES: [&str; 5] = ["label5", "label6", "label7", "label8", "label9"];

impl ErrorKind {
    /// The four built-in kinds, in key order (`1`–`4`).
    pub const ALL: [ErrorKind; 4] = [
        Self::Calculation,
        Self::Reasoning,
        Self::Understanding,
        Self::Format,
    ];

    /// How many kinds there can be: the four and five session kinds (the size of bit sets).
    pub const COUNT: usize = 9;

    /// Every kind there can be, in key order (`1`–`9`).
    pub const EVERY: [ErrorKind; Self::COUNT] = [
        Self::Calculation,
        Self::Reasoning,
        Self::Understanding,
        Self::Format,
        Self::Session(KindKey::ALL[0]),
        Self::Session(KindKey::ALL[1]),
        Self::Session(KindKey::ALL[2]),
        Self::Session(KindKey::ALL[3]),
        Self::Session(KindKey::ALL[4]),
    ];

    /// The kind's name as stored: a built-in kind's name, or `label5`–`label9`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Calculation => "calculation",
            Self::Reasoning => "reasoning",
            Self::Understanding => "understanding",
            Self::Format => "format",
            Self::Session(key) => SESSION_NAMES[usize::from(key.digit() - 5)],
        }
    }

    /// The key that sets it, `1`–`9`.
    pub fn digit(self) -> u8 {
        self.index() + 1
    }

    /// Whether it is one of the four built-in kinds.
    pub fn is_builtin(self) -> bool {
        !matches!(self, Self::Session(_))
    }

    /// A stable small number for index keys and bit sets: the key minus one.
    pub fn index(self) -> u8 {
        match self {
            Self::Calculation => 0,
            Self::Reasoning => 1,
            Self::Understanding => 2,
            Self::Format => 3,
            Self::Session(key) => key.digit() - 1,
        }
    }

    /// The kind with that index.
    pub fn from_index(index: u8) -> Option<Self> {
        Self::EVERY.get(usize::from(index)).copied()
    }

    /// The kind stored under exactly this name.
    pub fn from_stored(name: &str) -> Option<Self> {
        Self::EVERY.into_iter().find(|kind| kind.as_str() == name)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ErrorKind {
    type Err = String;

    /// A stored name, or a built-in name's first three letters or more, in any case.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let lower = text.to_ascii_lowercase();
        Self::from_stored(&lower)
            .or_else(|| {
                Self::ALL
                    .into_iter()
                    .find(|kind| kind.as_str().starts_with(&lower) && lower.len() >= 3)
            })
            .ok_or_else(|| {
                format!(
                    "unknown error kind `{text}`: use calculation, reasoning, understanding, \
                     format, or a session kind (label5–label9, or its name in session.toml)"
                )
            })
    }
}

impl Serialize for ErrorKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ErrorKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Self::from_stored(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown error kind `{name}`: expected calculation, reasoning, understanding, \
                 format or label5–label9"
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_kinds_parse_by_name_and_prefix() {
        assert_eq!(
            "calculation".parse::<ErrorKind>(),
            Ok(ErrorKind::Calculation)
        );
        assert_eq!("Format".parse::<ErrorKind>(), Ok(ErrorKind::Format));
        assert_eq!("under".parse::<ErrorKind>(), Ok(ErrorKind::Understanding));
        assert_eq!(
            "label7".parse::<ErrorKind>(),
            Ok(ErrorKind::Session(KindKey::new(7).unwrap()))
        );
        assert!("wrong".parse::<ErrorKind>().is_err());
        assert!("label4".parse::<ErrorKind>().is_err());
        assert!("lab".parse::<ErrorKind>().is_err());
        for (position, kind) in ErrorKind::EVERY.into_iter().enumerate() {
            assert_eq!(ErrorKind::from_index(kind.index()), Some(kind));
            assert_eq!(usize::from(kind.digit()), position + 1);
        }
        assert_eq!(ErrorKind::from_index(9), None);
    }

    #[test]
    fn kinds_are_stored_by_name() {
        let kinds = ErrorKind::EVERY.to_vec();
        let json = serde_json::to_string(&kinds).unwrap();
        assert_eq!(
            json,
            r#"["calculation","reasoning","understanding","format","label5","label6","label7","label8","label9"]"#
        );
        let back: Vec<ErrorKind> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, kinds);
        let error = serde_json::from_str::<ErrorKind>(r#""label10""#).unwrap_err();
        assert!(error.to_string().contains("label10"), "{error}");
        assert_eq!(KindKey::new(4), None);
        assert_eq!(KindKey::new(10), None);
    }
}
