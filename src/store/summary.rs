//! The compact summary of a trajectory that lists and filters read instead of the record.

use crate::trajectory::{ErrorKind, LabelStatus, Role, Trajectory, TrajectoryId, is_import_digest};
use serde::{Deserialize, Serialize};

/// How much of the question a summary keeps for display and text search.
const SNIPPET_CHARS: usize = 96;

/// What the list shows of a trajectory, small enough to hold 100k in memory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The trajectory's id.
    pub id: TrajectoryId,
    /// Its place in insertion order.
    pub seq: u64,
    /// The task it attempts.
    pub task_id: String,
    /// The start of the task's question, after the title its record gives the task (an
    /// instance or task id) where it gives one.
    pub question: String,
    /// The run that produced it.
    pub run: String,
    /// The policy version that sampled it.
    pub step: Option<u64>,
    /// Its GRPO group.
    pub group: Option<u64>,
    /// Its index in the group.
    pub sample: Option<u32>,
    /// Outcome reward.
    pub reward: Option<f64>,
    /// Pass or fail.
    pub passed: Option<bool>,
    /// GRPO advantage.
    pub advantage: Option<f64>,
    /// Number of assistant turns.
    pub turns: u32,
    /// Number of tool calls.
    pub tool_calls: u32,
    /// Number of failed tool calls.
    pub tool_errors: u32,
    /// Lowest process score.
    pub prm_min: Option<f64>,
    /// Bit set of error kinds with a confirmed label (bit = `ErrorKind::index`).
    pub confirmed: u16,
    /// Bit set of error kinds with only a suggested label.
    pub suggested: u16,
    /// Why it ended.
    pub stop: String,
    /// The format it came from.
    pub source_format: String,
    /// Number of tokens in its trace (0 without one).
    pub tokens: u32,
}

impl Summary {
    /// Summarises a trajectory stored at `seq`.
    pub fn of(trajectory: &Trajectory, seq: u64) -> Self {
        let first_user = trajectory
            .messages
            .iter()
            .find(|message| message.role == Role::User)
            .map_or("", |message| message.content.as_str());
        let question = match trajectory.record_title() {
            Some(title) => snippet(&format!("{title} · {first_user}")),
            None => snippet(first_user),
        };
        let mut confirmed = 0u16;
        let mut suggested = 0u16;
        for label in &trajectory.labels {
            let bit = 1 << label.kind.index();
            match label.status {
                LabelStatus::Confirmed => confirmed |= bit,
                LabelStatus::Suggested => suggested |= bit,
            }
        }
        Self {
            id: trajectory.id,
            seq,
            task_id: trajectory.task_id.clone().unwrap_or_default(),
            question,
            run: trajectory.run.clone().unwrap_or_default(),
            step: trajectory.policy_version,
            group: trajectory.group,
            sample: trajectory.sample,
            reward: trajectory.reward.as_ref().map(|reward| reward.total),
            passed: trajectory.passed(),
            advantage: trajectory.advantage,
            turns: trajectory.turn_count() as u32,
            tool_calls: trajectory.tool_call_count() as u32,
            tool_errors: trajectory.tool_error_count() as u32,
            prm_min: trajectory.prm_min(),
            confirmed,
            suggested: suggested & !confirmed,
            stop: trajectory.stop_reason.to_string(),
            source_format: trajectory.source_format.clone(),
            tokens: trajectory
                .token_trace
                .as_ref()
                .map_or(0, |trace| trace.len() as u32),
        }
    }

    /// What the list names the task by: its id, unless the id is an import's digest
    /// (`swe-agent-f18ffabfdaf9`, which tells nothing), then the question (after the record's
    /// title, where it gives one).
    pub fn task_name(&self) -> &str {
        if is_import_digest(&self.task_id, &self.source_format) && !self.question.is_empty() {
            &self.question
        } else {
            &self.task_id
        }
    }

    /// Error kinds with a confirmed label.
    pub fn confirmed_kinds(&self) -> impl Iterator<Item = ErrorKind> + '_ {
        ErrorKind::EVERY
            .into_iter()
            .filter(|kind| self.confirmed & (1 << kind.index()) != 0)
    }

    /// Error kinds with only a suggested label.
    pub fn suggested_kinds(&self) -> impl Iterator<Item = ErrorKind> + '_ {
        ErrorKind::EVERY
            .into_iter()
            .filter(|kind| self.suggested & (1 << kind.index()) != 0)
    }

    /// Whether it failed and no person has labelled it yet: the badcase queue.
    pub fn is_unlabelled_failure(&self) -> bool {
        Self::unlabelled_failure(self.passed, self.confirmed != 0)
    }

    /// The badcase queue's rule: failed, and no confirmed label.
    pub(super) fn unlabelled_failure(passed: Option<bool>, confirmed: bool) -> bool {
        passed == Some(false) && !confirmed
    }

    /// Encodes for the store.
    pub fn to_bytes(&self) -> Vec<u8> {
        postcard::to_allocvec(self).unwrap_or_default()
    }

    /// Decodes from the store.
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        postcard::from_bytes(bytes).ok()
    }
}

fn snippet(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(SNIPPET_CHARS)
        .collect();
    flat.trim().to_string()
}

/// The rows of a listing, by id, and which of them are unlabelled failures.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListedIds {
    /// Every row's trajectory, in the query's order (its offset and limit applied).
    pub ids: Vec<TrajectoryId>,
    /// Rows (positions in `ids`) that failed and carry no confirmed label, in order.
    pub unlabelled_failures: Vec<u32>,
}

impl ListedIds {
    /// The listing of these summaries, in their order.
    pub fn of(summaries: &[Summary]) -> Self {
        Self::from_rows(
            summaries
                .iter()
                .map(|summary| (summary.id, summary.is_unlabelled_failure())),
        )
    }

    /// The listing of these rows (id, whether an unlabelled failure), in their order.
    pub fn from_rows(rows: impl IntoIterator<Item = (TrajectoryId, bool)>) -> Self {
        let mut listed = Self::default();
        for (row, (id, unlabelled_failure)) in rows.into_iter().enumerate() {
            listed.ids.push(id);
            if unlabelled_failure {
                listed.unlabelled_failures.push(row as u32);
            }
        }
        listed
    }
}

#[cfg(test)]
mod tests {
    /// The label bit sets grew from `u8` to `u16` for the session kinds; postcard writes a
    /// `u8` as one byte and a `u16` below 128 as the same byte, so stored summaries (whose
    /// sets held the four kinds, at most 15) read unchanged.
    #[test]
    fn label_bit_sets_written_as_u8_read_as_u16() {
        for bits in 0u8..128 {
            let old = postcard::to_allocvec(&bits).unwrap();
            assert_eq!(old, postcard::to_allocvec(&u16::from(bits)).unwrap());
            assert_eq!(postcard::from_bytes::<u16>(&old).unwrap(), u16::from(bits));
        }
    }
}
