//! Sessions: a folder per session under the sessions root, with its config, store, models,
//! runs and exports; private to their owner unless shared with a group (`privacy`).

pub mod privacy;

use crate::agent::reward::RewardConfig;
use crate::agent::tools::ExternalToolConfig;
use crate::agent::verifier::ExternalVerifierConfig;
use crate::curate::labels::LabelKinds;
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The environment variable that names the sessions root.
pub const SESSIONS_ENV: &str = "ROLLSCOPE_SESSIONS";

/// The `session.toml` a new session starts with (the shipped `default` session's, every
/// key commented out).
const SESSION_TEMPLATE: &str = include_str!("../../sessions/default/session.toml");

/// Where a session's files live.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionPaths {
    /// The session's name.
    pub name: String,
    /// Its folder.
    pub dir: PathBuf,
}

impl SessionPaths {
    /// The session `name` under `root`.
    pub fn new(root: &Path, name: &str) -> anyhow::Result<Self> {
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            && !name.starts_with('.');
        anyhow::ensure!(
            valid,
            "session name `{name}` may use only letters, digits, `-`, `_` and `.`"
        );
        Ok(Self {
            name: name.to_string(),
            dir: root.join(name),
        })
    }

    /// Whether the session exists: its folder holds a store or a `session.toml`.
    pub fn exists(&self) -> bool {
        self.store_dir().is_dir() || self.config_path().is_file()
    }

    /// Makes the session: its folder and a `session.toml` that lists the settings, all
    /// commented out (nothing is touched when it exists).
    pub fn create(&self) -> anyhow::Result<()> {
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("cannot create the session folder {}", self.dir.display()))?;
        let config = self.config_path();
        if !config.exists() {
            let text = SESSION_TEMPLATE.replacen("`default`", &format!("`{}`", self.name), 1);
            std::fs::write(&config, text)
                .with_context(|| format!("cannot write {}", config.display()))?;
        }
        Ok(())
    }

    /// The sled store.
    pub fn store_dir(&self) -> PathBuf {
        self.dir.join("store")
    }

    /// The session's config file.
    pub fn config_path(&self) -> PathBuf {
        self.dir.join("session.toml")
    }

    /// Policy versions, each a Hugging Face model folder.
    pub fn models_dir(&self) -> PathBuf {
        self.dir.join("models")
    }

    /// The embedded default model of the session, `models/base` (`rollscope model init`).
    pub fn base_model(&self) -> PathBuf {
        self.models_dir().join("base")
    }

    /// A run's folder (metrics copy, checkpoints).
    pub fn run_dir(&self, run: &str) -> PathBuf {
        self.dir.join("runs").join(run)
    }

    /// Curated datasets and their manifests.
    pub fn exports_dir(&self) -> PathBuf {
        self.dir.join("exports")
    }

    /// Reads the session config, or the defaults when the file does not exist.
    pub fn load_config(&self) -> anyhow::Result<SessionConfig> {
        SessionConfig::load(&self.config_path())
    }
}

/// The sessions root: the flag, else `$ROLLSCOPE_SESSIONS`, else `./sessions`.
pub fn sessions_root(flag: Option<&Path>) -> PathBuf {
    flag.map(Path::to_path_buf)
        .or_else(|| std::env::var_os(SESSIONS_ENV).map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("sessions"))
}

/// The session `name` under `root`, which must exist: commands that only read never make
/// one, so a mistyped name is an error that lists the sessions there and the one meant.
pub fn existing_session(root: &Path, name: &str) -> anyhow::Result<SessionPaths> {
    let paths = SessionPaths::new(root, name)?;
    if paths.exists() {
        return Ok(paths);
    }
    let names = list_sessions(root)?;
    let known: Vec<&str> = names.iter().map(String::as_str).collect();
    let hint = match crate::text::nearest(name, &known) {
        Some(near) => format!("did you mean `{near}`? "),
        None => String::new(),
    };
    let listed = match known.as_slice() {
        [] => "there are no sessions there yet".to_string(),
        known => format!("the sessions there: {}", known.join(", ")),
    };
    anyhow::bail!(
        "there is no session `{name}` under {} ({listed}); {hint}`rollscope import FILE --session {name}` \
         or `rollscope sessions new {name}` makes it",
        root.display()
    )
}

/// The names of the sessions under a root, sorted.
pub fn list_sessions(root: &Path) -> anyhow::Result<Vec<String>> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Ok(Vec::new());
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot read {}", root.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if SessionPaths::new(root, &name).is_ok_and(|session| session.exists()) {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// A session's settings, from `session.toml`. Every field has a default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SessionConfig {
    /// The TUI's theme: a name in `themes/` or a path to a theme file.
    pub theme: Option<String>,
    /// A keymap file that overrides the built-in keys.
    pub keymap: Option<PathBuf>,
    /// The current policy: a model folder (default: the session's newest policy version).
    pub model: Option<PathBuf>,
    /// Who annotations are attributed to (default: `$USER`, else the system's name for the
    /// user; see `SessionConfig::author`).
    pub annotator: Option<String>,
    /// Weights of the built-in outcome reward components (`[reward]`).
    pub reward: RewardConfig,
    /// External tools the policy may call, answered by commands (`[[tools]]`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ExternalToolConfig>,
    /// External verifiers whose scores join the outcome reward (`[[verifiers]]`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub verifiers: Vec<ExternalVerifierConfig>,
    /// The session's own error kinds, keys `5`–`9` (`[[labels]]`).
    #[serde(skip_serializing_if = "LabelKinds::is_empty")]
    pub labels: LabelKinds,
    /// Lines of each prompt message (the task) the trajectory view shows before folding the
    /// rest (`z` unfolds it; `:fold N` changes it for the TUI's run) [default: 12].
    pub task_lines: Option<usize>,
    /// The group that may read the session's files (`rollscope sessions share GROUP`); none:
    /// its owner's alone.
    pub share: Option<String>,
}

impl SessionConfig {
    /// Who this process's labels are attributed to: the session's `annotator`, else a
    /// non-empty `$USER` or `$LOGNAME`, else the system's name for the user running it.
    pub fn author(&self) -> Option<String> {
        let named = |value: Option<String>| value.filter(|name| !name.trim().is_empty());
        named(self.annotator.clone())
            .or_else(|| named(std::env::var("USER").ok()))
            .or_else(|| named(std::env::var("LOGNAME").ok()))
            .or_else(system_user_name)
    }

    /// Reads a config file; a missing file gives the defaults, a bad one names the line and
    /// the key (with the one probably meant).
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Self::default());
            }
            Err(error) => {
                return Err(error).with_context(|| format!("cannot read {}", path.display()));
            }
        };
        Ok(crate::config_file::from_toml(
            &text,
            &path.display().to_string(),
        )?)
    }
}

/// The name the password database gives the user running this process.
fn system_user_name() -> Option<String> {
    let mut entry = std::mem::MaybeUninit::<libc::passwd>::uninit();
    let mut buffer = vec![0 as libc::c_char; 4096];
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is to memory this function owns, sized as passed; on success
    // `found` points at `entry`, whose `pw_name` points into `buffer`, both alive here.
    let status = unsafe {
        libc::getpwuid_r(
            libc::getuid(),
            entry.as_mut_ptr(),
            buffer.as_mut_ptr(),
            buffer.len(),
            &mut found,
        )
    };
    // SAFETY: `found` is checked before it is read; on success it points at `entry`.
    if status != 0 || found.is_null() || unsafe { (*found).pw_name.is_null() } {
        return None;
    }
    // SAFETY: `found` is non-null, so `entry` was filled and `pw_name` is a C string in
    // `buffer`.
    let name = unsafe { std::ffi::CStr::from_ptr((*found).pw_name) };
    Some(name.to_string_lossy().into_owned()).filter(|name| !name.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::tools::CommandLine;

    #[test]
    fn tools_verifiers_and_reward_weights_parse() {
        let text = r#"
theme = "dark"

[reward]
format = 0.2
length_budget = 512

[[tools]]
name = "weather"
description = "Today's weather in a city."
parameters = { type = "object", properties = { city = { type = "string" } }, required = ["city"] }
command = ["python3", "tools/weather.py"]
timeout_ms = 5000

[[tools]]
name = "echo"
command = "cat"

[[verifiers]]
name = "units"
command = "sh verify.sh"
weight = 0.5
"#;
        let config: SessionConfig = toml::from_str(text).unwrap();
        assert_eq!(config.reward.format, 0.2);
        assert_eq!(config.reward.correct, 1.0);
        assert_eq!(config.reward.length_budget, 512);
        assert_eq!(config.tools.len(), 2);
        let weather = &config.tools[0];
        assert_eq!(
            weather.command,
            CommandLine::Argv(vec!["python3".into(), "tools/weather.py".into()])
        );
        assert_eq!(weather.parameters["required"][0], "city");
        assert_eq!(weather.timeout_ms, 5000);
        assert_eq!(config.tools[1].command, CommandLine::Shell("cat".into()));
        assert_eq!(config.tools[1].timeout_ms, 10_000);
        assert_eq!(config.verifiers[0].weight, 0.5);
        let back: SessionConfig = toml::from_str(&toml::to_string(&config).unwrap()).unwrap();
        assert_eq!(back, config);
    }

    #[test]
    fn a_misspelt_tool_field_is_named() {
        let text = "[[tools]]\nname = \"x\"\ncommand = \"cat\"\ntimeout = 5\n";
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.toml");
        std::fs::write(&path, text).unwrap();
        let error = SessionConfig::load(&path).unwrap_err().to_string();
        assert_eq!(
            error,
            format!(
                "{}:4: unknown key `timeout` in [[tools]] (entry 1); did you mean `timeout_ms`?",
                path.display()
            )
        );
    }
}
