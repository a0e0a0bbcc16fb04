//! What the Runs tab's charts and table draw: the selected run's rows, the pinned runs' with
//! their colours, smoothing, the small charts' metrics and the step cursor.

use crate::trajectory::MetricsRow;
use crate::tui::charts::{self, Metric};
use crate::tui::series::{self, Points, SMOOTHING};
use ratatui::style::Color;

/// A pinned run drawn over the selected one's charts.
pub struct Overlay<'a> {
    /// Its id.
    pub run: &'a str,
    /// Its metrics rows.
    pub rows: &'a [MetricsRow],
    /// Its colour.
    pub color: Color,
}

/// What the charts draw: the selected run's rows, the pinned runs', and smoothing.
pub struct Curves<'a> {
    pub rows: &'a [MetricsRow],
    pub selected: &'a str,
    pub overlays: Vec<Overlay<'a>>,
    pub smoothing: bool,
    /// The small charts' metrics.
    pub small: Vec<Metric>,
    /// The step the user put the cursor on, marked on every chart.
    pub cursor: Option<u64>,
}

impl Curves<'_> {
    /// `points` smoothed when smoothing is on.
    pub fn smooth(&self, points: Points) -> Points {
        if self.smoothing {
            series::smooth(&points, SMOOTHING)
        } else {
            points
        }
    }

    /// The cursor's vertical line across `y`, when the user put it on a step.
    pub fn cursor_points(&self, y: [f64; 2]) -> Vec<(f64, f64)> {
        self.cursor
            .map(|step| vec![(step as f64, y[0]), (step as f64, y[1])])
            .unwrap_or_default()
    }

    /// Each pinned run's colour and its points of `metric`.
    pub fn overlay_points(&self, metric: &Metric) -> Vec<(Color, Points)> {
        self.overlays
            .iter()
            .map(|overlay| {
                let points = self.smooth(charts::points(overlay.rows, metric));
                (overlay.color, points)
            })
            .collect()
    }
}
