//! The data model of agentic RL: tasks, trajectories, their scores and labels, runs and metrics.
//!
//! Plain serde types and nothing else: this module knows nothing of storage, models or UI.

mod error_kind;
mod fork;
mod id;
mod message;
pub mod metric;
mod run;
mod run_live;
mod scores;
mod task;
mod title;
mod trace;
mod traj;

pub use error_kind::{ErrorKind, KindKey};
pub use fork::{ForkBranch, ForkNode, ForkOrigin, MessageEdit, PrefixKind};
pub use id::TrajectoryId;
pub use message::{ArgumentsEncoding, Message, Role, Span, ToolCall};
pub use run::{CODE_VERSION, MetricsRow, RunInfo, RunKind, RunStatus};
pub use run_live::{MainJobStage, Phase, RunActivity, RunProcess, RunRequest};
pub use scores::{Label, LabelStatus, Reward, ScoreSource, StepScore};
pub use task::Task;
pub use title::is_import_digest;
pub use trace::TokenTrace;
pub use traj::{StepLocation, StopReason, Timings, Trajectory};

/// Milliseconds since the Unix epoch, the time stamp used across the data model.
pub fn now_millis() -> i64 {
    chrono::Utc::now().timestamp_millis()
}
