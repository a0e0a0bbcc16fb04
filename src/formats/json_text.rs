//! What every JSON reader of the formats shares: the size limit of one record, the
//! byte-order mark, and serde_json's errors in words.

/// The largest JSON line, document or archive member read (512 MiB).
pub const MAX_RECORD_BYTES: usize = 512 << 20;

/// The bytes without a leading UTF-8 byte-order mark.
pub fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// A serde_json error in words, saying when the file looks cut off.
pub fn json_error(error: &serde_json::Error) -> String {
    if error.is_eof() {
        format!("the JSON ends too early (truncated file?): {error}")
    } else {
        format!("not valid JSON: {error}")
    }
}
