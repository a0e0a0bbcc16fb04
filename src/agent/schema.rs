//! Checking tool-call arguments against a tool's JSON schema: required arguments present,
//! declared types respected, no undeclared arguments where the schema forbids them.
//!
//! Only the top level of `parameters` is checked (what OpenAI tool specs use in practice).

use serde_json::{Map, Value};

/// Why arguments do not fit a tool's schema.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// A required argument is absent.
    #[error("`{tool}` needs the argument `{argument}`")]
    Missing {
        /// The tool.
        tool: String,
        /// The argument.
        argument: String,
    },
    /// An argument has the wrong JSON type.
    #[error("the argument `{argument}` of `{tool}` must be {expected}, not {found}")]
    WrongType {
        /// The tool.
        tool: String,
        /// The argument.
        argument: String,
        /// The type the schema declares.
        expected: String,
        /// The type given.
        found: &'static str,
    },
    /// An argument the schema does not declare (with `additionalProperties: false`).
    #[error("`{tool}` has no argument `{argument}` (it takes: {known})")]
    Unexpected {
        /// The tool.
        tool: String,
        /// The argument.
        argument: String,
        /// The declared arguments.
        known: String,
    },
}

/// The JSON type name of a value, as JSON schema spells it.
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(number) if number.is_i64() || number.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn fits(value: &Value, expected: &str) -> bool {
    let found = type_name(value);
    found == expected
        || (expected == "number" && found == "integer")
        || (expected == "integer" && value.as_f64().is_some_and(|x| x.fract() == 0.0))
}

/// Checks `arguments` against the `parameters` schema of `tool`.
pub fn check_arguments(
    tool: &str,
    parameters: &Value,
    arguments: &Map<String, Value>,
) -> Result<(), SchemaError> {
    let properties = parameters.get("properties").and_then(Value::as_object);
    let required = parameters
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str);
    for argument in required {
        if !arguments.contains_key(argument) {
            return Err(SchemaError::Missing {
                tool: tool.into(),
                argument: argument.into(),
            });
        }
    }
    let closed = parameters.get("additionalProperties") == Some(&Value::Bool(false));
    for (argument, value) in arguments {
        let declared = properties.and_then(|properties| properties.get(argument));
        let Some(declared) = declared else {
            if closed {
                let known = properties
                    .map(|properties| properties.keys().cloned().collect::<Vec<_>>().join(", "))
                    .unwrap_or_default();
                return Err(SchemaError::Unexpected {
                    tool: tool.into(),
                    argument: argument.clone(),
                    known,
                });
            }
            continue;
        };
        let expected: Vec<&str> = match declared.get("type") {
            Some(Value::String(name)) => vec![name.as_str()],
            Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
            _ => continue,
        };
        if !expected.iter().any(|name| fits(value, name)) {
            return Err(SchemaError::WrongType {
                tool: tool.into(),
                argument: argument.clone(),
                expected: expected.join(" or "),
                found: type_name(value),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn required_types_and_closed_schemas() {
        let schema = json!({
            "type": "object",
            "properties": {"query": {"type": "string"}, "k": {"type": "integer"}},
            "required": ["query"],
            "additionalProperties": false
        });
        let args = |value: Value| value.as_object().cloned().unwrap_or_default();
        assert!(check_arguments("search", &schema, &args(json!({"query": "x", "k": 3}))).is_ok());
        let missing = check_arguments("search", &schema, &args(json!({"k": 3})));
        assert_eq!(
            missing.unwrap_err().to_string(),
            "`search` needs the argument `query`"
        );
        let wrong = check_arguments("search", &schema, &args(json!({"query": "x", "k": "3"})));
        assert!(
            wrong
                .unwrap_err()
                .to_string()
                .contains("must be integer, not string")
        );
        let extra = check_arguments("search", &schema, &args(json!({"query": "x", "n": 1})));
        assert!(extra.unwrap_err().to_string().contains("takes: query, k"));
    }
}
