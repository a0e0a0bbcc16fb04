//! JSON that is inert in a terminal. serde_json escapes the C0 controls; DEL and the C1
//! controls (U+007F–U+009F: U+009B is a CSI that many terminals obey) it writes as raw UTF-8.
//! In JSON text those bytes can only occur inside strings, so writing them as `\u` escapes
//! is a byte-level rewrite that keeps every value equal: `inert_json` for text,
//! `InertJsonWriter` for JSON streamed out.

use serde::Serialize;
use std::io::Write;

/// `value` as compact JSON, inert in a terminal.
pub fn inert_json(value: &impl Serialize) -> serde_json::Result<String> {
    Ok(text(escape(&serde_json::to_vec(value)?)))
}

/// `value` as indented JSON, inert in a terminal.
pub fn inert_json_pretty(value: &impl Serialize) -> serde_json::Result<String> {
    Ok(text(escape(&serde_json::to_vec_pretty(value)?)))
}

/// Escaped JSON as text: only ASCII escapes replaced whole UTF-8 sequences, so it stays
/// UTF-8.
fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes)
        .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into())
}

/// JSON bytes with DEL and the C1 controls written as `\u` escapes.
fn escape(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    while let Some((&byte, tail)) = rest.split_first() {
        match (byte, tail.first()) {
            (0x7f, _) => out.extend_from_slice(b"\\u007f"),
            (0xc2, Some(&next @ 0x80..=0x9f)) => {
                out.extend_from_slice(format!("\\u00{next:02x}").as_bytes());
                rest = &tail[1..];
                continue;
            }
            _ => out.push(byte),
        }
        rest = tail;
    }
    out
}

/// A writer of JSON text that escapes DEL and the C1 controls as `inert_json` does, for
/// records streamed to a terminal (a lead byte split across writes is held back).
pub struct InertJsonWriter<W: Write> {
    inner: W,
    held: Option<u8>,
}

impl<W: Write> InertJsonWriter<W> {
    /// Wraps `inner`.
    pub fn new(inner: W) -> Self {
        Self { inner, held: None }
    }
}

impl<W: Write> Write for InertJsonWriter<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let mut joined = Vec::with_capacity(bytes.len() + 1);
        joined.extend(self.held.take());
        joined.extend_from_slice(bytes);
        if joined.last() == Some(&0xc2) {
            self.held = joined.pop();
        }
        self.inner.write_all(&escape(&joined))?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if let Some(byte) = self.held.take() {
            self.inner.write_all(&[byte])?;
        }
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c1_controls_and_del_are_escaped_and_values_stay_equal() {
        let value = serde_json::json!({"text": "a\u{9b}31mb\u{7f}c\u{1b}é\u{85}"});
        let text = inert_json(&value).unwrap();
        assert!(!text.chars().any(|c| c.is_control()), "{text:?}");
        assert!(text.contains("\\u009b") && text.contains("\\u007f") && text.contains("\\u0085"));
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            value
        );
        let mut streamed = InertJsonWriter::new(Vec::new());
        let raw = serde_json::to_vec(&value).unwrap();
        for piece in raw.chunks(1) {
            streamed.write_all(piece).unwrap();
        }
        streamed.flush().unwrap();
        assert_eq!(String::from_utf8(streamed.inner).unwrap(), text);
    }
}
