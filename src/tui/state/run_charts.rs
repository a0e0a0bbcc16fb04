//! The Runs tab's chart choices: the runs pinned to overlay the selected one (each with its
//! metrics rows, kept current), the metrics charted (chosen with the picker, remembered per
//! session and annotator), and whether the table of runs side by side shows.

use crate::engine::Command;
use crate::trajectory::MetricsRow;
use crate::tui::charts;
use crate::tui::metric_picker::{MetricPicker, PickerEvent};
use crossterm::event::KeyEvent;

/// The most runs pinned at once (each has a colour of its own).
pub const MOST_PINNED: usize = 4;

/// A run pinned to overlay the charts of whichever run is selected.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PinnedRun {
    /// Its id.
    pub id: String,
    /// Its metrics rows, by step.
    pub rows: Vec<MetricsRow>,
}

/// The Runs tab's chart choices.
#[derive(Clone, Debug, Default)]
pub struct RunCharts {
    /// The pinned runs, in the order they were pinned.
    pub pinned: Vec<PinnedRun>,
    /// The metrics charted under the main chart, by recorded name; empty: the preset of
    /// the selected run's kind.
    pub chosen: Vec<String>,
    /// The open metric picker.
    pub picker: Option<MetricPicker>,
    /// Show the table of runs side by side instead of the small charts.
    pub table: bool,
}

impl RunCharts {
    /// Whether `run` is pinned.
    pub fn is_pinned(&self, run: &str) -> bool {
        self.pinned.iter().any(|pinned| pinned.id == run)
    }

    /// Pins `run` (asking for its rows) or unpins it; refuses a pin past `MOST_PINNED`.
    pub fn toggle_pin(&mut self, run: &str) -> Result<Vec<Command>, String> {
        if let Some(index) = self.pinned.iter().position(|pinned| pinned.id == run) {
            self.pinned.remove(index);
            return Ok(Vec::new());
        }
        if self.pinned.len() >= MOST_PINNED {
            return Err(format!(
                "{MOST_PINNED} runs are pinned already: select one and press space to unpin it"
            ));
        }
        self.pinned.push(PinnedRun {
            id: run.to_string(),
            rows: Vec::new(),
        });
        Ok(vec![Command::LoadMetrics {
            run: run.to_string(),
        }])
    }

    /// Takes all rows of a run, if it is pinned.
    pub fn receive(&mut self, run: &str, rows: &[MetricsRow]) {
        if let Some(pinned) = self.pinned.iter_mut().find(|pinned| pinned.id == run) {
            pinned.rows = rows.to_vec();
        }
    }

    /// Takes new rows of a live run, if it is pinned.
    pub fn append(&mut self, run: &str, rows: &[MetricsRow]) {
        if let Some(pinned) = self.pinned.iter_mut().find(|pinned| pinned.id == run) {
            merge_rows(&mut pinned.rows, rows.to_vec());
        }
    }

    /// The pinned runs with their place among the pins (their colour), but not `selected`:
    /// a run is not overlaid on itself.
    pub fn overlays(&self, selected: Option<&str>) -> Vec<(usize, &PinnedRun)> {
        self.pinned
            .iter()
            .enumerate()
            .filter(|(_, pinned)| Some(pinned.id.as_str()) != selected)
            .collect()
    }

    /// Opens the picker over the metrics that `selected` rows and the pinned runs record.
    pub fn open_picker(&mut self, selected: &[MetricsRow]) {
        let runs = std::iter::once(selected).chain(self.pinned.iter().map(|run| &run.rows[..]));
        self.picker = Some(MetricPicker::new(charts::recorded_names(runs)));
    }

    /// Handles a key while the picker is open (`None` when it is closed): `enter` charts
    /// the highlighted metric or stops charting it.
    pub fn on_picker_key(&mut self, key: &KeyEvent) -> Option<()> {
        let picker = self.picker.as_mut()?;
        match picker.key(key) {
            PickerEvent::Editing => {}
            PickerEvent::Closed => self.picker = None,
            PickerEvent::Toggle(name) => self.toggle_chart(&name),
        }
        Some(())
    }

    /// Charts `name`, or stops charting it (no choice left: the preset again).
    pub fn toggle_chart(&mut self, name: &str) {
        match self.chosen.iter().position(|chosen| chosen == name) {
            Some(index) => {
                self.chosen.remove(index);
            }
            None => self.chosen.push(name.to_string()),
        }
    }
}

/// Merges new rows into rows held by step: a row for a step already held replaces it.
pub fn merge_rows(held: &mut Vec<MetricsRow>, rows: Vec<MetricsRow>) {
    for row in rows {
        match held.binary_search_by_key(&row.step, |old| old.step) {
            Ok(index) => held[index] = row,
            Err(index) => held.insert(index, row),
        }
    }
}
