//! Training metrics written by Rollscope and by other stacks: our `metrics.jsonl`, verl's
//! file logger (`{"step", "data": {…}}` lines), TRL's `trainer_state.json` (`log_history`),
//! and flat JSONL rows (`{"step": N, "metric": value, …}`).

use super::Problem;
use crate::trajectory::MetricsRow;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// Which writer a metrics file comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricsSource {
    /// Rollscope's own rows.
    Rollscope,
    /// verl's file logger.
    Verl,
    /// TRL's `trainer_state.json`.
    TrlTrainerState,
    /// One flat JSON object per line with a `step`.
    Flat,
}

impl MetricsSource {
    /// The source's name as shown.
    pub fn name(self) -> &'static str {
        match self {
            Self::Rollscope => "rollscope",
            Self::Verl => "verl",
            Self::TrlTrainerState => "trl trainer_state.json",
            Self::Flat => "flat JSONL",
        }
    }
}

/// Rows read from a metrics file, and the lines that could not be read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MetricsRead {
    /// The writer recognised, once a row was read.
    pub source: Option<MetricsSource>,
    /// The rows, in file order.
    pub rows: Vec<MetricsRow>,
    /// Bad lines.
    pub problems: Vec<Problem>,
}

/// Reads a whole metrics file. `run` names rows whose file does not name a run.
pub fn read_metrics(path: &Path, run: &str) -> std::io::Result<MetricsRead> {
    let text = std::fs::read_to_string(path)?;
    Ok(parse_metrics(&text, path, run))
}

/// Parses the text of a metrics file read from `path`.
pub fn parse_metrics(text: &str, path: &Path, run: &str) -> MetricsRead {
    if let Ok(Value::Object(state)) = serde_json::from_str::<Value>(text)
        && let Some(Value::Array(history)) = state.get("log_history")
    {
        let rows = history
            .iter()
            .filter_map(|entry| entry.as_object().and_then(|object| flat_row(object, run)))
            .collect();
        return MetricsRead {
            source: Some(MetricsSource::TrlTrainerState),
            rows,
            problems: Vec::new(),
        };
    }
    let mut read = MetricsRead::default();
    read_lines(text, path, run, 1, &mut read);
    read
}

/// Parses complete JSONL lines (`first_line` is the 1-based number of the first) into `read`.
pub fn read_lines(text: &str, path: &Path, run: &str, first_line: u64, read: &mut MetricsRead) {
    for (offset, line) in text.lines().enumerate() {
        let line_number = first_line + offset as u64;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let problem = |message: String| Problem {
            path: path.to_path_buf(),
            line: Some(line_number),
            message,
        };
        let object = match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(object)) => object,
            Ok(_) => {
                read.problems
                    .push(problem("a metrics line must be a JSON object".into()));
                continue;
            }
            Err(error) => {
                read.problems
                    .push(problem(format!("not valid JSON: {error}")));
                continue;
            }
        };
        match row_of(&object, run) {
            Some((source, row)) => {
                read.source.get_or_insert(source);
                read.rows.push(row);
            }
            None => read
                .problems
                .push(problem("no `step` number in this metrics line".into())),
        }
    }
}

fn row_of(object: &Map<String, Value>, run: &str) -> Option<(MetricsSource, MetricsRow)> {
    if object.contains_key("values") && object.contains_key("run") {
        let row = serde_json::from_value(Value::Object(object.clone())).ok()?;
        return Some((MetricsSource::Rollscope, row));
    }
    if let Some(Value::Object(data)) = object.get("data") {
        let step = object.get("step")?.as_u64()?;
        return Some((
            MetricsSource::Verl,
            MetricsRow {
                run: run.to_string(),
                step,
                time: 0,
                values: numbers(data),
            },
        ));
    }
    flat_row(object, run).map(|row| (MetricsSource::Flat, row))
}

fn flat_row(object: &Map<String, Value>, run: &str) -> Option<MetricsRow> {
    let step = object
        .get("step")
        .or_else(|| object.get("global_step"))?
        .as_f64()? as u64;
    let mut values = numbers(object);
    values.remove("step");
    values.remove("global_step");
    Some(MetricsRow {
        run: run.to_string(),
        step,
        time: 0,
        values,
    })
}

fn numbers(object: &Map<String, Value>) -> BTreeMap<String, f64> {
    object
        .iter()
        .filter_map(|(name, value)| value.as_f64().map(|number| (name.clone(), number)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_text(name: &str, text: &str) -> MetricsRead {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        read_metrics(&path, "external").unwrap()
    }

    #[test]
    fn verl_file_logger_lines() {
        let read = read_text(
            "verl.jsonl",
            "{\"step\": 1, \"data\": {\"critic/score/mean\": 0.25, \"actor/kl_loss\": 0.001, \"note\": \"x\"}}\n\
             {\"step\": 2, \"data\": {\"critic/score/mean\": 0.5}}\n",
        );
        assert_eq!(read.source, Some(MetricsSource::Verl));
        assert_eq!(read.rows.len(), 2);
        assert_eq!(read.rows[0].get("critic/score/mean"), Some(0.25));
        assert_eq!(read.rows[0].values.len(), 2, "strings are not metrics");
        assert_eq!(read.rows[1].step, 2);
    }

    #[test]
    fn trl_trainer_state_log_history() {
        let read = read_text(
            "trainer_state.json",
            r#"{"global_step": 2, "log_history": [
                {"step": 1, "loss": 0.5, "reward": 0.1, "kl": 0.0, "epoch": 0.1},
                {"step": 2, "loss": 0.4, "reward": 0.3, "kl": 0.02, "epoch": 0.2}]}"#,
        );
        assert_eq!(read.source, Some(MetricsSource::TrlTrainerState));
        assert_eq!(read.rows[1].get("reward"), Some(0.3));
        assert_eq!(read.rows[1].step, 2);
    }

    #[test]
    fn our_rows_and_bad_lines() {
        let row = MetricsRow {
            run: "grpo-0001".into(),
            step: 3,
            time: 5,
            values: [("reward".to_string(), 0.75)].into(),
        };
        let text = format!(
            "{}\nnot json\n[1]\n{{\"loss\": 1}}\n",
            serde_json::to_string(&row).unwrap()
        );
        let read = read_text("metrics.jsonl", &text);
        assert_eq!(read.source, Some(MetricsSource::Rollscope));
        assert_eq!(read.rows, vec![row]);
        let lines: Vec<_> = read.problems.iter().map(|p| p.line.unwrap()).collect();
        assert_eq!(lines, vec![2, 3, 4]);
    }
}
