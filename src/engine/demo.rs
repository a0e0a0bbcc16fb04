//! Demo data: fills a store with synthetic GRPO rollouts (from `synthetic`), their tasks, the
//! run's record and per-step metrics rows, so the TUI, its tests and its benchmark have a
//! realistic session to show.

use crate::store::{Store, StoreResult};
use crate::synthetic::{self, GROUP_SIZE, SyntheticSpec};
use crate::trajectory::RunSettings;
use crate::trajectory::metric;
use crate::trajectory::{MetricsRow, RunInfo, RunKind, RunStatus, Trajectory};
use std::collections::BTreeMap;

/// The run every synthetic trajectory belongs to.
pub const DEMO_RUN: &str = "grpo-0001";

/// How many trajectories are written per store batch.
const BATCH: u64 = 1000;

/// The layout of a demo set of `count` trajectories: about 50 training steps, half of the
/// trajectories with a token trace of `trace_tokens` tokens.
pub fn spec(count: u64, trace_tokens: usize) -> SyntheticSpec {
    let per_step = (count / 50).max(GROUP_SIZE) / GROUP_SIZE * GROUP_SIZE;
    SyntheticSpec {
        count,
        per_step,
        trace_tokens,
        ..SyntheticSpec::default()
    }
}

/// Writes the demo set into `store`, calling `progress` with the number written so far.
pub fn fill(store: &Store, spec: &SyntheticSpec, mut progress: impl FnMut(u64)) -> StoreResult<()> {
    let steps = spec.count.div_ceil(spec.per_step.max(1));
    let mut step_rows: BTreeMap<u64, Vec<(f64, bool, u32, u64)>> = BTreeMap::new();
    let mut start = 0;
    while start < spec.count {
        let end = (start + BATCH).min(spec.count);
        let trajectories: Vec<Trajectory> = (start..end)
            .map(|index| synthetic::trajectory(index, spec))
            .collect();
        let tasks: Vec<_> = (start..end)
            .filter(|index| index % GROUP_SIZE == 0)
            .map(|index| synthetic::task(index, spec))
            .collect();
        for trajectory in &trajectories {
            let reward = trajectory
                .reward
                .as_ref()
                .map_or(0.0, |reward| reward.total);
            step_rows
                .entry(trajectory.policy_version.unwrap_or(0))
                .or_default()
                .push((
                    reward,
                    trajectory.passed() == Some(true),
                    trajectory.turn_count() as u32,
                    trajectory.group.unwrap_or(0),
                ));
        }
        store.put_tasks(&tasks)?;
        store.put_trajectories(&trajectories)?;
        start = end;
        progress(end);
    }
    store.put_run(&RunInfo {
        status: RunStatus::Done,
        config: RunSettings::Demo {
            group_size: GROUP_SIZE as u32,
        },
        created_at: 1_700_000_000_000,
        step: steps.saturating_sub(1),
        note: Some("synthetic demo data (rollscope demo-data)".into()),
        ..RunInfo::new(
            DEMO_RUN.into(),
            RunKind::Grpo,
            spec.seed,
            "synthetic".into(),
            steps,
        )
    })?;

    for (step, rows) in &step_rows {
        store.put_metrics(&metrics_row(*step, rows))?;
    }
    Ok(())
}

/// The metrics row of one step: reward figures measured on the step's trajectories, the
/// optimiser figures (KL, grad norm, entropy, clip ratio) from smooth deterministic curves.
fn metrics_row(step: u64, rows: &[(f64, bool, u32, u64)]) -> MetricsRow {
    let count = rows.len().max(1) as f64;
    let mean = rows.iter().map(|row| row.0).sum::<f64>() / count;
    let variance = rows.iter().map(|row| (row.0 - mean).powi(2)).sum::<f64>() / count;
    let mut groups: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
    for row in rows {
        let entry = groups.entry(row.3).or_insert((f64::MAX, f64::MIN));
        entry.0 = entry.0.min(row.0);
        entry.1 = entry.1.max(row.0);
    }
    let zero_std = groups.values().filter(|(low, high)| low == high).count() as f64
        / groups.len().max(1) as f64;
    let t = step as f64;
    let wobble = (t * 0.7).sin();
    let mut values = BTreeMap::new();
    values.insert(metric::REWARD.into(), mean);
    values.insert(metric::REWARD_STD.into(), variance.sqrt());
    values.insert(
        metric::SUCCESS_RATE.into(),
        rows.iter().filter(|row| row.1).count() as f64 / count,
    );
    values.insert(metric::FRAC_REWARD_ZERO_STD.into(), zero_std);
    values.insert(
        metric::NUM_TURNS.into(),
        rows.iter().map(|row| f64::from(row.2)).sum::<f64>() / count,
    );
    values.insert(
        metric::KL.into(),
        0.002 * t.powf(0.8) * (1.0 + 0.1 * wobble),
    );
    values.insert(
        metric::GRAD_NORM.into(),
        2.5 / (1.0 + 0.05 * t) + 0.2 * wobble,
    );
    values.insert(
        metric::ENTROPY.into(),
        1.6 - 0.4 * (1.0 - (-t / 30.0).exp()),
    );
    values.insert(
        metric::CLIP_REGION.into(),
        0.02 + 0.01 * (t * 1.3).sin().abs(),
    );
    values.insert(
        metric::MEAN_LENGTH.into(),
        180.0 - 40.0 * (1.0 - (-t / 25.0).exp()) + 6.0 * wobble,
    );
    values.insert(metric::LEARNING_RATE.into(), 1e-6);
    if step.is_multiple_of(10) {
        values.insert(
            metric::EVAL_ACCURACY.into(),
            0.45 + 0.2 * (1.0 - (-t / 40.0).exp()),
        );
    }
    MetricsRow {
        run: DEMO_RUN.into(),
        step,
        time: 1_700_000_000_000 + step as i64 * 60_000,
        values,
    }
}
