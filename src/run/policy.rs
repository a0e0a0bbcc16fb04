//! Which model folder a command works with: one rule for every command, training included.
//!
//! In order: the `--model` flag, the run config's `model`, session.toml's `model`, the
//! session's newest policy by its run records (the final policy `models/<run>` of the SFT or
//! GRPO run created last), then `models/base` (what `rollscope model init` writes).

use crate::session::SessionPaths;
use crate::trajectory::{RunInfo, RunKind};
use std::path::{Path, PathBuf};

/// What a command was told about its policy, strongest first.
#[derive(Clone, Debug, Default)]
pub struct PolicyRequest {
    /// The `--model DIR` flag.
    pub flag: Option<PathBuf>,
    /// The run config's `model` key.
    pub run_config: Option<PathBuf>,
}

impl PolicyRequest {
    /// A request with only the `--model` flag (which may be absent).
    pub fn flag(flag: Option<&Path>) -> Self {
        Self {
            flag: flag.map(Path::to_path_buf),
            run_config: None,
        }
    }
}

/// Where a resolved policy came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicySource {
    /// The `--model` flag.
    Flag,
    /// The run config's `model`.
    RunConfig,
    /// session.toml's `model`.
    Session,
    /// The final policy of the session's newest SFT or GRPO run.
    NewestRun,
    /// The session's `models/base`.
    Base,
}

impl PolicySource {
    /// How a message names the source, e.g. `session.toml's model`.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Flag => "--model",
            Self::RunConfig => "the run config's model",
            Self::Session => "session.toml's model",
            Self::NewestRun => "the session's newest run",
            Self::Base => "the session's base model",
        }
    }
}

/// A model folder and why it was chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedPolicy {
    /// The Hugging Face model folder.
    pub dir: PathBuf,
    /// Which rule chose it.
    pub source: PolicySource,
}

/// Resolves the policy of a command. `runs` gives the session's run records; it is called
/// only when neither the flag, the run config nor session.toml names a folder, so commands
/// that are told their model never open the store.
pub fn resolve_policy(
    paths: &SessionPaths,
    request: &PolicyRequest,
    runs: impl FnOnce() -> anyhow::Result<Vec<RunInfo>>,
) -> anyhow::Result<ResolvedPolicy> {
    let session = paths.load_config()?;
    let named = [
        (request.flag.as_ref(), PolicySource::Flag),
        (request.run_config.as_ref(), PolicySource::RunConfig),
        (session.model.as_ref(), PolicySource::Session),
    ];
    if let Some((dir, source)) = named
        .into_iter()
        .find_map(|(dir, source)| dir.map(|dir| (dir, source)))
    {
        anyhow::ensure!(
            dir.join("config.json").is_file(),
            "{} = {}: no config.json there; give a Hugging Face model folder \
             (`rollscope model init --dir DIR` builds the embedded default)",
            source.describe(),
            dir.display()
        );
        return Ok(ResolvedPolicy {
            dir: dir.clone(),
            source,
        });
    }
    if let Some(dir) = newest_run_policy(paths, &runs()?) {
        return Ok(ResolvedPolicy {
            dir,
            source: PolicySource::NewestRun,
        });
    }
    let base = paths.base_model();
    anyhow::ensure!(
        base.join("config.json").is_file(),
        "session `{}` has no model yet: run `rollscope model init` (the embedded default), \
         pass --model DIR, or set `model = \"DIR\"` in session.toml or the run config",
        paths.name
    );
    Ok(ResolvedPolicy {
        dir: base,
        source: PolicySource::Base,
    })
}

/// The final policy of the newest SFT or GRPO run that saved one.
fn newest_run_policy(paths: &SessionPaths, runs: &[RunInfo]) -> Option<PathBuf> {
    runs.iter()
        .filter(|run| matches!(run.kind, RunKind::Sft | RunKind::Grpo))
        .map(|run| (run, paths.models_dir().join(&run.id)))
        .filter(|(_, dir)| dir.join("config.json").is_file())
        .max_by(|(a, _), (b, _)| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)))
        .map(|(_, dir)| dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model_folder(dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("config.json"), "{}").unwrap();
    }

    fn run(id: &str, kind: RunKind, created_at: i64) -> RunInfo {
        RunInfo {
            created_at,
            ..RunInfo::new(id.into(), kind, 0, "base".into(), 1)
        }
    }

    #[test]
    fn the_rules_apply_in_order() {
        let root = tempfile::tempdir().unwrap();
        let paths = SessionPaths::new(root.path(), "s").unwrap();
        let none = || Ok(Vec::new());
        let error = resolve_policy(&paths, &PolicyRequest::default(), none).unwrap_err();
        assert!(error.to_string().contains("has no model yet"), "{error}");
        model_folder(&paths.models_dir().join("base"));
        let base = resolve_policy(&paths, &PolicyRequest::default(), none).unwrap();
        assert_eq!(base.source, PolicySource::Base);
        // The run created last wins, whatever the folders' file times; an eval run or a run
        // without a saved policy does not count.
        model_folder(&paths.models_dir().join("sft-0002"));
        model_folder(&paths.models_dir().join("sft-0001"));
        let runs = || {
            Ok(vec![
                run("sft-0001", RunKind::Sft, 10),
                run("sft-0002", RunKind::Sft, 20),
                run("grpo-0001", RunKind::Grpo, 30),
                run("eval-0001", RunKind::Eval, 40),
            ])
        };
        let newest = resolve_policy(&paths, &PolicyRequest::default(), runs).unwrap();
        assert_eq!(newest.dir, paths.models_dir().join("sft-0002"));
        assert_eq!(newest.source, PolicySource::NewestRun);
        let custom = root.path().join("custom");
        model_folder(&custom);
        std::fs::create_dir_all(&paths.dir).unwrap();
        let toml = format!("model = {:?}\n", custom.display().to_string());
        std::fs::write(paths.config_path(), toml).unwrap();
        let session = resolve_policy(&paths, &PolicyRequest::default(), runs).unwrap();
        assert_eq!(
            (session.dir, session.source),
            (custom, PolicySource::Session)
        );
        let base_dir = paths.models_dir().join("base");
        let request = PolicyRequest {
            flag: None,
            run_config: Some(base_dir.clone()),
        };
        let configured = resolve_policy(&paths, &request, runs).unwrap();
        assert_eq!(configured.source, PolicySource::RunConfig);
        let flagged = resolve_policy(&paths, &PolicyRequest::flag(Some(&base_dir)), runs).unwrap();
        assert_eq!(flagged.source, PolicySource::Flag);
        let missing = PolicyRequest::flag(Some(&root.path().join("nowhere")));
        let error = resolve_policy(&paths, &missing, runs).unwrap_err();
        assert!(
            error.to_string().contains("no config.json there"),
            "{error}"
        );
    }
}
