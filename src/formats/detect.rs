//! Recognising a file's format from its content: a zip archive is an Inspect `.eval` log;
//! a parquet file's column names count as its records' keys; otherwise the keys of the first
//! JSON record (a JSONL line, an array's first element, or
//! the top level of a single pretty-printed document) decide. The file name only helps to
//! word the error when the content decides nothing.

use super::document::{first_byte, first_record_bytes};
use super::{Format, ImportError};
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use std::fmt;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;
use strum::IntoEnumIterator;

/// The format of a file, from its content.
pub fn detect(path: &Path) -> Result<Format, ImportError> {
    let unrecognised = |reason: &str| {
        let hint = match format_from_name(path) {
            Some(format) => format!(" (its name suggests {format}: try --format {format})"),
            None => String::new(),
        };
        ImportError::Unrecognised {
            path: path.to_path_buf(),
            reason: format!("{reason}{hint}"),
            known: Format::iter()
                .map(Format::name)
                .collect::<Vec<_>>()
                .join(", "),
        }
    };
    let mut magic = Vec::new();
    File::open(path)
        .and_then(|file| file.take(4).read_to_end(&mut magic))
        .map_err(ImportError::io(path))?;
    if magic.starts_with(b"PK\x03\x04") || magic.starts_with(b"PK\x05\x06") {
        return Ok(Format::InspectEval);
    }
    let keys: Vec<String> = match first_byte(path)? {
        _ if magic == super::parquet::MAGIC => super::parquet::column_names(path)?,
        None => return Err(unrecognised("the file holds only white space")),
        Some(b'[' | b'{') => match record_keys(&first_record_bytes(path)?) {
            Some(Some(keys)) => keys,
            Some(None) => return Err(unrecognised("its first record is not a JSON object")),
            None if first_byte(path)? == Some(b'{') => top_level_keys(path)?,
            None => {
                return Err(unrecognised(
                    "the first element of its JSON array is not valid JSON",
                ));
            }
        },
        Some(_) => {
            return Err(unrecognised(
                "it starts with neither JSON, a zip archive nor parquet",
            ));
        }
    };
    classify(|key| keys.iter().any(|k| k == key)).ok_or_else(|| {
        let shown: Vec<&str> = keys.iter().take(12).map(String::as_str).collect();
        unrecognised(&format!(
            "no known format has records with the keys {{{}}}",
            shown.join(", ")
        ))
    })
}

/// The format whose records have these keys.
fn classify(has: impl Fn(&str) -> bool) -> Option<Format> {
    let format = if super::native::looks_like(&has) {
        Format::Rollscope
    } else if super::atif::looks_like(&has) {
        Format::Atif
    } else if has("resourceSpans") {
        Format::Otel
    } else if super::verifiers::looks_like(&has) {
        Format::Verifiers
    } else if has("eval") && (has("samples") || has("results") || has("version")) {
        Format::Inspect
    } else if super::openhands::looks_like(&has) {
        Format::OpenHands
    } else if has("trajectory_format") || (has("messages") && has("info")) {
        Format::MiniSweAgent
    } else if has("history") || (has("trajectory") && (has("info") || has("environment"))) {
        Format::SweAgent
    } else if has("traj") {
        Format::TauBench
    } else if has("responses_create_params") || has("response") {
        Format::Responses
    } else if has("conversations") {
        Format::Sharegpt
    } else if has("completions") && has("labels") {
        Format::TrlStepwise
    } else if has("question") && has("reasoning_steps") {
        Format::OmegaPrm
    } else if has("question") && has("full_answer") {
        Format::Rl
    } else if has("question") && has("label") {
        Format::Prm800k
    } else if has("input") && has("label") {
        Format::MathShepherd
    } else if has("input") && has("output") {
        Format::VerlRollouts
    } else if has("reward_model") || (has("data_source") && has("prompt")) {
        Format::VerlTasks
    } else if has("prompt") && has("completion") {
        Format::TrlPromptCompletion
    } else if has("question") && has("answer") {
        Format::Gsm8k
    } else if has("messages") {
        Format::OpenaiMessages
    } else if has("role") && (has("content") || has("tool_calls")) {
        Format::Messages
    } else {
        return None;
    };
    Some(format)
}

/// The format a file's name suggests, if any.
fn format_from_name(path: &Path) -> Option<Format> {
    let name = path.file_name()?.to_str()?.to_ascii_lowercase();
    let format = if name.ends_with(".eval") {
        Format::InspectEval
    } else if name.ends_with(".traj.json") {
        Format::MiniSweAgent
    } else if name.ends_with(".traj") {
        Format::SweAgent
    } else if name.contains("sharegpt") {
        Format::Sharegpt
    } else if name.contains("gsm8k") {
        Format::Gsm8k
    } else {
        return None;
    };
    Some(format)
}

/// The keys of a whole JSON record, read without keeping its values: `None` when the bytes
/// are not one valid JSON value, `Some(None)` when it is not an object.
fn record_keys(bytes: &[u8]) -> Option<Option<Vec<String>>> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let keys = RecordKeys.deserialize(&mut deserializer).ok()?;
    deserializer.end().ok()?;
    Some(keys)
}

/// A value's keys when it is an object (`None` for any other value), skipping the values.
struct RecordKeys;

impl<'de> DeserializeSeed<'de> for RecordKeys {
    type Value = Option<Vec<String>>;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for RecordKeys {
    type Value = Option<Vec<String>>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let mut keys = Vec::new();
        KeyCollector(&mut keys).visit_map(map)?;
        Ok(Some(keys))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

/// The keys of the top-level object of a JSON document, read without keeping its values; a
/// document cut short still gives the keys before the cut.
fn top_level_keys(path: &Path) -> Result<Vec<String>, ImportError> {
    let file = File::open(path).map_err(ImportError::io(path))?;
    let mut keys = Vec::new();
    let mut deserializer = serde_json::Deserializer::from_reader(BufReader::new(file));
    // An error only means the document is cut short or broken: the keys before it stand.
    let _ = KeyCollector(&mut keys).deserialize(&mut deserializer);
    Ok(keys)
}

/// Collects an object's keys, skipping its values.
struct KeyCollector<'a>(&'a mut Vec<String>);

impl<'de> DeserializeSeed<'de> for KeyCollector<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for KeyCollector<'_> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            self.0.push(key);
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }
}
