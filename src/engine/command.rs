//! What the UI (or a CLI command) asks the engine to do: the `Command` channel's messages.

use super::activity::Activity;
use crate::curate::{AuditOptions, ExportRequest, SelectionRules};
use crate::run::RunConfig;
use crate::store::{Filter, SortKey};
use crate::trajectory::{ErrorKind, Label, LabelStatus, MetricsRow, TrajectoryId};
use std::ops::Range;

/// Marks a request so its answer can be matched to it, and answers to older requests dropped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Tag(pub u64);

/// A filter and an order: what a list shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Listing {
    /// Which trajectories.
    pub filter: Filter,
    /// In what order.
    pub sort: SortKey,
    /// Largest first.
    pub descending: bool,
}

/// The trajectories a group view compares.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum GroupKey {
    /// A GRPO group: the samples of one task drawn at the same step of a run.
    Grpo {
        /// The run.
        run: String,
        /// The policy version (training step).
        step: u64,
        /// The group number.
        group: u64,
    },
    /// Every attempt at one task, in any run or file: an Inspect log's epochs, tau-bench's
    /// trials, an evaluation's samples of one prompt.
    Task {
        /// The task's id.
        task: String,
    },
}

/// Most attempts at one task a group view loads.
pub const MOST_TASK_ATTEMPTS: usize = 256;

impl GroupKey {
    /// The group of a trajectory (or summary) with these coordinates: its GRPO group where
    /// it has run, step and group, else the attempts at its task; `None` with neither.
    pub fn of(
        run: Option<&str>,
        step: Option<u64>,
        group: Option<u64>,
        task: Option<&str>,
    ) -> Option<Self> {
        match (run.filter(|run| !run.is_empty()), step, group) {
            (Some(run), Some(step), Some(group)) => Some(Self::Grpo {
                run: run.to_string(),
                step,
                group,
            }),
            _ => task.filter(|task| !task.is_empty()).map(|task| Self::Task {
                task: task.to_string(),
            }),
        }
    }
}

/// A label to write; the engine stamps its author and time.
#[derive(Clone, Debug, PartialEq)]
pub struct LabelDraft {
    /// The step (turn) it marks, 0-based.
    pub step: u32,
    /// The kind of error.
    pub kind: ErrorKind,
    /// Confirmed by a person, or only suggested.
    pub status: LabelStatus,
    /// The annotator's note, or the evidence of a suggestion.
    pub note: Option<String>,
}

/// A request to the engine. Each is answered by one or more `Update`s, or by
/// `Update::Failed` naming what went wrong.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Selects the trajectories of a listing, keeps them in order, and sends `window` of them
    /// (`Update::Window`), then the badcase queue of the listing (`Update::Queue`).
    List {
        /// Names this listing; later `Page` and `Locate` refer to it.
        tag: Tag,
        /// Filter and order.
        listing: Listing,
        /// The rows wanted first.
        window: Range<usize>,
    },
    /// Sends another window of the listing opened with `tag`.
    Page {
        /// The listing.
        tag: Tag,
        /// The rows wanted.
        window: Range<usize>,
    },
    /// Finds the trajectory whose id starts with `prefix`, and where it sits in a listing.
    Locate {
        /// Names this request.
        tag: Tag,
        /// The listing to look in.
        listing: Tag,
        /// Hex digits of the id (a unique prefix is enough).
        prefix: String,
    },
    /// Loads a trajectory with its token trace, and its task.
    LoadTrajectory {
        /// Names this request.
        tag: Tag,
        /// The trajectory.
        id: TrajectoryId,
    },
    /// Finds which messages of a trajectory a full-text search matches, and the words to
    /// mark (`Update::TextHits`).
    FindText {
        /// Names this request.
        tag: Tag,
        /// The trajectory.
        id: TrajectoryId,
        /// The search, as the list's filter holds it.
        query: String,
    },
    /// Loads the samples of a GRPO group (without traces) and their task.
    LoadGroup {
        /// Names this request.
        tag: Tag,
        /// The group.
        key: GroupKey,
    },
    /// Adds a label to a step (a confirmed label replaces a suggestion of its kind); the
    /// store is flushed before `Update::LabelsSaved` is sent.
    SaveLabel {
        /// The trajectory.
        id: TrajectoryId,
        /// The label.
        draft: LabelDraft,
    },
    /// Removes the annotator's labels of a kind (every kind when `None`) and the suggestions
    /// from a step; flushed.
    RemoveLabels {
        /// The trajectory.
        id: TrajectoryId,
        /// The step, 0-based.
        step: u32,
        /// The kind, or all.
        kind: Option<ErrorKind>,
    },
    /// Replaces the annotator's labels and the suggestions on a trajectory (undo, notes);
    /// other people's confirmed labels stay; flushed.
    SetLabels {
        /// The trajectory.
        id: TrajectoryId,
        /// Its labels from now on (other people's confirmed ones are ignored).
        labels: Vec<Label>,
    },
    /// Sends every run's record (`Update::Runs`).
    LoadRuns,
    /// Sends a run's metrics rows (`Update::Metrics`).
    LoadMetrics {
        /// The run.
        run: String,
    },
    /// Stores a metrics row, flushes, and announces it (`Update::MetricsAppended`): what a
    /// training job does each step, and what a follower of an external run does.
    RecordMetrics(MetricsRow),
    /// Computes the error analysis and the best-of-N preview over the trajectories a filter
    /// selects (`Update::Overview`).
    LoadOverview {
        /// Which trajectories.
        filter: Filter,
    },
    /// Counts what a selection with these rules would keep (`Update::SelectionPreview`).
    PreviewSelection {
        /// Which trajectories.
        filter: Filter,
        /// The rules.
        rules: SelectionRules,
    },
    /// Writes an export and its manifest on a thread of its own (`Update::Export` with
    /// progress, then the report); a relative path is taken from the session's folder. An
    /// existing file is replaced only when `replace` says so (else `ExportProgress::Exists`).
    Export {
        /// What to export, and where.
        request: Box<ExportRequest>,
        /// Replace the file if it exists.
        replace: bool,
    },
    /// Finds the steps where annotators differ among the filter's labelled trajectories
    /// (`Update::Disagreements`), for the `:disagree` queue.
    FindDisagreements(Filter),
    /// Like `List`, for the reward-hacking audit queue of the filter's trajectories (most
    /// suspicious first; the order is the queue's), with `Update::Audit` naming each row's
    /// traits.
    ListAudit {
        /// Names this listing; later `Page` and `Locate` refer to it.
        tag: Tag,
        /// Which trajectories to audit.
        filter: Filter,
        /// What counts as high reward.
        options: AuditOptions,
        /// The rows wanted first.
        window: Range<usize>,
    },
    /// Starts a GRPO run with this config in a background process of its own
    /// (`Update::Launched`), which outlives the engine; its progress, rows and rollouts
    /// reach every engine through the store.
    LaunchRun(Box<RunConfig>),
    /// Follows another stack's run (files or run folders) in a background `rollscope
    /// import --follow` process of its own (`Update::Launched`): the run that followed the
    /// same paths before goes on, or a new import run starts.
    FollowRun(Vec<std::path::PathBuf>),
    /// Forks a trajectory from one of its turns in a background `rollscope fork` process of
    /// its own (`Update::Launched`); its children and the parent's new branch reach every
    /// engine through the store.
    ForkTrajectory(super::ForkLaunch),
    /// Asks a run of the session to pause after its current step, whichever process trains
    /// it.
    PauseRun(String),
    /// Lets a paused run go on; a stopped, failed or interrupted GRPO run continues from its
    /// latest checkpoint in a new background process.
    ResumeRun(String),
    /// Asks a run of the session to stop after its current step, with a checkpoint.
    StopRun(String),
}

impl Command {
    /// The request's tag, when it has one.
    pub fn tag(&self) -> Option<Tag> {
        match self {
            Self::List { tag, .. }
            | Self::ListAudit { tag, .. }
            | Self::Page { tag, .. }
            | Self::Locate { tag, .. }
            | Self::LoadTrajectory { tag, .. }
            | Self::FindText { tag, .. }
            | Self::LoadGroup { tag, .. } => Some(*tag),
            _ => None,
        }
    }

    /// What the engine is doing while it works on this, for the status bar.
    pub fn activity(&self) -> Activity {
        match self {
            Self::List { .. } => Activity::Listing,
            Self::Page { .. } => Activity::Paging,
            Self::Locate { .. } => Activity::Finding,
            Self::LoadTrajectory { .. } => Activity::LoadingTrajectory,
            Self::FindText { .. } => Activity::Searching,
            Self::LoadGroup { .. } => Activity::LoadingGroup,
            Self::SaveLabel { .. } | Self::RemoveLabels { .. } | Self::SetLabels { .. } => {
                Activity::SavingLabels
            }
            Self::LoadRuns => Activity::LoadingRuns,
            Self::LoadMetrics { .. } => Activity::LoadingMetrics,
            Self::RecordMetrics(_) => Activity::RecordingMetrics,
            Self::LoadOverview { .. } => Activity::Counting,
            Self::PreviewSelection { .. } => Activity::PreviewingSelection,
            Self::Export { .. } => Activity::Exporting,
            Self::ListAudit { .. } => Activity::Auditing,
            Self::FindDisagreements(_) => Activity::ComparingLabels,
            Self::LaunchRun(_) | Self::FollowRun(_) | Self::ForkTrajectory(_) => {
                Activity::LaunchingRun
            }
            Self::PauseRun(_) => Activity::PausingRun,
            Self::ResumeRun(_) => Activity::ResumingRun,
            Self::StopRun(_) => Activity::StoppingRun,
        }
    }
}
