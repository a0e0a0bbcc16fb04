//! The Runs tab's state: the run list, the selected run's metrics rows (kept current as new
//! rows arrive), and the smoothing toggle.

use super::action::Action;
use super::outcome::Outcome;
use crate::engine::Command;
use crate::trajectory::{MetricsRow, RunInfo};

/// The Runs tab's state.
#[derive(Clone, Debug, Default)]
pub struct RunsState {
    /// Every run, oldest first.
    pub runs: Vec<RunInfo>,
    /// Whether the run list has arrived.
    pub loaded: bool,
    /// The selected run.
    pub selected: usize,
    /// The run whose rows are held.
    pub metrics_run: Option<String>,
    /// Its metrics rows, by step.
    pub rows: Vec<MetricsRow>,
    /// Smooth the charts.
    pub smoothing: bool,
}

impl RunsState {
    /// The selected run.
    pub fn selected_run(&self) -> Option<&RunInfo> {
        self.runs.get(self.selected)
    }

    /// Takes the run list; asks for the selected run's metrics.
    pub fn receive_runs(&mut self, runs: Vec<RunInfo>) -> Vec<Command> {
        let previous = self.selected_run().map(|run| run.id.clone());
        self.runs = runs;
        self.loaded = true;
        self.selected = previous
            .and_then(|id| self.runs.iter().position(|run| run.id == id))
            .unwrap_or(self.runs.len().saturating_sub(1));
        self.request_metrics()
    }

    fn request_metrics(&mut self) -> Vec<Command> {
        let Some(run) = self.selected_run().map(|run| run.id.clone()) else {
            return Vec::new();
        };
        if self.metrics_run.as_ref() == Some(&run) {
            return Vec::new();
        }
        self.metrics_run = Some(run.clone());
        self.rows.clear();
        vec![Command::LoadMetrics { run }]
    }

    /// Takes all rows of a run.
    pub fn receive_metrics(&mut self, run: &str, rows: Vec<MetricsRow>) {
        if self.metrics_run.as_deref() == Some(run) {
            self.rows = rows;
        }
    }

    /// Takes new rows of a live run: a row for a step already held replaces it. The run's
    /// record advances to the newest step.
    pub fn append_metrics(&mut self, run: &str, rows: Vec<MetricsRow>) {
        if let Some(info) = self.runs.iter_mut().find(|info| info.id == run)
            && let Some(newest) = rows.iter().map(|row| row.step).max()
        {
            info.step = info.step.max(newest);
        }
        if self.metrics_run.as_deref() != Some(run) {
            return;
        }
        for row in rows {
            match self.rows.binary_search_by_key(&row.step, |held| held.step) {
                Ok(index) => self.rows[index] = row,
                Err(index) => self.rows.insert(index, row),
            }
        }
    }

    /// Handles an action.
    pub fn on_action(&mut self, action: Action) -> Outcome {
        match action {
            Action::Down if self.selected + 1 < self.runs.len() => {
                self.selected += 1;
                Outcome::Commands(self.request_metrics())
            }
            Action::Up if self.selected > 0 => {
                self.selected -= 1;
                Outcome::Commands(self.request_metrics())
            }
            Action::Smoothing => {
                self.smoothing = !self.smoothing;
                Outcome::Commands(Vec::new())
            }
            Action::Up | Action::Down => Outcome::Commands(Vec::new()),
            _ => Outcome::Ignored,
        }
    }
}
