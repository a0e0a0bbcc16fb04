//! The session server's protocol: one typed request per store operation, one typed reply,
//! each sent as a frame (a 4-byte little-endian length, then that many bytes of JSON).
//!
//! The same `Request` values drive a store opened in this process (`apply` runs them
//! directly) and one served by another process, so the two paths cannot drift apart.

use super::changes::{ChangeStamp, Writes};
use super::labels::LabelEdit;
use super::summary::ListedIds;
use super::{CompactionReport, Filter, Query, StoreError, Summary, TextHits};
use crate::trajectory::{
    MetricsRow, RunActivity, RunInfo, RunRequest, RunStatus, Task, Trajectory, TrajectoryId,
};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::io::{Read, Write};
use std::path::PathBuf;

/// Bumped whenever a request or reply changes shape; client and server must agree.
pub const PROTOCOL_VERSION: u32 = 5;

/// The largest frame either side reads: a bigger length is refused without reading it.
pub const MAX_FRAME_BYTES: u32 = 256 * 1024 * 1024;

/// A store operation, as a client sends it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Request<'a> {
    /// The first request of a connection: the client's protocol version.
    Hello {
        /// `PROTOCOL_VERSION` of the client.
        protocol: u32,
    },
    /// Number of trajectories stored.
    TrajectoryCount,
    /// A trajectory, with its token trace when `trace`.
    Get {
        /// The trajectory.
        id: TrajectoryId,
        /// Whether to read the token trace too.
        trace: bool,
    },
    /// Whether a trajectory has a token trace.
    HasTrace(TrajectoryId),
    /// The trajectory whose id starts with these hex digits.
    Resolve(Cow<'a, str>),
    /// Bytes on disk.
    SizeOnDisk,
    /// Stores trajectories (replacing any with the same id).
    PutTrajectories(Cow<'a, [Trajectory]>),
    /// Stores the trajectories whose ids are not stored yet; replies the ids it left out.
    AddTrajectories(Cow<'a, [Trajectory]>),
    /// Changes a trajectory's labels.
    EditLabels {
        /// The trajectory.
        id: TrajectoryId,
        /// The change.
        edit: LabelEdit,
    },
    /// Removes trajectories.
    DeleteTrajectories(Cow<'a, [TrajectoryId]>),
    /// A trajectory's summary.
    SummaryOf(TrajectoryId),
    /// Stores tasks.
    PutTasks(Cow<'a, [Task]>),
    /// A task by id.
    GetTask(Cow<'a, str>),
    /// Every task.
    Tasks,
    /// Number of tasks.
    TaskCount,
    /// Stores a run's record.
    PutRun(Cow<'a, RunInfo>),
    /// A run's record.
    GetRun(Cow<'a, str>),
    /// Every run's record.
    Runs,
    /// Stores a new run under the next free id of its kind.
    CreateRun(Cow<'a, RunInfo>),
    /// Sets a run's status and step activity only.
    SetRunProgress {
        /// The run.
        run: Cow<'a, str>,
        /// Its status.
        status: RunStatus,
        /// What its current step is doing.
        activity: Option<RunActivity>,
    },
    /// Records what a user asks of a run (`None` clears it).
    RequestRun {
        /// The run.
        run: Cow<'a, str>,
        /// Pause, resume or stop.
        request: Option<RunRequest>,
    },
    /// What a user last asked of a run.
    RunRequestOf(Cow<'a, str>),
    /// Stores a metrics row.
    PutMetrics(Cow<'a, MetricsRow>),
    /// A run's metrics rows.
    Metrics(Cow<'a, str>),
    /// Removes a run's metrics rows after a step.
    TruncateMetrics {
        /// The run.
        run: Cow<'a, str>,
        /// The last step kept.
        after_step: u64,
    },
    /// The ids a filter selects.
    Ids(Cow<'a, Filter>),
    /// The summaries a query selects.
    Query(Cow<'a, Query>),
    /// How many trajectories a filter selects.
    Count(Cow<'a, Filter>),
    /// The trajectories a full-text query matches.
    SearchText(Cow<'a, str>),
    /// Which messages of a trajectory a full-text query matches.
    TextHits {
        /// The query.
        query: Cow<'a, str>,
        /// The trajectory.
        id: TrajectoryId,
    },
    /// Bytes of the full-text index.
    TextIndexSize,
    /// Rebuilds the full-text index from the records.
    RebuildTextIndex,
    /// How many writes the full-text index has yet to take in.
    TextIndexBehind,
    /// The ids a query selects, in its order, with its unlabelled failures marked.
    ListedIds(Cow<'a, Query>),
    /// The summaries of these trajectories, in the order given.
    SummariesOf(Cow<'a, [TrajectoryId]>),
    /// The schema version on disk.
    SchemaVersion,
    /// Makes everything written durable.
    Flush,
    /// Rewrites the store keeping live records only.
    Compact,
    /// What has been written since the server started.
    Changes,
}

impl Request<'_> {
    /// Which parts of the store the request writes, for change stamps.
    pub fn writes(&self) -> Writes {
        match self {
            Self::PutTrajectories(_)
            | Self::AddTrajectories(_)
            | Self::DeleteTrajectories(_)
            | Self::Compact => Writes::Trajectories,
            Self::EditLabels { .. } => Writes::Labels,
            Self::PutTasks(_) => Writes::Tasks,
            Self::PutRun(_)
            | Self::CreateRun(_)
            | Self::SetRunProgress { .. }
            | Self::RequestRun { .. } => Writes::Runs,
            Self::PutMetrics(_) | Self::TruncateMetrics { .. } => Writes::Metrics,
            _ => Writes::Nothing,
        }
    }
}

/// The answer to a request.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Reply {
    /// The server's side of the handshake.
    Hello {
        /// `PROTOCOL_VERSION` of the server.
        protocol: u32,
        /// The server's process id.
        pid: u32,
        /// The store it serves.
        store: PathBuf,
    },
    /// Done, nothing to return.
    Done,
    /// A number.
    Number(u64),
    /// Yes or no.
    Flag(bool),
    /// A trajectory id.
    Id(TrajectoryId),
    /// Trajectory ids.
    Ids(Vec<TrajectoryId>),
    /// A trajectory, if stored.
    Trajectory(Option<Box<Trajectory>>),
    /// A summary, if stored.
    Summary(Option<Box<Summary>>),
    /// Summaries.
    Summaries(Vec<Summary>),
    /// A whole listing by id.
    Listed(ListedIds),
    /// A task, if stored.
    Task(Option<Box<Task>>),
    /// Tasks.
    Tasks(Vec<Task>),
    /// A run's record, if stored.
    Run(Option<Box<RunInfo>>),
    /// Run records.
    Runs(Vec<RunInfo>),
    /// What a user last asked of a run.
    RunRequest(Option<RunRequest>),
    /// A text.
    Text(String),
    /// Metrics rows.
    Metrics(Vec<MetricsRow>),
    /// Full-text hits in one trajectory.
    Hits(TextHits),
    /// The sizes of a compaction.
    Compacted(CompactionReport),
    /// The change stamp.
    Changes(ChangeStamp),
    /// The request failed.
    Failed(WireError),
}

/// A store error as it crosses the socket: the variants callers match keep their shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum WireError {
    /// `StoreError::NotFound`.
    NotFound(String),
    /// `StoreError::Ambiguous`.
    Ambiguous {
        /// The prefix typed.
        prefix: String,
        /// How many ids start with it.
        count: usize,
    },
    /// `StoreError::Invalid`.
    Invalid(String),
    /// `StoreError::Conflict`.
    Conflict(String),
    /// Anything else, as its message.
    Other(String),
}

impl From<StoreError> for WireError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::NotFound(id) => Self::NotFound(id),
            StoreError::Ambiguous { prefix, count } => Self::Ambiguous { prefix, count },
            StoreError::Invalid(message) => Self::Invalid(message),
            StoreError::Conflict(message) => Self::Conflict(message),
            other => Self::Other(other.to_string()),
        }
    }
}

impl From<WireError> for StoreError {
    fn from(error: WireError) -> Self {
        match error {
            WireError::NotFound(id) => Self::NotFound(id),
            WireError::Ambiguous { prefix, count } => Self::Ambiguous { prefix, count },
            WireError::Invalid(message) => Self::Invalid(message),
            WireError::Conflict(message) => Self::Conflict(message),
            WireError::Other(message) => Self::Server(message),
        }
    }
}

/// Why a frame could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The peer closed the connection before a frame began.
    #[error("the connection was closed")]
    Closed,
    /// The length is over `MAX_FRAME_BYTES`; the stream cannot be resynchronised.
    #[error("a frame of {0} bytes is over the limit of {MAX_FRAME_BYTES} bytes")]
    TooLarge(u64),
    /// The frame's bytes are not a message of the expected type.
    #[error("malformed message: {0}")]
    Malformed(String),
    /// Reading or writing failed (a frame cut short included).
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Writes one message as a frame.
pub fn write_frame(out: &mut impl Write, message: &impl Serialize) -> Result<(), FrameError> {
    let bytes =
        serde_json::to_vec(message).map_err(|error| FrameError::Malformed(error.to_string()))?;
    let length = u32::try_from(bytes.len())
        .ok()
        .filter(|&length| length <= MAX_FRAME_BYTES)
        .ok_or(FrameError::TooLarge(bytes.len() as u64))?;
    let mut frame = Vec::with_capacity(bytes.len() + 4);
    frame.extend_from_slice(&length.to_le_bytes());
    frame.extend_from_slice(&bytes);
    out.write_all(&frame)?;
    out.flush()?;
    Ok(())
}

/// Reads one frame's bytes.
pub fn read_frame_bytes(input: &mut impl Read) -> Result<Vec<u8>, FrameError> {
    let mut length = [0u8; 4];
    let mut filled = 0;
    while filled < 4 {
        match input.read(&mut length[filled..]) {
            Ok(0) if filled == 0 => return Err(FrameError::Closed),
            Ok(0) => return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into()),
            Ok(read) => filled += read,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error.into()),
        }
    }
    let length = u32::from_le_bytes(length);
    if length > MAX_FRAME_BYTES {
        return Err(FrameError::TooLarge(u64::from(length)));
    }
    let mut bytes = vec![0; length as usize];
    input.read_exact(&mut bytes)?;
    Ok(bytes)
}

/// Decodes a frame's bytes as a message.
pub fn decode<'de, T: Deserialize<'de>>(bytes: &'de [u8]) -> Result<T, FrameError> {
    serde_json::from_slice(bytes).map_err(|error| FrameError::Malformed(error.to_string()))
}
