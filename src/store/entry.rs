//! What sled knows of a stored trajectory: its place in list order and where its record and
//! token trace lie in the blob log.

use super::blobs::Location;
use super::{StoreError, StoreResult};
use crate::trajectory::TrajectoryId;

/// The location entry of one trajectory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Its sequence number (list order).
    pub seq: u64,
    /// The trajectory JSON, without its token trace.
    pub record: Location,
    /// The packed token trace, if it has one.
    pub trace: Option<Location>,
}

impl Entry {
    /// The bytes stored in sled.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 + 2 * Location::SIZE);
        out.extend_from_slice(&self.seq.to_be_bytes());
        self.record.encode_into(&mut out);
        if let Some(trace) = self.trace {
            trace.encode_into(&mut out);
        }
        out
    }

    /// Reads the bytes written by `encode`.
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        let seq = u64::from_be_bytes(bytes.get(..8)?.try_into().ok()?);
        let record = Location::decode(bytes.get(8..)?)?;
        let trace = match bytes.len() {
            20 => None,
            32 => Some(Location::decode(&bytes[20..])?),
            _ => return None,
        };
        Some(Self { seq, record, trace })
    }

    /// Reads the entry stored for `id`; malformed bytes are a corrupt store.
    pub fn stored(bytes: &[u8], id: TrajectoryId) -> StoreResult<Self> {
        Self::decode(bytes).ok_or_else(|| StoreError::Corrupt {
            what: format!("location of {id}"),
            reason: "malformed entry".into(),
        })
    }
}
