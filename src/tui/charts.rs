//! Which charts the Runs tab draws: a chart's metric and the names it may be recorded under,
//! the presets per run kind, the metrics a user chose, every name the runs record, and a
//! metric's final and best values for the table of runs.

use super::series::{Points, latest};
use crate::trajectory::{MetricsRow, RunKind, metric};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::series::tests::row;

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
}
