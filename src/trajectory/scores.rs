//! Outcome rewards, per-step process scores and error labels.

use super::ErrorKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// The outcome reward (ORM) of a trajectory, with its named components.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Reward {
    /// The scalar reward the trainer uses.
    pub total: f64,
    /// Named parts of the total, e.g. `correct`, `format`, `length`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub components: BTreeMap<String, f64>,
    /// The weight each component was scored with (its part is weight × score), where the
    /// scorer recorded it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub weights: BTreeMap<String, f64>,
    /// The verifier's verdict, where one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed: Option<bool>,
}

impl Reward {
    /// A reward with only a total.
    pub fn scalar(total: f64) -> Self {
        Self {
            total,
            ..Self::default()
        }
    }

    /// Pass or fail: the verifier's verdict, else a total of at least 1.
    pub fn is_pass(&self) -> bool {
        self.passed.unwrap_or(self.total >= 1.0 - 1e-9)
    }
}

/// Who or what produced a process score.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum ScoreSource {
    /// Exact checks of arithmetic claims and tool use.
    Rule,
    /// Share of policy continuations from this step that reach the right answer.
    MonteCarlo,
    /// A person's rating (PRM800K).
    Human,
    /// A process reward model.
    Model,
    /// Any other named source.
    Other(String),
}

impl ScoreSource {
    /// The source's name as stored and shown.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Rule => "rule",
            Self::MonteCarlo => "monte_carlo",
            Self::Human => "human",
            Self::Model => "model",
            Self::Other(name) => name,
        }
    }
}

impl From<String> for ScoreSource {
    fn from(name: String) -> Self {
        match name.as_str() {
            "rule" => Self::Rule,
            "monte_carlo" | "mc" => Self::MonteCarlo,
            "human" => Self::Human,
            "model" => Self::Model,
            _ => Self::Other(name),
        }
    }
}

impl From<ScoreSource> for String {
    fn from(source: ScoreSource) -> Self {
        source.as_str().to_string()
    }
}

impl fmt::Display for ScoreSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A process score (PRM) for one step of a trajectory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepScore {
    /// The step it scores, 0-based (see `Trajectory::steps`).
    pub step: u32,
    /// The score, 0 (wrong) to 1 (right) by convention.
    pub value: f64,
    /// Where the score came from.
    pub source: ScoreSource,
    /// Why, in a few words (e.g. which claim failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Whether a label was confirmed by a person or only suggested by a rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LabelStatus {
    /// Proposed by an automatic analysis; not counted as a confirmed error.
    Suggested,
    /// Set or accepted by a person.
    Confirmed,
}

/// An error label on one step of a trajectory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Label {
    /// The labelled step, 0-based.
    pub step: u32,
    /// The kind of error.
    pub kind: ErrorKind,
    /// Suggested or confirmed.
    pub status: LabelStatus,
    /// A free note by the annotator, or the evidence behind a suggestion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Who set it: a user name, or the rule that suggested it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// When it was set, in milliseconds since the Unix epoch.
    pub time: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pass_follows_the_verdict_then_the_total() {
        assert!(Reward::scalar(1.0).is_pass());
        assert!(!Reward::scalar(0.5).is_pass());
        let verdict = Reward {
            total: 0.2,
            passed: Some(true),
            ..Reward::default()
        };
        assert!(verdict.is_pass());
    }
}
