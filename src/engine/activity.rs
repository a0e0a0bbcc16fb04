//! What the engine is doing, named in `EngineState::Busy` and `Update::Failed`.

use std::fmt;

/// Something the engine does, in the words the status bar shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Activity {
    /// Selecting and ordering a listing (`Command::List`).
    Listing,
    /// Sending another window of a listing (`Command::Page`).
    Paging,
    /// Finding a trajectory by id prefix (`Command::Locate`).
    Finding,
    /// Loading one trajectory (`Command::LoadTrajectory`).
    LoadingTrajectory,
    /// Finding a search's hits in a trajectory (`Command::FindText`).
    Searching,
    /// Loading a GRPO group (`Command::LoadGroup`).
    LoadingGroup,
    /// Writing labels (`SaveLabel`, `RemoveLabels`, `SetLabels`).
    SavingLabels,
    /// Loading the run records (`Command::LoadRuns`).
    LoadingRuns,
    /// Loading a run's metrics (`Command::LoadMetrics`).
    LoadingMetrics,
    /// Storing a metrics row (`Command::RecordMetrics`).
    RecordingMetrics,
    /// Computing the overview (`Command::LoadOverview`).
    Counting,
    /// Counting what a selection keeps (`Command::PreviewSelection`).
    PreviewingSelection,
    /// Writing an export (`Command::Export`, and its thread).
    Exporting,
    /// Building the reward-hacking audit queue (`Command::ListAudit`).
    Auditing,
    /// Finding the steps where annotators differ (`Command::FindDisagreements`).
    ComparingLabels,
    /// Starting a training run (`Command::LaunchRun`, and its thread).
    LaunchingRun,
    /// Pausing the run being trained (`Command::PauseRun`).
    PausingRun,
    /// Resuming a run (`Command::ResumeRun`).
    ResumingRun,
    /// Stopping the run being trained (`Command::StopRun`).
    StoppingRun,
    /// Running at all: the engine thread itself stopped.
    EngineThread,
}

impl Activity {
    /// The words the status bar shows for it.
    pub fn text(self) -> &'static str {
        match self {
            Self::Listing => "listing",
            Self::Paging => "paging",
            Self::Finding => "finding",
            Self::LoadingTrajectory => "loading trajectory",
            Self::Searching => "searching",
            Self::LoadingGroup => "loading group",
            Self::SavingLabels => "saving labels",
            Self::LoadingRuns => "loading runs",
            Self::LoadingMetrics => "loading metrics",
            Self::RecordingMetrics => "recording metrics",
            Self::Counting => "counting",
            Self::PreviewingSelection => "previewing the selection",
            Self::Exporting => "exporting",
            Self::Auditing => "auditing",
            Self::ComparingLabels => "comparing labels",
            Self::LaunchingRun => "launching a run",
            Self::PausingRun => "pausing a run",
            Self::ResumingRun => "resuming a run",
            Self::StoppingRun => "stopping a run",
            Self::EngineThread => "engine",
        }
    }
}

impl fmt::Display for Activity {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.text())
    }
}
