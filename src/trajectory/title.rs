//! A trajectory's title: the name its record gives what it attempts (a SWE-bench instance, a
//! tau-bench task, an Inspect sample, an issue), which tells apart trajectories whose imported
//! task ids are only digests.

use super::Trajectory;
use serde_json::Value;

impl Trajectory {
    /// The name the record gives the task: `instance_id` (SWE-bench runs of mini-swe-agent and
    /// OpenHands), the problem statement's id in a SWE-agent replay config, an OpenHands
    /// resolver's issue (`owner/repo#5 Add MIT license`), tau-bench's `task_id` (`task 3`), an
    /// Inspect sample's id (with its epoch past the first); none when the record names none.
    pub fn record_title(&self) -> Option<String> {
        let extra = &self.extra;
        if let Some(id) = extra.get("instance_id").and_then(Value::as_str) {
            return Some(id.to_string());
        }
        let replay = match extra.get("replay_config") {
            Some(Value::String(text)) => serde_json::from_str::<Value>(text).ok(),
            other => other.cloned(),
        };
        if let Some(id) = replay
            .as_ref()
            .and_then(|config| config.pointer("/problem_statement/id"))
            .and_then(Value::as_str)
        {
            return Some(id.to_string());
        }
        if let Some(issue) = extra.get("issue") {
            let text = |key: &str| issue.get(key).and_then(Value::as_str).unwrap_or("");
            let number = issue.get("number").and_then(Value::as_u64);
            let title = text("title");
            if !title.is_empty() {
                let place = match number {
                    Some(number) => format!("{}/{}#{number} ", text("owner"), text("repo")),
                    None => String::new(),
                };
                return Some(format!("{place}{title}"));
            }
        }
        if let Some(id) = extra.get("task_id").and_then(plain) {
            return Some(format!("task {id}"));
        }
        if self.source_format == "inspect"
            && let Some(id) = extra.get("id").and_then(plain)
        {
            let epoch = extra.get("epoch").and_then(Value::as_u64).unwrap_or(1);
            return Some(match epoch {
                0 | 1 => id,
                epoch => format!("{id} epoch {epoch}"),
            });
        }
        None
    }

    /// What a header names the task by: where the task id is an import's digest, the
    /// record's title, else the first line of the first user message (60 characters at most);
    /// otherwise the task id (`no task` without one).
    pub fn task_name(&self) -> String {
        let id = self.task_id.as_deref().unwrap_or("no task");
        if !is_import_digest(id, &self.source_format) {
            return id.to_string();
        }
        if let Some(title) = self.record_title() {
            return title;
        }
        self.messages
            .iter()
            .find(|message| message.role == super::Role::User)
            .and_then(|message| message.content.lines().find(|line| !line.trim().is_empty()))
            .map_or_else(
                || id.to_string(),
                |line| crate::text::clip(line.trim(), 60).into_owned(),
            )
    }
}

/// Whether a task id is an import's digest of the prompt (`swe-agent-f18ffabfdaf9`: the
/// format's name and 12 hex digits), which names nothing a reader knows.
pub fn is_import_digest(task_id: &str, source_format: &str) -> bool {
    task_id
        .strip_prefix(source_format)
        .and_then(|rest| rest.strip_prefix('-'))
        .is_some_and(|rest| rest.len() == 12 && rest.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A string or a number as text.
fn plain(value: &Value) -> Option<String> {
    match value {
        Value::String(text) if !text.is_empty() => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::{Message, TrajectoryId};
    use serde_json::json;

    fn imported(format: &str, extra: Value) -> Trajectory {
        let mut trajectory = Trajectory::new(
            TrajectoryId(1),
            vec![Message::user(
                "\n  Fix the parser.\nIt fails on empty input.",
            )],
        );
        trajectory.source_format = format.into();
        trajectory.task_id = Some(format!("{format}-0123456789ab"));
        if let Value::Object(extra) = extra {
            trajectory.extra = extra;
        }
        trajectory
    }

    #[test]
    fn records_name_their_tasks() {
        let cases = [
            (
                "mini-swe-agent",
                json!({"instance_id": "sqlfluff__sqlfluff-2419"}),
                "sqlfluff__sqlfluff-2419",
            ),
            (
                "swe-agent",
                json!({"replay_config": "{\"problem_statement\": {\"id\": \"repo-i1\"}}"}),
                "repo-i1",
            ),
            (
                "openhands",
                json!({"issue": {"owner": "neubig", "repo": "pr-viewer", "number": 5, "title": "Add MIT license"}}),
                "neubig/pr-viewer#5 Add MIT license",
            ),
            ("tau-bench", json!({"task_id": 3, "trial": 0}), "task 3"),
            (
                "inspect",
                json!({"id": "guess", "epoch": 2}),
                "guess epoch 2",
            ),
            ("swe-agent", json!({}), "Fix the parser."),
        ];
        for (format, extra, name) in cases {
            assert_eq!(imported(format, extra).task_name(), name, "{format}");
        }
    }

    #[test]
    fn task_ids_that_mean_something_stay() {
        let mut trajectory = imported("tau-bench", json!({"task_id": 3}));
        trajectory.task_id = Some("gsm8k-test-0042".into());
        assert_eq!(trajectory.task_name(), "gsm8k-test-0042");
        assert!(is_import_digest("swe-agent-f18ffabfdaf9", "swe-agent"));
        assert!(!is_import_digest("swe-agent-f18ffabfdaf", "swe-agent"));
        assert!(!is_import_digest("arith-3-00412", "rollscope"));
    }
}
