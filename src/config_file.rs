//! Reading the TOML files people write (run configs, `session.toml`, keymaps, themes): every
//! key is checked, and a mistake is reported as `FILE:LINE: unknown key `learnig_rate` in
//! [trainer]; did you mean `learning_rate`?`, naming the file, the line, the table and, for a
//! misspelt key or value, the one probably meant.

use crate::text::suggestion;
use serde::de::DeserializeOwned;
use std::fmt;
use std::ops::Range;
use toml::de::{DeTable, DeValue};

/// The kind of mistake a config error reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigErrorKind {
    /// A key no setting has.
    UnknownKey,
    /// A value that is not one of the allowed names.
    UnknownValue,
    /// A key that must be given is missing.
    MissingKey,
    /// Not TOML, or a value of the wrong type or range.
    Invalid,
}

/// A mistake in a config, located in the text it was read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The file (or flag) the text came from.
    pub origin: String,
    /// The 1-based line of the mistake, when it has one.
    pub line: Option<usize>,
    /// What kind of mistake it is.
    pub kind: ConfigErrorKind,
    /// What is wrong and what to do instead.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.origin, self.message),
            None => write!(f, "{}: {}", self.origin, self.message),
        }
    }
}

impl std::error::Error for ConfigError {}

/// Reads `text` (from `origin`, a file name or a flag) as a `T`, every key checked.
pub fn from_toml<T: DeserializeOwned>(text: &str, origin: &str) -> Result<T, ConfigError> {
    toml::from_str(text).map_err(|error| locate(&error, text, origin))
}

/// The located form of an error that reading `text` as TOML gave.
pub fn locate(error: &toml::de::Error, text: &str, origin: &str) -> ConfigError {
    let parsed = DeTable::parse(text).ok();
    let found = match (&parsed, error.span()) {
        (Some(table), Some(span)) => find(table.get_ref(), &span, &mut Vec::new()),
        _ => None,
    };
    let mut line = error.span().map(|span| line_of(text, span.start));
    let message = error.message();
    let (kind, message) = if let Some((word, known)) = named(message, "unknown field") {
        let table = match &found {
            Some(found) if found.key => &found.path[..found.path.len() - 1],
            Some(found) => {
                if let Some(span) = found.value.and_then(|value| key_span(value, word)) {
                    line = Some(line_of(text, span.start));
                }
                &found.path[..]
            }
            None => &[][..],
        };
        let message = format!(
            "unknown key `{word}` {}; {}",
            table_name(table),
            suggestion(word, &known)
        );
        (ConfigErrorKind::UnknownKey, message)
    } else if let Some((word, known)) = named(message, "unknown variant") {
        let message = format!("unknown value `{word}`; {}", suggestion(word, &known));
        (
            ConfigErrorKind::UnknownValue,
            prefixed(found.as_ref(), message),
        )
    } else if let Some((word, _)) = named(message, "missing field") {
        let table = found.as_ref().map_or(&[][..], |found| &found.path[..]);
        let message = format!("the key `{word}` is missing {}", table_name(table));
        (ConfigErrorKind::MissingKey, message)
    } else {
        let message = prefixed(found.as_ref(), message.to_string());
        (ConfigErrorKind::Invalid, message)
    };
    ConfigError {
        origin: origin.to_string(),
        line,
        kind,
        message,
    }
}

/// The message of an error that reading a TOML value (not text: no line) gave, worded as
/// `locate` words it, with the table or key the error's path names.
pub fn value_error(error: &toml::de::Error) -> String {
    let shown = error.to_string();
    let path: Vec<Step> = shown
        .lines()
        .find_map(|line| line.strip_prefix("in `")?.strip_suffix('`'))
        .map(|path| {
            path.split('.')
                .map(|key| Step::Key(key.to_string()))
                .collect()
        })
        .unwrap_or_default();
    let message = error.message();
    if let Some((word, known)) = named(message, "unknown field") {
        format!(
            "unknown key `{word}` {}; {}",
            table_name(&path),
            suggestion(word, &known)
        )
    } else if let Some((word, _)) = named(message, "missing field") {
        format!("the key `{word}` is missing {}", table_name(&path))
    } else if path.is_empty() {
        message.to_string()
    } else {
        format!("`{}`: {message}", dotted(&path))
    }
}

/// The variant of a serde enum that `name` (a key or a string value at `line` of `origin`)
/// names, or the error `unknown {what} `name`; did you mean …?`.
pub fn enum_named<T: DeserializeOwned>(
    name: &str,
    what: &str,
    origin: &str,
    line: usize,
) -> Result<T, ConfigError> {
    let deserializer = serde::de::value::StrDeserializer::<serde::de::value::Error>::new(name);
    T::deserialize(deserializer).map_err(|error| {
        let message = error.to_string();
        let known = named(&message, "unknown variant").map_or_else(Vec::new, |(_, known)| known);
        ConfigError {
            origin: origin.to_string(),
            line: Some(line),
            kind: ConfigErrorKind::UnknownValue,
            message: format!("unknown {what} `{name}`; {}", suggestion(name, &known)),
        }
    })
}

/// One step of the way to a key: a table's key or an array's index.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
}

/// Where an error's span lies: the path to the key or value it covers (the deepest one, as
/// an array of tables and its one entry share a span).
struct Found<'a> {
    path: Vec<Step>,
    key: bool,
    value: Option<&'a DeValue<'a>>,
}

fn find<'a>(
    table: &'a DeTable<'a>,
    span: &Range<usize>,
    path: &mut Vec<Step>,
) -> Option<Found<'a>> {
    for (key, value) in table.iter() {
        path.push(Step::Key(key.get_ref().to_string()));
        if key.span() == *span {
            return Some(Found {
                path: path.clone(),
                key: true,
                value: Some(value.get_ref()),
            });
        }
        if let Some(found) = find_in(value.get_ref(), value.span(), span, path) {
            return Some(found);
        }
        path.pop();
    }
    None
}

fn find_in<'a>(
    value: &'a DeValue<'a>,
    own: Range<usize>,
    span: &Range<usize>,
    path: &mut Vec<Step>,
) -> Option<Found<'a>> {
    let inner = match value {
        DeValue::Table(table) => find(table, span, path),
        DeValue::Array(array) => array.iter().enumerate().find_map(|(index, item)| {
            path.push(Step::Index(index));
            let found = find_in(item.get_ref(), item.span(), span, path);
            path.pop();
            found
        }),
        _ => None,
    };
    inner.or_else(|| {
        (own == *span).then(|| Found {
            path: path.clone(),
            key: false,
            value: Some(value),
        })
    })
}

/// The span of key `word` in a table value.
fn key_span(value: &DeValue<'_>, word: &str) -> Option<Range<usize>> {
    let DeValue::Table(table) = value else {
        return None;
    };
    table
        .iter()
        .find(|(key, _)| key.get_ref() == word)
        .map(|(key, _)| key.span())
}

/// serde's `unknown field `x`, expected one of `a`, `b`` read back: the word and the names.
fn named<'m>(message: &'m str, lead: &str) -> Option<(&'m str, Vec<&'m str>)> {
    let rest = message.strip_prefix(lead)?.strip_prefix(" `")?;
    let (word, rest) = rest.split_once('`')?;
    let known = rest
        .split_once("expected")
        .map(|(_, names)| names.split('`').skip(1).step_by(2).collect())
        .unwrap_or_default();
    Some((word, known))
}

/// The message with the dotted key it is about in front, when the error has a place.
fn prefixed(found: Option<&Found<'_>>, message: String) -> String {
    match found.filter(|found| !found.path.is_empty()) {
        Some(found) => format!("`{}`: {message}", dotted(&found.path)),
        None => message,
    }
}

/// `trainer.lora`, `tools[1].name`.
fn dotted(path: &[Step]) -> String {
    let mut text = String::new();
    for step in path {
        match step {
            Step::Key(key) if text.is_empty() => text.push_str(key),
            Step::Key(key) => {
                text.push('.');
                text.push_str(key);
            }
            Step::Index(index) => text.push_str(&format!("[{index}]")),
        }
    }
    text
}

/// `at the top level`, `in [trainer.lora]`, `in [[tools]] (entry 2)`.
fn table_name(path: &[Step]) -> String {
    match path.split_last() {
        None => "at the top level".to_string(),
        Some((Step::Index(index), keys)) if keys.iter().all(|s| matches!(s, Step::Key(_))) => {
            format!("in [[{}]] (entry {})", dotted(keys), index + 1)
        }
        Some(_) => format!("in [{}]", dotted(path)),
    }
}

/// The 1-based line of a byte offset.
pub fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Tool {
        name: String,
        #[serde(default)]
        timeout_ms: u64,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default, deny_unknown_fields)]
    struct Config {
        seed: u64,
        mode: Mode,
        tools: Vec<Tool>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Mode {
        #[default]
        Fast,
        Careful,
    }

    fn error(text: &str) -> String {
        from_toml::<Config>(text, "c.toml").unwrap_err().to_string()
    }

    #[test]
    fn errors_name_the_line_the_table_and_the_name_meant() {
        let good: Config = from_toml(
            "seed = 2\nmode = \"careful\"\n[[tools]]\nname = \"a\"\ntimeout_ms = 3\n",
            "c.toml",
        )
        .unwrap();
        assert_eq!((good.seed, good.tools[0].timeout_ms), (2, 3));
        assert_eq!(good.tools[0].name, "a");
        assert!(matches!(good.mode, Mode::Careful));
        assert_eq!(
            error("seed = 1\n\n[[tools]]\nname = \"a\"\n[[tools]]\nname = \"b\"\ntimeout = 3\n"),
            "c.toml:7: unknown key `timeout` in [[tools]] (entry 2); did you mean `timeout_ms`?"
        );
        assert_eq!(
            error("mode = \"carefull\"\n"),
            "c.toml:1: `mode`: unknown value `carefull`; did you mean `careful`?"
        );
        assert_eq!(
            error("\nseed = \"x\"\n"),
            "c.toml:2: `seed`: invalid type: string \"x\", expected u64"
        );
        assert_eq!(
            error("[[tools]]\ntimeout_ms = 3\n"),
            "c.toml:1: the key `name` is missing in [[tools]] (entry 1)"
        );
        assert!(error("seed = \n").starts_with("c.toml:1: "));
        assert_eq!(
            from_toml::<Config>("zzz = 1", "c.toml").unwrap_err().kind,
            ConfigErrorKind::UnknownKey
        );
        let value: toml::Value = toml::from_str("[[tools]]\ntimeout_ms = 3\n").unwrap();
        let error = Config::deserialize(value).unwrap_err();
        assert_eq!(value_error(&error), "the key `name` is missing in [tools]");
        let value: toml::Value = toml::from_str("seed = \"x\"\n").unwrap();
        let error = Config::deserialize(value).unwrap_err();
        assert_eq!(
            value_error(&error),
            "`seed`: invalid type: string \"x\", expected u64"
        );
    }
}
