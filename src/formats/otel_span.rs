//! One OpenTelemetry span as the OTLP reader decodes it and the GenAI reader reads it.

use serde_json::{Map, Value};

/// A span, its attributes decoded.
#[derive(Clone, Debug, Default)]
pub struct Span {
    /// Its name.
    pub name: String,
    /// Its id (hex).
    pub span_id: String,
    /// Its parent's id; empty for a root span.
    pub parent: String,
    /// Start and end, in nanoseconds since the Unix epoch.
    pub start_ns: u64,
    /// End, in nanoseconds since the Unix epoch.
    pub end_ns: u64,
    /// Its attributes and its resource's, decoded (the span's win).
    pub attributes: Map<String, Value>,
    /// Its events (and log records naming it): name and decoded attributes or body.
    pub events: Vec<(String, Value)>,
    /// Its status, when not unset.
    pub status: Option<Value>,
}
