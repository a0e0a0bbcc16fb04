//! JSON text exactly as Python's `json.dumps` writes it, which is what Hugging Face chat
//! templates get from their `tojson` filter: `", "` and `": "` separators, keys in the order
//! given, no HTML escaping, non-ASCII kept (transformers passes `ensure_ascii=False`).

use serde_json::Value;
use std::fmt::Write;

/// How to write the JSON.
#[derive(Clone, Copy, Debug, Default)]
pub struct DumpOptions {
    /// Pretty-print with this many spaces per level (`indent=` in Python).
    pub indent: Option<usize>,
    /// Sort object keys.
    pub sort_keys: bool,
    /// Escape every non-ASCII character as `\uXXXX`.
    pub ensure_ascii: bool,
}

/// `json.dumps(value, ...)` as Python writes it.
pub fn dumps(value: &Value, options: DumpOptions) -> String {
    let mut out = String::new();
    write_value(&mut out, value, options, 0);
    out
}

fn newline(out: &mut String, options: DumpOptions, depth: usize) {
    if let Some(indent) = options.indent {
        out.push('\n');
        out.extend(std::iter::repeat_n(' ', indent * depth));
    }
}

fn item_separator(options: DumpOptions) -> &'static str {
    if options.indent.is_some() { "," } else { ", " }
}

fn write_value(out: &mut String, value: &Value, options: DumpOptions, depth: usize) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(flag) => out.push_str(if *flag { "true" } else { "false" }),
        Value::Number(number) => write_number(out, number),
        Value::String(text) => write_string(out, text, options.ensure_ascii),
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push_str(item_separator(options));
                }
                newline(out, options, depth + 1);
                write_value(out, item, options, depth + 1);
            }
            newline(out, options, depth);
            out.push(']');
        }
        Value::Object(map) if map.is_empty() => out.push_str("{}"),
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            if options.sort_keys {
                entries.sort_by(|a, b| a.0.cmp(b.0));
            }
            out.push('{');
            for (index, (key, item)) in entries.into_iter().enumerate() {
                if index > 0 {
                    out.push_str(item_separator(options));
                }
                newline(out, options, depth + 1);
                write_string(out, key, options.ensure_ascii);
                out.push_str(": ");
                write_value(out, item, options, depth + 1);
            }
            newline(out, options, depth);
            out.push('}');
        }
    }
}

/// Integers as they are; floats as Python's `repr` (`1.0`, `1e-05`, `1e+16`).
fn write_number(out: &mut String, number: &serde_json::Number) {
    if number.is_i64() || number.is_u64() {
        out.push_str(&number.to_string());
        return;
    }
    let Some(float) = number.as_f64() else {
        out.push_str(&number.to_string());
        return;
    };
    if !float.is_finite() {
        out.push_str(if float.is_nan() {
            "NaN"
        } else if float > 0.0 {
            "Infinity"
        } else {
            "-Infinity"
        });
        return;
    }
    let magnitude = float.abs();
    if magnitude != 0.0 && !(1e-4..1e16).contains(&magnitude) {
        let text = format!("{float:e}");
        let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
        let (sign, digits) = match exponent.strip_prefix('-') {
            Some(digits) => ('-', digits),
            None => ('+', exponent),
        };
        let _ = write!(out, "{mantissa}e{sign}{digits:0>2}");
    } else if float.fract() == 0.0 {
        let _ = write!(out, "{float:.1}");
    } else {
        let _ = write!(out, "{float}");
    }
}

fn write_string(out: &mut String, text: &str, ensure_ascii: bool) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (ensure_ascii && !c.is_ascii()) => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn matches_python_defaults() {
        let value = json!({"b": [1, 2.0, 1e-5, 3.25], "a": "x<y>&'é\n", "c": {}, "d": null});
        assert_eq!(
            dumps(&value, DumpOptions::default()),
            r#"{"b": [1, 2.0, 1e-05, 3.25], "a": "x<y>&'é\n", "c": {}, "d": null}"#
        );
    }

    #[test]
    fn indent_and_sorting_follow_python() {
        let value = json!({"b": [1], "a": true});
        let options = DumpOptions {
            indent: Some(2),
            sort_keys: true,
            ensure_ascii: true,
        };
        assert_eq!(
            dumps(&value, options),
            "{\n  \"a\": true,\n  \"b\": [\n    1\n  ]\n}"
        );
        assert_eq!(dumps(&json!("é"), options), "\"\\u00e9\"");
    }
}
