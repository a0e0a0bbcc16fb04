//! Chart series from metrics rows: points, smoothing, the ± std band and axis bounds, in
//! plain code apart from drawing (and unit-tested).

use crate::trajectory::metric;
use crate::trajectory::{MetricsRow, RunKind};

/// A metric's points as (step, value).
pub type Points = Vec<(f64, f64)>;

/// Weight of the newest value in the exponential moving average.
pub const SMOOTHING: f64 = 0.3;

/// A chart: which metric, under which names it may be recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metric {
    /// The chart's title.
    pub title: String,
    /// Names the metric is recorded under, most usual first.
    pub names: Vec<String>,
}

impl Metric {
    /// A chart titled `title` of the first of `names` a run records.
    pub fn new(title: &str, names: &[&str]) -> Self {
        Self {
            title: title.to_string(),
            names: names.iter().map(|name| name.to_string()).collect(),
        }
    }

    /// A chart of the metric recorded as `name`, titled by it.
    pub fn named(name: &str) -> Self {
        Self::new(name, &[name])
    }

    /// Whether the metric is recorded as one of `names` (a chart the main chart already
    /// draws, say).
    pub fn is_one_of(&self, names: &[&str]) -> bool {
        self.names.iter().any(|name| names.contains(&name.as_str()))
    }

    /// The reward, as the overlay of the reward chart reads it.
    pub fn reward() -> Self {
        Self::new("reward", &[metric::REWARD])
    }

    /// The loss: the main chart of a run without rewards (SFT).
    pub fn loss() -> Self {
        Self::new("loss", &[metric::LOSS])
    }
}

/// A preset chart: its title and the names its metric may be recorded under.
type Preset = (&'static str, &'static [&'static str]);

/// The small charts under the reward chart, in order.
const GRPO_CHARTS: [Preset; 7] = [
    (
        "KL",
        &[
            metric::KL,
            metric::foreign::TRL_KL,
            metric::foreign::VERL_KL_LOSS,
        ],
    ),
    (
        "grad norm",
        &[metric::GRAD_NORM, metric::foreign::VERL_GRAD_NORM],
    ),
    ("entropy", &[metric::ENTROPY, metric::foreign::VERL_ENTROPY]),
    (
        "clip ratio",
        &[
            metric::CLIP_REGION,
            metric::foreign::TRL_CLIP_RATIO,
            metric::foreign::VERL_CLIP_FRACTION,
        ],
    ),
    (
        "length",
        &[metric::MEAN_LENGTH, metric::foreign::VERL_RESPONSE_LENGTH],
    ),
    (
        "success",
        &[metric::SUCCESS_RATE, metric::foreign::ACCURACY],
    ),
    (
        "eval accuracy",
        &[metric::EVAL_ACCURACY, metric::foreign::EVAL_ACCURACY],
    ),
];

/// The small charts under an SFT run's loss chart, in order.
const SFT_CHARTS: [Preset; 5] = [
    ("token accuracy", &[metric::MEAN_TOKEN_ACCURACY]),
    ("grad norm", &[metric::GRAD_NORM]),
    ("learning rate", &[metric::LEARNING_RATE]),
    ("tokens/s", &[metric::TOKENS_PER_SECOND]),
    ("eval accuracy", &[metric::EVAL_ACCURACY]),
];

/// The small charts of a run of `kind`: the metrics the user chose (`chosen`, by recorded
/// name), else the preset of the kind (SFT runs have no rewards; others have the GRPO set).
pub fn small_charts(kind: Option<RunKind>, chosen: &[String]) -> Vec<Metric> {
    if !chosen.is_empty() {
        return chosen.iter().map(|name| Metric::named(name)).collect();
    }
    let presets: &[Preset] = match kind {
        Some(RunKind::Sft) => &SFT_CHARTS,
        _ => &GRPO_CHARTS,
    };
    presets
        .iter()
        .map(|(title, names)| Metric::new(title, names))
        .collect()
}

/// Every metric name `runs` record, sorted.
pub fn recorded_names<'a>(runs: impl IntoIterator<Item = &'a [MetricsRow]>) -> Vec<String> {
    let names: std::collections::BTreeSet<&str> = runs
        .into_iter()
        .flatten()
        .flat_map(|row| row.values.keys().map(String::as_str))
        .collect();
    names.into_iter().map(str::to_string).collect()
}

/// The last value of `metric` and its best: the lowest for a metric where lower is better
/// (losses, KL, errors, failures), else the highest.
pub fn final_and_best(rows: &[MetricsRow], metric: &Metric) -> Option<(f64, f64)> {
    let points = points(rows, metric);
    let last = latest(&points)?;
    let values = points.iter().map(|&(_, value)| value);
    let best = if lower_is_better(&metric.title) {
        values.fold(f64::INFINITY, f64::min)
    } else {
        values.fold(f64::NEG_INFINITY, f64::max)
    };
    Some((last, best))
}

/// Whether a smaller value of the metric titled or named `name` is the better one.
pub fn lower_is_better(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    [
        "loss",
        "kl",
        "error",
        "fail",
        "perplexity",
        "zero_std",
        "grad",
        "time",
    ]
    .iter()
    .any(|word| name.contains(word))
}

/// The points of the first name of `metric` that the rows record.
pub fn points(rows: &[MetricsRow], metric: &Metric) -> Points {
    for name in &metric.names {
        let found: Points = rows
            .iter()
            .filter_map(|row| row.get(name).map(|value| (row.step as f64, value)))
            .filter(|(_, value)| value.is_finite())
            .collect();
        if !found.is_empty() {
            return found;
        }
    }
    Vec::new()
}

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
mod tests {
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

    fn row(step: u64, values: &[(&str, f64)]) -> MetricsRow {
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
    fn points_use_the_first_recorded_name() {
        let rows = [
            row(0, &[("actor/kl_loss", 0.5)]),
            row(1, &[("actor/kl_loss", 0.7)]),
        ];
        let charts = small_charts(Some(RunKind::Grpo), &[]);
        assert_eq!(points(&rows, &charts[0]), vec![(0.0, 0.5), (1.0, 0.7)]);
        assert!(points(&rows, &charts[1]).is_empty());
        let chosen = small_charts(Some(RunKind::Grpo), &["actor/kl_loss".to_string()]);
        assert_eq!(chosen, vec![Metric::named("actor/kl_loss")]);
        assert_eq!(recorded_names([&rows[..]]), ["actor/kl_loss"]);
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
    fn final_and_best_know_which_way_is_better() {
        let rows = [
            row(0, &[("loss", 2.0), ("reward", 0.2)]),
            row(1, &[("loss", 1.0), ("reward", 0.9)]),
            row(2, &[("loss", 1.5), ("reward", 0.5)]),
        ];
        assert_eq!(final_and_best(&rows, &Metric::loss()), Some((1.5, 1.0)));
        assert_eq!(final_and_best(&rows, &Metric::reward()), Some((0.5, 0.9)));
        assert_eq!(final_and_best(&rows, &Metric::named("kl")), None);
    }

    #[test]
    fn axis_labels_stay_short() {
        assert_eq!(axis_label(0.0), "0.000");
        assert_eq!(axis_label(1234.5), "1234");
        assert_eq!(axis_label(0.00002), "2.0e-5");
        assert_eq!(axis_label(-2.5), "-2.50");
    }
}
