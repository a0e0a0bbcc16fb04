//! A run's life on disk and in the store: its id and `RunInfo`, its folder
//! (`runs/<run>/config.toml`, `metrics.jsonl`, `checkpoints/checkpoint-<step>/`), the model
//! it starts from, and the clean-up a resume needs so no row or trajectory is duplicated.

use super::config::RunConfig;
use super::policy::{PolicyRequest, resolve_policy};
use crate::session::SessionPaths;
use crate::store::{Filter, Query, Store};
use crate::trajectory::RunSettings;
use crate::trajectory::{RunInfo, RunKind, RunStatus};
use anyhow::Context;
use std::path::{Path, PathBuf};

/// The files of one run.
#[derive(Clone, Debug)]
pub struct RunFiles {
    /// `runs/<run>/` in the session.
    pub dir: PathBuf,
}

impl RunFiles {
    /// The files of `run` in the session.
    pub fn of(paths: &SessionPaths, run: &str) -> Self {
        Self {
            dir: paths.run_dir(run),
        }
    }

    /// The config the run was started with.
    pub fn config(&self) -> PathBuf {
        self.dir.join("config.toml")
    }

    /// One metrics row per step.
    pub fn metrics(&self) -> PathBuf {
        self.dir.join("metrics.jsonl")
    }

    /// Where checkpoints go.
    pub fn checkpoints(&self) -> PathBuf {
        self.dir.join("checkpoints")
    }
}

/// The folder a run starts from, by the one policy rule (`policy::resolve_policy`) with the
/// config's `model` in the run config's place.
pub fn starting_model(
    store: &Store,
    paths: &SessionPaths,
    config: &RunConfig,
) -> anyhow::Result<PathBuf> {
    let request = PolicyRequest {
        flag: None,
        run_config: config.model.clone(),
    };
    Ok(resolve_policy(paths, &request, || Ok(store.runs()?))?.dir)
}

/// Registers a new run: a fresh id, its folder with the config, and its `RunInfo`.
pub fn start_run(
    store: &Store,
    paths: &SessionPaths,
    config: &RunConfig,
    kind: RunKind,
    model: &Path,
    total_steps: u64,
) -> anyhow::Result<(RunInfo, RunFiles)> {
    let template = RunInfo {
        config: RunSettings::Training(Box::new(config.clone())),
        note: Some(config.name.clone()),
        process: Some(super::live::this_process()),
        stage: config.stage,
        ..RunInfo::new(
            String::new(),
            kind,
            config.seed,
            model.display().to_string(),
            total_steps,
        )
    };
    let id = store.create_run(&template)?;
    let info = RunInfo { id, ..template };
    let files = RunFiles::of(paths, &info.id);
    std::fs::create_dir_all(&files.dir)
        .with_context(|| format!("cannot create {}", files.dir.display()))?;
    std::fs::write(files.config(), config.to_toml()?)
        .with_context(|| format!("cannot write {}", files.config().display()))?;
    Ok((info, files))
}

/// The stored run `id` and its config, to resume it.
pub fn load_run(
    store: &Store,
    paths: &SessionPaths,
    id: &str,
) -> anyhow::Result<(RunInfo, RunConfig, RunFiles)> {
    let info = store.get_run(id)?.with_context(|| {
        format!(
            "no run `{id}` in session `{}`; `rollscope sessions` and the Runs tab list them",
            paths.name
        )
    })?;
    let files = RunFiles::of(paths, id);
    let config = RunConfig::load(&files.config())?;
    Ok((info, config, files))
}

/// Removes what steps after `step` left behind: metrics rows past it and the trajectories of
/// the run (and its evaluations) sampled by policy versions that the resumed run will
/// sample again. Returns the trajectories removed.
pub fn discard_after(store: &Store, run: &str, step: u64) -> anyhow::Result<usize> {
    store.truncate_metrics(run, step)?;
    let mut removed = 0;
    for (name, first_stale) in [(run.to_string(), step), (eval_run(run), step + 1)] {
        let filter = Filter {
            run: Some(name),
            ..Filter::default()
        };
        let stale: Vec<_> = store
            .query(&Query {
                filter,
                ..Query::default()
            })?
            .into_iter()
            .filter(|summary| summary.step.is_some_and(|version| version >= first_stale))
            .map(|summary| summary.id)
            .collect();
        removed += store.delete_trajectories(&stale)?;
    }
    Ok(removed)
}

/// The run name evaluation trajectories of `run` are stored under.
pub fn eval_run(run: &str) -> String {
    format!("{run}/eval")
}

/// Marks the run's progress and status in the store.
pub fn record_status(
    store: &Store,
    info: &mut RunInfo,
    step: u64,
    status: RunStatus,
) -> anyhow::Result<()> {
    info.step = step;
    info.status = status;
    info.activity = None;
    store.put_run(info)?;
    Ok(())
}
