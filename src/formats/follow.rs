//! Following a metrics file while another process writes it. JSONL files (ours, verl's file
//! logger, flat rows) grow by whole lines; TRL's `trainer_state.json` is rewritten whole at
//! every save. Each poll returns the rows that are new since the last one, every row counted
//! by its place in the file, not its step (TRL's eval rows share the step of a training
//! row). A rewrite is told from an append by content (the part already read must be
//! unchanged), not by length, so a rewrite to the same length is seen too; a file whose
//! length and modification time have not changed since well before the last look is not
//! read again.

use super::Problem;
use super::metrics::{MetricsRead, MetricsSource, parse_metrics, read_lines};
use crate::trajectory::MetricsRow;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How long after its last change a file is trusted not to change without its length or
/// modification time changing (file systems stamp times coarsely).
const SETTLED: Duration = Duration::from_secs(2);

/// What one poll found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MetricsUpdate {
    /// Rows new since the last poll, in file order (all of them on the first poll, and after
    /// a rewrite).
    pub rows: Vec<MetricsRow>,
    /// Lines of the new part that could not be read.
    pub problems: Vec<Problem>,
    /// The file was rewritten with other content than the rows already returned: `rows`
    /// are all of its rows, from the start.
    pub rewritten: bool,
}

/// A metrics file being followed: poll it for new rows.
#[derive(Debug)]
pub struct MetricsFollower {
    path: PathBuf,
    run: String,
    whole_file: bool,
    source: Option<MetricsSource>,
    /// Length and modification time at the last read, and when that read began.
    stamp: Option<(u64, Option<SystemTime>, SystemTime)>,
    /// Whole files: the rows returned so far.
    rows: Vec<MetricsRow>,
    /// JSONL: bytes read (whole lines), their hash, and the number of the next line.
    consumed: usize,
    consumed_hash: u64,
    next_line: u64,
    polled: bool,
}

impl MetricsFollower {
    /// Follows `path`; `run` names rows whose file does not name a run. A `.json` file is
    /// read whole each time it changes, anything else as JSONL.
    pub fn new(path: &Path, run: &str) -> Self {
        Self {
            path: path.to_path_buf(),
            run: run.to_string(),
            whole_file: path.extension().is_some_and(|ext| ext == "json"),
            source: None,
            stamp: None,
            rows: Vec::new(),
            consumed: 0,
            consumed_hash: hash(&[]),
            next_line: 1,
            polled: false,
        }
    }

    /// The writer recognised, once a row was read.
    pub fn source(&self) -> Option<MetricsSource> {
        self.source
    }

    /// The rows written since the last poll.
    pub fn poll(&mut self) -> std::io::Result<MetricsUpdate> {
        let started = SystemTime::now();
        let meta = std::fs::metadata(&self.path)?;
        let (len, modified) = (meta.len(), meta.modified().ok());
        let settled = self
            .stamp
            .is_some_and(|(last_len, last_modified, read_at)| {
                last_len == len
                    && last_modified == modified
                    && modified.is_some_and(|time| time + SETTLED <= read_at)
            });
        if settled {
            return Ok(MetricsUpdate::default());
        }
        let bytes = std::fs::read(&self.path)?;
        self.stamp = Some((len, modified, started));
        let update = if self.whole_file {
            self.read_whole(&bytes)
        } else {
            self.read_appended(&bytes)
        };
        self.polled = true;
        Ok(update)
    }

    fn read_whole(&mut self, bytes: &[u8]) -> MetricsUpdate {
        let text = String::from_utf8_lossy(bytes);
        if serde_json::from_str::<serde_json::Value>(&text).is_err() && !text.trim().is_empty() {
            self.stamp = None;
            return MetricsUpdate::default();
        }
        let read = parse_metrics(&text, &self.path, &self.run);
        self.source = self.source.or(read.source);
        let appended = read.rows.starts_with(&self.rows);
        let fresh = if appended {
            read.rows[self.rows.len()..].to_vec()
        } else {
            read.rows.clone()
        };
        let changed = !appended || !fresh.is_empty();
        self.rows = read.rows;
        MetricsUpdate {
            rows: fresh,
            problems: if changed || !self.polled {
                read.problems
            } else {
                Vec::new()
            },
            rewritten: !appended,
        }
    }

    fn read_appended(&mut self, bytes: &[u8]) -> MetricsUpdate {
        let complete = bytes
            .iter()
            .rposition(|&byte| byte == b'\n')
            .map_or(0, |end| end + 1);
        let appended =
            complete >= self.consumed && hash(&bytes[..self.consumed]) == self.consumed_hash;
        if !appended {
            self.consumed = 0;
            self.next_line = 1;
        }
        let added = String::from_utf8_lossy(&bytes[self.consumed..complete]);
        let mut read = MetricsRead::default();
        read_lines(&added, &self.path, &self.run, self.next_line, &mut read);
        self.source = self.source.or(read.source);
        self.next_line += added.lines().count() as u64;
        self.consumed = complete;
        self.consumed_hash = hash(&bytes[..complete]);
        MetricsUpdate {
            rows: read.rows,
            problems: read.problems,
            rewritten: !appended,
        }
    }
}

fn hash(bytes: &[u8]) -> u64 {
    let mut hasher = DefaultHasher::new();
    bytes.hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(step: u64, value: f64) -> String {
        format!("{{\"step\": {step}, \"data\": {{\"reward\": {value}}}}}\n")
    }

    #[test]
    fn appended_lines_partial_lines_and_rewrites_of_a_jsonl_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("metrics.jsonl");
        std::fs::write(&path, row(1, 0.5)).unwrap();
        let mut follower = MetricsFollower::new(&path, "external");
        let first = follower.poll().unwrap();
        assert_eq!(first.rows.len(), 1);
        assert!(!first.rewritten);
        assert_eq!(follower.source(), Some(MetricsSource::Verl));
        let half = format!("{}{}{{\"step\": 3", row(1, 0.5), row(2, 0.25));
        std::fs::write(&path, &half).unwrap();
        let next = follower.poll().unwrap();
        assert_eq!(next.rows.iter().map(|r| r.step).collect::<Vec<_>>(), [2]);
        std::fs::write(&path, format!("{half}, \"data\": {{}}}}\nnot json\n")).unwrap();
        let next = follower.poll().unwrap();
        assert_eq!(next.rows[0].step, 3);
        assert_eq!(next.problems[0].line, Some(4));
        std::fs::write(&path, format!("{}{}", row(1, 0.7), row(2, 0.25))).unwrap();
        let rewritten = follower.poll().unwrap();
        assert!(rewritten.rewritten, "a rewrite shorter than before");
        assert_eq!(rewritten.rows.len(), 2);
        std::fs::write(&path, format!("{}{}", row(1, 0.9), row(2, 0.25))).unwrap();
        let same_length = follower.poll().unwrap();
        assert!(same_length.rewritten, "a rewrite of the same length");
        assert_eq!(same_length.rows[0].get("reward"), Some(0.9));
        assert_eq!(follower.poll().unwrap(), MetricsUpdate::default());
    }

    #[test]
    fn a_half_written_json_file_is_read_again_once_it_is_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trainer_state.json");
        let state = r#"{"log_history": [{"step": 1, "loss": 0.5}, {"step": 1, "eval_loss": 0.4}]}"#;
        std::fs::write(&path, &state[..30]).unwrap();
        let mut follower = MetricsFollower::new(&path, "external");
        assert_eq!(follower.poll().unwrap().rows, []);
        std::fs::write(&path, state).unwrap();
        let whole = follower.poll().unwrap();
        assert_eq!(whole.rows.len(), 2, "both rows of step 1");
        assert_eq!(follower.source(), Some(MetricsSource::TrlTrainerState));
    }
}
