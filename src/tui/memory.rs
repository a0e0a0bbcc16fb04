//! What the TUI remembers of a session across starts, for each annotator: the tab, the
//! list's filter and sort, the list's cursor, the selected run and the metrics charted. Taken from the app when
//! it quits (`App::remembered`) and given back to the next start; kept in
//! `<session>/tui/<author>.json`, written whole (a temporary file renamed). Blind labelling
//! neither reads nor writes it.

use super::state::Tab;
use crate::engine::Listing;
use crate::store::{Filter, SortKey};
use crate::trajectory::TrajectoryId;
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// A session's view as one annotator left it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Remembered {
    /// The tab shown.
    pub tab: Tab,
    /// The list's filter.
    pub filter: Filter,
    /// The list's order.
    pub sort: SortKey,
    /// Largest first.
    pub descending: bool,
    /// The list's cursor: its row, and the trajectory on it.
    pub cursor: usize,
    /// The trajectory the cursor was on (a changed list keeps the row, not the trajectory).
    pub selected: Option<TrajectoryId>,
    /// The run selected in the Runs tab.
    pub run: Option<String>,
    /// The metrics the Runs tab charts, chosen with its picker (empty: the presets).
    pub charts: Vec<String>,
}

impl Remembered {
    /// The list's filter and order.
    pub fn listing(&self) -> Listing {
        Listing {
            filter: self.filter.clone(),
            sort: self.sort,
            descending: self.descending,
        }
    }

    /// Where an annotator's view of the session at `session_dir` is kept.
    pub fn path(session_dir: &Path, author: Option<&str>) -> PathBuf {
        let name: String = author
            .unwrap_or("default")
            .chars()
            .map(|c| match c.is_ascii_alphanumeric() || "-_.@".contains(c) {
                true => c,
                false => '_',
            })
            .collect();
        session_dir.join("tui").join(format!("{name}.json"))
    }

    /// Reads a remembered view: `Ok(None)` when there is none yet, an error naming the file
    /// when it cannot be read (the caller starts afresh and says so).
    pub fn load(path: &Path) -> anyhow::Result<Option<Self>> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => {
                return Err(error).with_context(|| format!("cannot read {}", path.display()));
            }
        };
        serde_json::from_str(&text)
            .map(Some)
            .with_context(|| format!("{} is not a remembered view", path.display()))
    }

    /// Writes the view whole: to a temporary file beside `path`, then renamed over it.
    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        let dir = path.parent().context("a remembered view needs a folder")?;
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let mut file = tempfile::NamedTempFile::new_in(dir)
            .with_context(|| format!("cannot write in {}", dir.display()))?;
        file.write_all(serde_json::to_string_pretty(self)?.as_bytes())?;
        file.persist(path)
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(())
    }
}
