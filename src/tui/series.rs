//! Chart series from metrics rows: smoothing, the ± std band, axis bounds and ticks, in
//! plain code apart from drawing (and unit-tested); which metric a chart reads is `charts`'.

use crate::trajectory::{MetricsRow, metric};

/// A metric's points as (step, value).
pub type Points = Vec<(f64, f64)>;

/// Weight of the newest value in the exponential moving average.
pub const SMOOTHING: f64 = 0.3;

/// The reward mean and its ± std band (lower, upper), from `reward` and `reward_std`.
pub fn reward_band(rows: &[MetricsRow]) -> (Points, Points, Points) {
    let mut mean = Vec::new();
    let mut lower = Vec::new();
    let mut upper = Vec::new();
    for row in rows {
        let Some(value) = row.get(metric::REWARD).filter(|value| value.is_finite()) else {
            continue;
        };
        let step = row.step as f64;
        mean.push((step, value));
        if let Some(std) = row.get(metric::REWARD_STD).filter(|std| std.is_finite()) {
            lower.push((step, value - std));
            upper.push((step, value + std));
        }
    }
    (mean, lower, upper)
}

/// An exponential moving average of the values (steps unchanged).
pub fn smooth(points: &[(f64, f64)], weight: f64) -> Points {
    let mut average: Option<f64> = None;
    points
        .iter()
        .map(|&(step, value)| {
            let next = average.map_or(value, |previous| previous + weight * (value - previous));
            average = Some(next);
            (step, next)
        })
        .collect()
}

/// Axis bounds covering every point of every series, padded by 5% of the span (never across
/// zero: values that are all ≥ 0 keep a floor ≥ 0, all ≤ 0 a ceiling ≤ 0); a flat or empty
/// series gets a unit-wide range so the chart still draws.
pub fn bounds(series: &[&[(f64, f64)]]) -> ([f64; 2], [f64; 2]) {
    let mut x = [f64::INFINITY, f64::NEG_INFINITY];
    let mut y = [f64::INFINITY, f64::NEG_INFINITY];
    for &(step, value) in series.iter().flat_map(|points| points.iter()) {
        x = [x[0].min(step), x[1].max(step)];
        y = [y[0].min(value), y[1].max(value)];
    }
    let fix = |range: [f64; 2], pad: bool| {
        if !range[0].is_finite() {
            return [0.0, 1.0];
        }
        let span = range[1] - range[0];
        if span <= f64::EPSILON * range[0].abs().max(1.0) {
            let value = range[0];
            return match value {
                0.0 => [0.0, 1.0],
                _ if value > 0.0 => [(value - 0.5).max(0.0), value + 0.5],
                _ => [value - 0.5, (value + 0.5).min(0.0)],
            };
        }
        let margin = if pad { span * 0.05 } else { 0.0 };
        let floor = range[0] - margin;
        let ceiling = range[1] + margin;
        [
            if range[0] >= 0.0 {
                floor.max(0.0)
            } else {
                floor
            },
            if range[1] <= 0.0 {
                ceiling.min(0.0)
            } else {
                ceiling
            },
        ]
    };
    (fix(x, false), fix(y, true))
}

/// A value for an axis label: few digits, scientific when tiny or huge.
pub fn axis_label(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude != 0.0 && !(1e-3..1e5).contains(&magnitude) {
        format!("{value:.1e}")
    } else if magnitude >= 100.0 {
        format!("{value:.0}")
    } else if magnitude >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    }
}

/// Labels for a step axis: up to `count` whole steps spread evenly from the first to the
/// last (fewer when the run has fewer steps).
pub fn step_ticks(bounds: [f64; 2], count: usize) -> Vec<String> {
    let (first, last) = (bounds[0].ceil(), bounds[1].floor().max(bounds[0].ceil()));
    let count = count.min((last - first) as usize + 1).max(2);
    (0..count)
        .map(|index| {
            let step = first + (last - first) * index as f64 / (count - 1) as f64;
            format!("{}", step.round() as i64)
        })
        .collect()
}

/// Labels for a value axis: `count` values spread evenly over the bounds.
pub fn value_ticks(bounds: [f64; 2], count: usize) -> Vec<String> {
    let count = count.max(2);
    (0..count)
        .map(|index| {
            axis_label(bounds[0] + (bounds[1] - bounds[0]) * index as f64 / (count - 1) as f64)
        })
        .collect()
}

/// A zig-zag between the lower and upper edge of a band, `per_step` strokes between two
/// steps, which a line chart draws as the band filled.
pub fn band_fill(lower: &[(f64, f64)], upper: &[(f64, f64)], per_step: usize) -> Points {
    let mut fill = Vec::new();
    let edges: Vec<_> = lower.iter().zip(upper).collect();
    for pair in edges.windows(2) {
        let (&(x0, low0), &(_, high0)) = pair[0];
        let (&(x1, low1), &(_, high1)) = pair[1];
        for stroke in 0..per_step.max(1) {
            let t = stroke as f64 / per_step.max(1) as f64;
            let x = x0 + (x1 - x0) * t;
            fill.push((x, low0 + (low1 - low0) * t));
            fill.push((x, high0 + (high1 - high0) * t));
        }
    }
    if let Some(&(&(x, low), &(_, high))) = edges.last() {
        fill.push((x, low));
        fill.push((x, high));
    }
    fill
}

/// The last value of a series.
pub fn latest(points: &[(f64, f64)]) -> Option<f64> {
    points.last().map(|&(_, value)| value)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn step_ticks_are_whole_steps() {
        assert_eq!(step_ticks([0.0, 49.0], 5), ["0", "12", "25", "37", "49"]);
        assert_eq!(step_ticks([1.0, 2.0], 5), ["1", "2"]);
        assert_eq!(value_ticks([0.0, 1.0], 3), ["0.000", "0.500", "1.00"]);
    }

    #[test]
    fn the_band_fill_strokes_between_its_edges() {
        let fill = band_fill(&[(0.0, 0.0), (1.0, 1.0)], &[(0.0, 2.0), (1.0, 3.0)], 2);
        assert_eq!(
            fill,
            [
                (0.0, 0.0),
                (0.0, 2.0),
                (0.5, 0.5),
                (0.5, 2.5),
                (1.0, 1.0),
                (1.0, 3.0)
            ]
        );
    }
    use std::collections::BTreeMap;

    /// A metrics row of run `r` at `step` with `values` (NaN kept, unlike training's rows).
    pub(crate) fn row(step: u64, values: &[(&str, f64)]) -> MetricsRow {
        MetricsRow {
            run: "r".into(),
            step,
            time: 0,
            values: values
                .iter()
                .map(|(name, value)| (name.to_string(), *value))
                .collect::<BTreeMap<_, _>>(),
        }
    }

    #[test]
    fn band_is_mean_plus_minus_std() {
        let rows = [
            row(3, &[("reward", 0.5), ("reward_std", 0.2)]),
            row(4, &[("reward", f64::NAN)]),
        ];
        let (mean, lower, upper) = reward_band(&rows);
        assert_eq!(mean, vec![(3.0, 0.5)]);
        assert!((lower[0].1 - 0.3).abs() < 1e-12 && (upper[0].1 - 0.7).abs() < 1e-12);
    }

    #[test]
    fn smoothing_is_an_exponential_average() {
        let smoothed = smooth(&[(0.0, 0.0), (1.0, 1.0), (2.0, 1.0)], 0.5);
        assert_eq!(smoothed, vec![(0.0, 0.0), (1.0, 0.5), (2.0, 0.75)]);
    }

    #[test]
    fn bounds_pad_values_and_survive_flat_and_empty_series() {
        let (x, y) = bounds(&[&[(0.0, 0.0), (10.0, 1.0)]]);
        assert_eq!(x, [0.0, 10.0]);
        assert!(
            y[0] == 0.0 && (y[1] - 1.05).abs() < 1e-12,
            "no floor below 0: {y:?}"
        );
        let (_, below) = bounds(&[&[(0.0, -1.0), (1.0, 1.0)]]);
        assert!(
            (below[0] + 1.1).abs() < 1e-12,
            "a negative series is padded: {below:?}"
        );
        let (_, negative) = bounds(&[&[(0.0, -1.0), (1.0, -0.0)]]);
        assert_eq!(negative[1], 0.0, "no ceiling above 0 for values ≤ 0");
        assert_eq!(bounds(&[&[(2.0, 3.0)]]), ([1.5, 2.5], [2.5, 3.5]));
        assert_eq!(
            bounds(&[&[(2.0, 0.0)]]).1,
            [0.0, 1.0],
            "a flat zero stays ≥ 0"
        );
        assert_eq!(bounds(&[&[(2.0, 0.2)]]).1, [0.0, 0.7]);
        assert_eq!(bounds(&[]), ([0.0, 1.0], [0.0, 1.0]));
        let (_, wide) = bounds(&[&[(0.0, 0.0)], &[(1.0, 100.0)]]);
        assert!(wide[1] > 100.0, "a second series widens the axis");
    }

    #[test]
    fn axis_labels_stay_short() {
        assert_eq!(axis_label(0.0), "0.000");
        assert_eq!(axis_label(1234.5), "1234");
        assert_eq!(axis_label(0.00002), "2.0e-5");
        assert_eq!(axis_label(-2.5), "-2.50");
    }
}
