//! The data model of agentic RL: tasks, trajectories, their scores and labels, runs and metrics.
//!
//! Plain serde types and nothing else: this module knows nothing of storage, models or UI.

mod error_kind;
mod fork;
mod id;
mod loop_config;
mod message;
pub mod metric;
mod rollout_config;
mod run;
mod run_config;
mod run_live;
mod run_settings;
mod scores;
mod task;
mod title;
mod trace;
mod train_config;
mod traj;

pub use error_kind::{ErrorKind, KindKey};
pub use fork::{ForkBranch, ForkNode, ForkOrigin, MessageEdit, PrefixKind};
pub use id::TrajectoryId;
pub use loop_config::{LoopConfig, RepairConfig, RepairScope, SelectionRules};
pub use message::{ArgumentsEncoding, Message, Role, Span, ToolCall};
pub use rollout_config::RolloutConfig;
pub use run::{CODE_VERSION, MetricsRow, RunInfo, RunKind, RunStatus};
pub use run_config::{
    CurriculumConfig, EvalConfig, GrpoRunConfig, ReplayConfig, RunConfig, SftConfig, SftSource,
    TaskConfig,
};
pub use run_live::{MainJobStage, Phase, RunActivity, RunProcess, RunRequest};
pub use run_settings::RunSettings;
pub use scores::{Label, LabelStatus, Reward, ScoreSource, StepScore};
pub use task::Task;
pub use title::is_import_digest;
pub use trace::TokenTrace;
pub use train_config::{
    AdamWConfig, AdvantageScale, GrpoConfig, LoraConfig, LossAggregation, LrSchedule,
    ObjectiveConfig, TrainerConfig,
};
pub use traj::{StepLocation, StopReason, Timings, Trajectory};

/// Milliseconds since the Unix epoch, the time stamp used across the data model.
pub fn now_millis() -> i64 {
    chrono::Utc::now().timestamp_millis()
}
