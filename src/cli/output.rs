//! Plain-text rendering helpers for the CLI: numbers with units, tables that fit.

use crate::curate::labels::LabelKinds;
use crate::store::Summary;

/// A reward or score with two decimals, or `–` when missing.
pub fn decimal(value: Option<f64>) -> String {
    value.map_or_else(|| "–".to_string(), |value| format!("{value:.2}"))
}

/// `run·step`, `group·sample` style coordinates.
pub fn coordinates(first: Option<String>, second: Option<String>) -> String {
    match (first, second) {
        (None, None) => "–".into(),
        (first, second) => format!(
            "{}·{}",
            first.unwrap_or_else(|| "–".into()),
            second.unwrap_or_else(|| "–".into())
        ),
    }
}

/// The labels of a summary: confirmed as names (the session's for its own kinds), suggested
/// with a `?`.
pub fn labels(summary: &Summary, kinds: &LabelKinds) -> String {
    let confirmed = summary
        .confirmed_kinds()
        .map(|kind| kinds.name(kind).to_string());
    let suggested = summary
        .suggested_kinds()
        .map(|kind| format!("{}?", kinds.name(kind)));
    confirmed.chain(suggested).collect::<Vec<_>>().join(" ")
}

/// Cuts text to `width` characters with an ellipsis.
pub fn truncate(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// One line of the `list` table.
pub fn summary_row(summary: &Summary, kinds: &LabelKinds) -> String {
    let run_step = coordinates(
        (!summary.run.is_empty()).then(|| summary.run.clone()),
        summary.step.map(|step| step.to_string()),
    );
    let group_sample = coordinates(
        summary.group.map(|group| group.to_string()),
        summary.sample.map(|sample| (sample + 1).to_string()),
    );
    format!(
        "{:<16} {:<20} {:<16} {:<9} {:>6} {:>5} {:>7}  {:<10} {}",
        summary.id,
        truncate(&summary.task_id, 20),
        truncate(&run_step, 16),
        group_sample,
        decimal(summary.reward),
        summary.turns,
        decimal(summary.prm_min),
        truncate(&summary.stop, 10),
        labels(summary, kinds)
    )
}

/// The header of the `list` table.
pub fn summary_header() -> String {
    format!(
        "{:<16} {:<20} {:<16} {:<9} {:>6} {:>5} {:>7}  {:<10} {}",
        "id", "task", "run·step", "group·s", "reward", "turns", "PRM min", "stop", "labels"
    )
}

/// A byte count in KiB/MiB/GiB.
pub fn bytes(count: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = count as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{count} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}
