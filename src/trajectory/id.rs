//! Trajectory identifiers: 64-bit, shown as 16 hex digits, derived or fresh.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};
use std::fmt;
use std::str::FromStr;

/// A trajectory's identity: derived from its coordinates for generated rollouts, hashed from
/// its content for imported ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TrajectoryId(pub u64);

impl TrajectoryId {
    /// The id of a generated rollout: the same (run, policy version, group, sample) always
    /// gives the same id, so a resumed run overwrites instead of duplicating.
    pub fn derived(run: &str, policy_version: u64, group: u64, sample: u32) -> Self {
        Self::hash_parts(&[
            b"rollout",
            run.as_bytes(),
            &policy_version.to_be_bytes(),
            &group.to_be_bytes(),
            &sample.to_be_bytes(),
        ])
    }

    /// The id of continuation `index` of a fork of `parent` from `turn` with sampler seed
    /// `seed`; `edits` tells apart forks whose prefixes were edited differently.
    pub fn forked(parent: Self, turn: u32, edits: &[u8], seed: u64, index: u32) -> Self {
        Self::hash_parts(&[
            b"fork",
            &parent.to_bytes(),
            &turn.to_be_bytes(),
            edits,
            &seed.to_be_bytes(),
            &index.to_be_bytes(),
        ])
    }

    fn hash_parts(parts: &[&[u8]]) -> Self {
        let mut hasher = Sha256::new();
        for part in parts {
            hasher.update((part.len() as u64).to_be_bytes());
            hasher.update(part);
        }
        let digest = hasher.finalize();
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&digest[..8]);
        Self(u64::from_be_bytes(bytes))
    }

    /// The big-endian bytes used as a store key.
    pub fn to_bytes(self) -> [u8; 8] {
        self.0.to_be_bytes()
    }

    /// Reads an id back from its store key.
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        Some(Self(u64::from_be_bytes(bytes.try_into().ok()?)))
    }

    /// The first `len` hex digits, as the list shows it.
    pub fn short(self, len: usize) -> String {
        let full = self.to_string();
        full[..len.min(full.len())].to_string()
    }
}

impl fmt::Display for TrajectoryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl FromStr for TrajectoryId {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text.is_empty() || text.len() > 16 {
            return Err(format!(
                "`{text}` is not a trajectory id (1 to 16 hex digits)"
            ));
        }
        u64::from_str_radix(text, 16)
            .map(Self)
            .map_err(|_| format!("`{text}` is not a trajectory id (hex digits only)"))
    }
}

impl Serialize for TrajectoryId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TrajectoryId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        if text.len() != 16 {
            return Err(serde::de::Error::custom(format!(
                "trajectory id `{text}` must have 16 hex digits"
            )));
        }
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl super::Trajectory {
    /// Gives an imported record the id of its content: a hash of everything it holds but its
    /// id (messages, rewards, its group and sample, the fields kept from the source), with
    /// object keys in sorted order, so the same record read again, from any file, in any
    /// order and whatever order its fields were written in, has the same id, and two records
    /// that differ in anything have different ones.
    pub fn set_content_id(&mut self) {
        self.id = TrajectoryId(0);
        let mut hasher = Sha256::new();
        hasher.update(b"import-content\0");
        let trace = self.token_trace.take();
        if let Ok(value) = serde_json::to_value(&*self) {
            hash_canonical(&value, &mut hasher);
        }
        if let Some(trace) = &trace {
            hasher.update(b"trace");
            for (tag, values) in [
                (
                    b'i',
                    trace
                        .token_ids
                        .iter()
                        .flat_map(|id| id.to_le_bytes())
                        .collect::<Vec<u8>>(),
                ),
                (b'm', trace.loss_mask.clone()),
                (
                    b'l',
                    trace
                        .logprobs
                        .iter()
                        .flat_map(|p| p.to_le_bytes())
                        .collect(),
                ),
                (
                    b'e',
                    trace
                        .entropies
                        .iter()
                        .flat_map(|e| e.to_le_bytes())
                        .collect(),
                ),
            ] {
                hasher.update([tag]);
                hasher.update((values.len() as u64).to_be_bytes());
                hasher.update(&values);
            }
        }
        self.token_trace = trace;
        let digest = hasher.finalize();
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&digest[..8]);
        self.id = TrajectoryId(u64::from_be_bytes(bytes));
    }
}

/// Feeds a JSON value to a hash with object keys sorted, each part tagged and its length
/// given, so different values never feed the same bytes.
fn hash_canonical(value: &serde_json::Value, hasher: &mut Sha256) {
    use serde_json::Value;
    let mut text = |tag: u8, text: &str| {
        hasher.update([tag]);
        hasher.update((text.len() as u64).to_be_bytes());
        hasher.update(text.as_bytes());
    };
    match value {
        Value::Null => text(b'n', ""),
        Value::Bool(flag) => text(b'b', if *flag { "1" } else { "0" }),
        Value::Number(number) => text(b'#', &number.to_string()),
        Value::String(string) => text(b's', string),
        Value::Array(items) => {
            text(b'[', &items.len().to_string());
            for item in items {
                hash_canonical(item, hasher);
            }
        }
        Value::Object(object) => {
            text(b'{', &object.len().to_string());
            let mut keys: Vec<&String> = object.keys().collect();
            keys.sort();
            for key in keys {
                hasher.update([b'k']);
                hasher.update((key.len() as u64).to_be_bytes());
                hasher.update(key.as_bytes());
                hash_canonical(&object[key], hasher);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_ids_are_stable_and_distinct() {
        let a = TrajectoryId::derived("grpo-0001", 3, 7, 1);
        assert_eq!(a, TrajectoryId::derived("grpo-0001", 3, 7, 1));
        assert_ne!(a, TrajectoryId::derived("grpo-0001", 3, 7, 2));
        assert_ne!(a, TrajectoryId::derived("grpo-0002", 3, 7, 1));
    }

    #[test]
    fn content_ids_ignore_the_id_and_key_order_and_see_everything_else() {
        use crate::trajectory::{Message, Trajectory};
        let mut a = Trajectory::new(
            TrajectoryId(1),
            vec![Message::user("q"), Message::assistant("4")],
        );
        a.extra.insert("x".into(), serde_json::json!(1));
        a.extra
            .insert("y".into(), serde_json::json!({"b": 2, "a": 1}));
        let mut b = Trajectory::new(TrajectoryId(2), a.messages.clone());
        b.extra
            .insert("y".into(), serde_json::json!({"a": 1, "b": 2}));
        b.extra.insert("x".into(), serde_json::json!(1));
        a.set_content_id();
        b.set_content_id();
        assert_eq!(a.id, b.id, "the same content in another key order");
        b.messages[1].content = "5".into();
        b.set_content_id();
        assert_ne!(a.id, b.id, "another answer");
        b.messages[1].content = "4".into();
        b.sample = Some(1);
        b.set_content_id();
        assert_ne!(a.id, b.id, "another sample of the group");
    }

    #[test]
    fn display_parse_and_serde_round_trip() {
        let id = TrajectoryId(0x00ab_cdef_0123_4567);
        assert_eq!(id.to_string(), "00abcdef01234567");
        assert_eq!(id.to_string().parse::<TrajectoryId>().unwrap(), id);
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(serde_json::from_str::<TrajectoryId>(&json).unwrap(), id);
        assert!("xyz".parse::<TrajectoryId>().is_err());
    }
}
