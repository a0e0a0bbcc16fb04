//! OpenTelemetry traces as OTLP JSON: one `{resourceSpans: [{resource, scopeSpans: [{scope,
//! spans}]}], resourceLogs}` document, or JSONL of them (what a collector's `file` exporter
//! writes, one export request per line). Spans are gathered across the whole file by
//! `traceId`, since one trace's spans arrive in several requests; each trace that holds a
//! GenAI span becomes one trajectory (`otel_genai` reads its messages). Attribute values are
//! decoded from OTLP's typed form (`stringValue`, `intValue` as a string, `arrayValue`,
//! `kvlistValue`, …); log records with a `spanId` (the older event conventions) join their
//! span's events. While a file is still being written, a trace whose root span has not
//! arrived yet is left for the next read (`ImportOptions::growing`).

use super::context::Context;
use super::document::{read_bytes, read_document};
use super::intake::Intake;
use super::json_text::json_error;
use super::otel_genai;
use super::otel_span::Span;
use super::{ImportError, ImportReport};
use serde_json::{Map, Value};

/// Reads an OTLP JSON file (one document or JSONL).
pub fn read(
    context: &mut Context<'_>,
    intake: &mut Intake<'_, '_>,
    growing: bool,
) -> Result<ImportReport, ImportError> {
    let path = context.path;
    let mut report = ImportReport::default();
    let mut traces: Vec<(String, Vec<Span>)> = Vec::new();
    let mut logs = Vec::new();
    for (line, document) in documents(path, &mut report)? {
        let Value::Object(mut document) = document else {
            report.problem(path, line, "expected an OTLP JSON object".into());
            continue;
        };
        if let Some(Value::Array(resources)) = document.remove("resourceSpans") {
            for resource in resources {
                gather_spans(resource, &mut traces);
            }
        }
        if let Some(Value::Array(resources)) = document.remove("resourceLogs") {
            logs.extend(resources);
        }
    }
    attach_logs(logs, &mut traces);
    for (trace_id, mut spans) in traces {
        spans.sort_by_key(|span| (span.start_ns, span.end_ns));
        if growing && !spans.iter().any(|span| span.parent.is_empty()) {
            report.problem(
                path,
                None,
                format!("trace {trace_id}: its root span has not been written yet"),
            );
            continue;
        }
        let source = otel_genai::source_text(&spans);
        let outcome = intake.record(
            source,
            |_| otel_genai::trajectory(context, &trace_id, &spans),
            &mut report,
        )?;
        if let Err(message) = outcome {
            report.problem(path, None, format!("trace {trace_id}: {message}"));
        }
    }
    Ok(report)
}

/// The file's OTLP documents with their lines: one document, or one per JSONL line.
fn documents(
    path: &std::path::Path,
    report: &mut ImportReport,
) -> Result<Vec<(Option<u64>, Value)>, ImportError> {
    let bytes = read_bytes(path)?;
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .collect();
    let one_per_line = lines.len() > 1
        && lines
            .first()
            .is_some_and(|line| serde_json::from_str::<Value>(line).is_ok());
    if !one_per_line {
        return Ok(read_document(path, report)?
            .map(|document| vec![(None, document)])
            .unwrap_or_default());
    }
    let mut documents = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let number = index as u64 + 1;
        match serde_json::from_str(line) {
            Ok(document) => documents.push((Some(number), document)),
            Err(error) => report.problem(path, Some(number), json_error(&error)),
        }
    }
    Ok(documents)
}

/// Adds a `resourceSpans` entry's spans to their traces.
fn gather_spans(resource: Value, traces: &mut Vec<(String, Vec<Span>)>) {
    let resource_attributes = resource
        .get("resource")
        .and_then(|resource| resource.get("attributes"))
        .map(decode_attributes)
        .unwrap_or_default();
    let Some(Value::Array(scopes)) = resource.get("scopeSpans") else {
        return;
    };
    for scope in scopes {
        let Some(Value::Array(spans)) = scope.get("spans") else {
            continue;
        };
        for span in spans {
            let text = |key: &str| span.get(key).and_then(Value::as_str).unwrap_or("");
            let trace_id = text("traceId").to_string();
            let mut attributes = resource_attributes.clone();
            if let Some(own) = span.get("attributes") {
                attributes.extend(decode_attributes(own));
            }
            let events = match span.get("events") {
                Some(Value::Array(events)) => events
                    .iter()
                    .map(|event| {
                        let name = event.get("name").and_then(Value::as_str).unwrap_or("");
                        let attributes = event
                            .get("attributes")
                            .map(decode_attributes)
                            .unwrap_or_default();
                        (name.to_string(), Value::Object(attributes))
                    })
                    .collect(),
                _ => Vec::new(),
            };
            let decoded = Span {
                name: text("name").to_string(),
                span_id: text("spanId").to_string(),
                parent: text("parentSpanId").to_string(),
                start_ns: nanos(span.get("startTimeUnixNano")),
                end_ns: nanos(span.get("endTimeUnixNano")),
                attributes,
                events,
                status: span
                    .get("status")
                    .filter(|status| !status_unset(status))
                    .cloned(),
            };
            match traces.iter_mut().find(|(id, _)| *id == trace_id) {
                Some((_, spans)) => spans.push(decoded),
                None => traces.push((trace_id, vec![decoded])),
            }
        }
    }
}

/// Log records that name a span join its events (body as the event's value).
fn attach_logs(resources: Vec<Value>, traces: &mut [(String, Vec<Span>)]) {
    for resource in resources {
        let Some(Value::Array(scopes)) = resource.get("scopeLogs") else {
            continue;
        };
        for scope in scopes {
            let Some(Value::Array(records)) = scope.get("logRecords") else {
                continue;
            };
            for record in records {
                let text = |key: &str| record.get(key).and_then(Value::as_str).unwrap_or("");
                let Some(span) = traces
                    .iter_mut()
                    .filter(|(id, _)| id == text("traceId"))
                    .flat_map(|(_, spans)| spans.iter_mut())
                    .find(|span| span.span_id == text("spanId"))
                else {
                    continue;
                };
                let body = record.get("body").map(decode_value).unwrap_or(Value::Null);
                span.events.push((text("eventName").to_string(), body));
            }
        }
    }
}

fn status_unset(status: &Value) -> bool {
    matches!(status.get("code"), None | Some(Value::Null))
        || status.get("code") == Some(&Value::from(0))
        || status.get("code").and_then(Value::as_str) == Some("STATUS_CODE_UNSET")
}

/// A time in nanoseconds, written as a string (OTLP JSON's 64-bit integers) or a number.
fn nanos(value: Option<&Value>) -> u64 {
    match value {
        Some(Value::String(text)) => text.parse().unwrap_or(0),
        Some(Value::Number(number)) => number.as_u64().unwrap_or(0),
        _ => 0,
    }
}

/// `[{key, value: {stringValue | intValue | …}}]` as a plain object.
pub fn decode_attributes(attributes: &Value) -> Map<String, Value> {
    let mut decoded = Map::new();
    if let Value::Array(entries) = attributes {
        for entry in entries {
            if let Some(key) = entry.get("key").and_then(Value::as_str) {
                let value = entry.get("value").map(decode_value).unwrap_or(Value::Null);
                decoded.insert(key.to_string(), value);
            }
        }
    }
    decoded
}

/// One OTLP `AnyValue` as plain JSON.
pub fn decode_value(value: &Value) -> Value {
    let Value::Object(object) = value else {
        return value.clone();
    };
    if let Some(text) = object.get("stringValue") {
        return text.clone();
    }
    if let Some(number) = object.get("intValue") {
        return match number {
            Value::String(text) => text
                .parse::<i64>()
                .map(Value::from)
                .unwrap_or_else(|_| number.clone()),
            other => other.clone(),
        };
    }
    for key in ["doubleValue", "boolValue", "bytesValue"] {
        if let Some(inner) = object.get(key) {
            return inner.clone();
        }
    }
    if let Some(array) = object.get("arrayValue") {
        let values = array.get("values").and_then(Value::as_array);
        return Value::Array(values.map_or(Vec::new(), |values| {
            values.iter().map(decode_value).collect()
        }));
    }
    if let Some(list) = object.get("kvlistValue") {
        return Value::Object(
            list.get("values")
                .map(decode_attributes)
                .unwrap_or_default(),
        );
    }
    Value::Null
}
