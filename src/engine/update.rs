//! What the engine tells the UI: the `Update` channel's messages.

use super::activity::Activity;
use super::command::{GroupKey, Tag};
use super::overview::Overview;
use super::spelling::TokenSpellings;
use crate::curate::{ExportReport, Finding, SelectionPreview, SelectionRules};
use crate::store::{Changed, Filter, Summary, TextHits};
use crate::trajectory::{ForkNode, Label, MetricsRow, RunInfo, Task, Trajectory, TrajectoryId};
use std::path::PathBuf;

/// What the engine is doing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum EngineState {
    /// Waiting for commands.
    #[default]
    Idle,
    /// Working on a command.
    Busy(Activity),
}

/// A window of rows of a listing.
#[derive(Clone, Debug, PartialEq)]
pub struct Window {
    /// The listing it belongs to.
    pub tag: Tag,
    /// Index of the first row in the listing.
    pub start: usize,
    /// The rows.
    pub rows: Vec<Summary>,
    /// How many trajectories the listing selects; `None` while it is still being counted.
    pub matching: Option<usize>,
    /// How many trajectories the store holds, when known.
    pub stored: Option<usize>,
}

/// A trajectory as loaded for viewing, with its task.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedTrajectory {
    /// The trajectory, with its token trace when one is stored.
    pub trajectory: Trajectory,
    /// Its task, when the store has it.
    pub task: Option<Task>,
    /// How its tokens are spelled, when it has a token trace and a tokenizer was found.
    pub spellings: Option<TokenSpellings>,
    /// For a fork, the trajectory it continues (without its token trace), to diff against.
    pub parent: Option<Box<Trajectory>>,
    /// The fork tree it belongs to, depth first from its root (empty when it neither forks
    /// nor was forked).
    pub tree: Vec<ForkNode>,
}

/// The samples of a GRPO group, in sample order, with their task.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedGroup {
    /// Which group.
    pub key: GroupKey,
    /// Its samples, without token traces.
    pub members: Vec<Trajectory>,
    /// Their task, when the store has it.
    pub task: Option<Task>,
}

/// How far an export has come.
#[derive(Clone, Debug, PartialEq)]
pub enum ExportProgress {
    /// Records written so far, of all selected.
    Writing {
        /// Written.
        written: usize,
        /// Selected.
        total: usize,
    },
    /// The file and its manifest are written.
    Done(Box<ExportReport>),
    /// Nothing was written: the file exists and the export did not ask to replace it.
    Exists(PathBuf),
}

/// A message from the engine.
#[derive(Clone, Debug, PartialEq)]
pub enum Update {
    /// The engine started or finished work.
    State(EngineState),
    /// Rows of a listing (answer to `List` and `Page`).
    Window(Window),
    /// Another writer (this engine included) changed the store: list, runs or metrics may
    /// need asking for again. Sent by an idle engine within a fraction of a second.
    StoreChanged(Changed),
    /// The badcase queue of a listing: (row index, id) of its unlabelled failures, in order.
    Queue {
        /// The listing.
        tag: Tag,
        /// Row index in the listing and id of each unlabelled failure.
        entries: Vec<(usize, TrajectoryId)>,
    },
    /// Where a trajectory sits (answer to `Locate`).
    Located {
        /// The request.
        tag: Tag,
        /// The trajectory found.
        id: TrajectoryId,
        /// Its row in the listing, if the listing holds it.
        index: Option<usize>,
    },
    /// A trajectory (answer to `LoadTrajectory`).
    Trajectory {
        /// The request.
        tag: Tag,
        /// The trajectory and its task.
        loaded: Box<LoadedTrajectory>,
    },
    /// Where a search matched in a trajectory (answer to `FindText`).
    TextHits {
        /// The request.
        tag: Tag,
        /// The trajectory.
        id: TrajectoryId,
        /// The matching messages and the words to mark.
        hits: TextHits,
    },
    /// A group (answer to `LoadGroup`).
    Group {
        /// The request.
        tag: Tag,
        /// The samples and their task.
        group: Box<LoadedGroup>,
    },
    /// A trajectory's labels as now durably stored, with its new summary.
    LabelsSaved {
        /// The trajectory.
        id: TrajectoryId,
        /// All its labels.
        labels: Vec<Label>,
        /// Its summary after the change.
        summary: Box<Summary>,
    },
    /// Every run's record.
    Runs(Vec<RunInfo>),
    /// All metrics rows of a run, by step.
    Metrics {
        /// The run.
        run: String,
        /// Its rows.
        rows: Vec<MetricsRow>,
    },
    /// New metrics rows of a run, stored as they arrived (a live run).
    MetricsAppended {
        /// The run.
        run: String,
        /// The new rows (a row for a step already shown replaces it).
        rows: Vec<MetricsRow>,
    },
    /// Counts for the Stats and Curate tabs.
    Overview(Box<Overview>),
    /// What a selection would keep (answer to `PreviewSelection`).
    SelectionPreview {
        /// The filter it was computed for.
        filter: Box<Filter>,
        /// The rules it was computed for.
        rules: Box<SelectionRules>,
        /// The counts.
        preview: Box<SelectionPreview>,
        /// The chosen samples, best first within each task.
        kept: Vec<TrajectoryId>,
    },
    /// An export's progress, then its report.
    Export(ExportProgress),
    /// The audit queue of a listing (answer to `ListAudit`, after its first window).
    Audit {
        /// The listing.
        tag: Tag,
        /// The suspicious trajectories, in queue order.
        findings: Vec<Finding>,
        /// High-reward trajectories audited.
        audited: usize,
    },
    /// The steps where annotators differ (`Command::FindDisagreements`), in trajectory
    /// order.
    Disagreements(Vec<crate::curate::agreement::Disagreement>),
    /// A run this engine launched (or resumed) started in a background process of its own:
    /// the run whose `RunInfo::process` has this pid is it.
    Launched {
        /// The process id.
        pid: u32,
        /// Where its output goes.
        log: std::path::PathBuf,
    },
    /// A command failed.
    Failed {
        /// The request's tag, when it had one.
        tag: Option<Tag>,
        /// What the engine was doing.
        during: Activity,
        /// What went wrong, and what to do.
        message: String,
    },
}
