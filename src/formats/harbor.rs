//! Harbor's trial folders around an ATIF trajectory: `<trial>/agent/trajectory.json` with
//! `<trial>/result.json` beside its folder (`TrialResult`: `verifier_result.rewards`, the task,
//! the agent, timings, `exception_info`), or only `<trial>/verifier/reward.json` (a flat
//! `{name: number}`) or `reward.txt` (one number). A job folder is a folder of trials; its
//! own `result.json`, and every `config.json` and `lock.json`, are Harbor's bookkeeping.

use crate::trajectory::{Reward, StopReason, Trajectory};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// Trajectory `extra` key holding what the trial's `result.json` says besides the reward.
pub const TRIAL: &str = "harbor_trial";

/// What a trial folder says about the trajectory at `path`, when it lies in one.
#[derive(Debug, Default)]
pub struct Trial {
    result: Option<Map<String, Value>>,
    rewards: Option<Map<String, Value>>,
}

impl Trial {
    /// The trial around `path` (`…/agent/trajectory.json`), if there is one.
    pub fn around(path: &Path) -> Option<Self> {
        let agent = path.parent()?;
        if agent.file_name()? != "agent" {
            return None;
        }
        let trial = agent.parent()?;
        let result = read_object(&trial.join("result.json"));
        let rewards = read_object(&trial.join("verifier/reward.json")).or_else(|| {
            let text = std::fs::read_to_string(trial.join("verifier/reward.txt")).ok()?;
            let reward: f64 = text.trim().parse().ok()?;
            let mut rewards = Map::new();
            rewards.insert("reward".into(), json!(reward));
            Some(rewards)
        });
        (result.is_some() || rewards.is_some()).then_some(Self { result, rewards })
    }

    /// Gives the trajectory the trial's reward, outcome, timing and details.
    pub fn apply(&self, trajectory: &mut Trajectory) {
        let rewards = self
            .result
            .as_ref()
            .and_then(|result| result.get("verifier_result"))
            .and_then(|verifier| verifier.get("rewards"))
            .and_then(Value::as_object)
            .or(self.rewards.as_ref());
        if let Some(rewards) = rewards {
            trajectory.reward = reward(rewards);
        }
        let Some(result) = &self.result else {
            return;
        };
        if result
            .get("exception_info")
            .is_some_and(|info| !info.is_null())
        {
            trajectory.stop_reason = StopReason::Error;
        }
        let time = |key: &str| {
            result
                .get(key)
                .and_then(Value::as_str)
                .and_then(|text| chrono::DateTime::parse_from_rfc3339(text).ok())
        };
        if let (Some(start), Some(end)) = (time("started_at"), time("finished_at")) {
            trajectory.timings.started_at = Some(start.timestamp_millis());
            trajectory.timings.total_ms = Some((end - start).num_milliseconds() as f64);
        }
        let mut details = result.clone();
        details.remove("config");
        trajectory
            .extra
            .insert(TRIAL.into(), Value::Object(details));
    }

    /// The task's name and source, for the task the trajectory attempts.
    pub fn task_source(&self) -> Option<String> {
        let result = self.result.as_ref()?;
        result
            .get("source")
            .and_then(Value::as_str)
            .or(result.get("task_name").and_then(Value::as_str))
            .map(str::to_string)
    }
}

/// The reward of a rewards map: its `reward` entry, else its only entry, else the mean; the
/// entries are its components.
fn reward(rewards: &Map<String, Value>) -> Option<Reward> {
    let values: Vec<(String, f64)> = rewards
        .iter()
        .filter_map(|(name, value)| value.as_f64().map(|value| (name.clone(), value)))
        .collect();
    if values.is_empty() {
        return None;
    }
    let total = match rewards.get("reward").and_then(Value::as_f64) {
        Some(total) => total,
        None => values.iter().map(|(_, value)| value).sum::<f64>() / values.len() as f64,
    };
    let mut reward = Reward::scalar(total);
    if values.len() > 1 {
        reward.components.extend(values);
    }
    Some(reward)
}

fn read_object(path: &Path) -> Option<Map<String, Value>> {
    let text = std::fs::read_to_string(path).ok()?;
    match serde_json::from_str(&text).ok()? {
        Value::Object(object) => Some(object),
        _ => None,
    }
}

/// Whether a file is Harbor's bookkeeping in a job or trial folder (its `result.json`,
/// `config.json` or `lock.json`), not records.
pub fn is_bookkeeping(path: &Path) -> bool {
    let name = path
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("");
    if !matches!(name, "result.json" | "lock.json" | "config.json") {
        return false;
    }
    let Some(folder) = path.parent() else {
        return false;
    };
    let is_trial =
        |folder: &Path| folder.join("agent").is_dir() && folder.join("result.json").is_file();
    is_trial(folder)
        || std::fs::read_dir(folder).is_ok_and(|entries| {
            entries
                .filter_map(|entry| entry.ok().map(|entry| entry.path()))
                .any(|child: PathBuf| child.is_dir() && is_trial(&child))
        })
}
