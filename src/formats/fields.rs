//! Taking named fields out of JSON objects, with errors that name the field. What an importer
//! does not take stays in the object and becomes the record's `extra`, so nothing is lost.

use serde_json::{Map, Value};

/// A JSON object.
pub type Object = Map<String, Value>;

/// The path of `key` inside the value at `path` (`messages[2]` + `content`).
pub fn field(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// The path of element `index` of the array at `path`.
pub fn element(path: &str, index: usize) -> String {
    format!("{path}[{index}]")
}

/// What kind of JSON value this is, for error messages.
pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn expected(path: &str, what: &str, value: &Value) -> String {
    let name = if path.is_empty() { "the record" } else { path };
    format!("{name}: expected {what}, found {}", kind(value))
}

/// The value as an object, or an error naming the path.
pub fn into_object(value: Value, path: &str) -> Result<Object, String> {
    match value {
        Value::Object(object) => Ok(object),
        other => Err(expected(path, "an object", &other)),
    }
}

/// The value as an array, or an error naming the path.
pub fn into_array(value: Value, path: &str) -> Result<Vec<Value>, String> {
    match value {
        Value::Array(items) => Ok(items),
        other => Err(expected(path, "an array", &other)),
    }
}

/// Removes `key`; a missing key and `null` both give `None`.
pub fn take(object: &mut Object, key: &str) -> Option<Value> {
    object.remove(key).filter(|value| !value.is_null())
}

/// Removes `key` and requires it to be present and not null.
pub fn take_required(object: &mut Object, key: &str, path: &str) -> Result<Value, String> {
    take(object, key).ok_or_else(|| {
        let name = if path.is_empty() { "the record" } else { path };
        format!("{name}: no `{key}` field")
    })
}

/// Removes a string field (absent or null: `None`).
pub fn take_string(object: &mut Object, key: &str, path: &str) -> Result<Option<String>, String> {
    match take(object, key) {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(other) => Err(expected(&field(path, key), "a string", &other)),
    }
}

/// Removes a string field that must be there.
pub fn take_required_string(object: &mut Object, key: &str, path: &str) -> Result<String, String> {
    match take_required(object, key, path)? {
        Value::String(text) => Ok(text),
        other => Err(expected(&field(path, key), "a string", &other)),
    }
}

/// Removes an array field (absent or null: `None`).
pub fn take_array(
    object: &mut Object,
    key: &str,
    path: &str,
) -> Result<Option<Vec<Value>>, String> {
    take(object, key)
        .map(|value| into_array(value, &field(path, key)))
        .transpose()
}

/// Removes an object field (absent or null: `None`).
pub fn take_object(object: &mut Object, key: &str, path: &str) -> Result<Option<Object>, String> {
    take(object, key)
        .map(|value| into_object(value, &field(path, key)))
        .transpose()
}

/// Removes a number field; booleans count as 1 and 0 (absent or null: `None`).
pub fn take_number(object: &mut Object, key: &str, path: &str) -> Result<Option<f64>, String> {
    match take(object, key) {
        None => Ok(None),
        Some(value) => number(&value)
            .map(Some)
            .ok_or_else(|| expected(&field(path, key), "a number", &value)),
    }
}

/// A number, or a boolean as 1 or 0.
pub fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(number) => number.as_f64(),
        Value::Bool(flag) => Some(if *flag { 1.0 } else { 0.0 }),
        _ => None,
    }
}

/// Removes a whole-number field that must not be negative (absent or null: `None`).
pub fn take_count(object: &mut Object, key: &str, path: &str) -> Result<Option<u64>, String> {
    match take(object, key) {
        None => Ok(None),
        Some(value) => value
            .as_u64()
            .map(Some)
            .ok_or_else(|| expected(&field(path, key), "a whole number ≥ 0", &value)),
    }
}

/// A value as text: strings as they are, anything else as compact JSON.
pub fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// Puts `value` back under `key` unless it is empty (an empty object).
pub fn keep_if_nonempty(object: &mut Object, key: &str, value: Object) {
    if !value.is_empty() {
        object.insert(key.to_string(), Value::Object(value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn errors_name_the_field_and_what_was_found() {
        let mut object = into_object(json!({"a": 1, "b": null, "c": "x"}), "").unwrap();
        assert_eq!(
            take_string(&mut object, "a", "messages[2]"),
            Err("messages[2].a: expected a string, found a number".into())
        );
        assert_eq!(take_string(&mut object, "b", ""), Ok(None));
        assert_eq!(
            take_required(&mut object, "z", "info"),
            Err("info: no `z` field".into())
        );
        assert_eq!(take_string(&mut object, "c", ""), Ok(Some("x".into())));
        assert!(object.is_empty());
    }
}
