//! `--set KEY=VALUE` overrides and `--sweep KEY=V1,V2` grids over run-config keys, applied to
//! a config file. Values are read as TOML (`1e-4`, `true`, `"arith:3"`), falling back to a
//! plain string. The file is checked first (errors name its lines), then every override on
//! its own (errors name the flag), then each point of the grid as a whole.

use super::config::RunConfig;
use crate::config_file::{ConfigError, ConfigErrorKind, from_toml, value_error};
use anyhow::Context;
use serde::Deserialize;
use toml::{Table, Value};

/// A run config file and the overrides given with it.
#[derive(Clone, Copy, Debug)]
pub struct ConfigSource<'a> {
    /// Where the text comes from (the file's path), for errors.
    pub origin: &'a str,
    /// The file's text.
    pub text: &'a str,
    /// `KEY=VALUE` overrides (`--set`).
    pub sets: &'a [String],
    /// `KEY=V1,V2,…` axes of a grid (`--sweep`).
    pub sweeps: &'a [String],
}

/// The run configs of a source: one per point of its grid (one when nothing is swept), each
/// with the file's keys, the overrides and the point's values, checked and validated.
pub fn run_configs(source: &ConfigSource<'_>) -> anyhow::Result<Vec<(SweepPoint, RunConfig)>> {
    from_toml::<RunConfig>(source.text, source.origin)?;
    let base = apply_overrides(source.text, source.sets)?;
    let sweep = Sweep::parse(source.sweeps)?;
    let mut context = source.origin.to_string();
    if !source.sets.is_empty() {
        context.push_str(&format!(" with --set {}", source.sets.join(" --set ")));
    }
    sweep
        .points()
        .into_iter()
        .map(|point| {
            let mut context = context.clone();
            if !point.is_empty() {
                context.push_str(&format!(" at sweep point {}", point.describe()));
            }
            let config = config_of(point.apply(&base)?, &context)?;
            Ok((point, config))
        })
        .collect()
}

/// The run config a merged value holds, validated; errors start with `context`.
fn config_of(value: Value, context: &str) -> anyhow::Result<RunConfig> {
    let config = RunConfig::deserialize(value)
        .map_err(|error| anyhow::anyhow!("{context}: {}", value_error(&error)))?;
    config.validate().with_context(|| context.to_string())?;
    Ok(config)
}

/// Parses a config text and applies `KEY=VALUE` overrides to it, each key checked against
/// the run config's keys.
pub fn apply_overrides(text: &str, sets: &[String]) -> anyhow::Result<Value> {
    let mut config = Value::Table(text.parse::<Table>()?);
    for set in sets {
        let (key, value) = split_assignment(set)?;
        let value = parse_value(value);
        check_key("--set", set, key, &value)?;
        set_key(&mut config, key, value)?;
    }
    Ok(config)
}

fn split_assignment(text: &str) -> anyhow::Result<(&str, &str)> {
    text.split_once('=')
        .map(|(key, value)| (key.trim(), value.trim()))
        .filter(|(key, _)| !key.is_empty())
        .with_context(|| format!("`{text}` is not KEY=VALUE (e.g. grpo.steps=10)"))
}

fn parse_value(text: &str) -> Value {
    format!("v = {text}")
        .parse::<Table>()
        .ok()
        .and_then(|mut table| table.remove("v"))
        .unwrap_or_else(|| Value::String(text.to_string()))
}

/// Checks that `key` names a run-config setting that can hold `value`, reading the one
/// assignment as a config of its own; errors name the flag and its argument.
fn check_key(flag: &str, argument: &str, key: &str, value: &Value) -> anyhow::Result<()> {
    let origin = format!("{flag} {argument}");
    let parts: Vec<&str> = key.split('.').map(str::trim).collect();
    anyhow::ensure!(
        parts.iter().all(|part| !part.is_empty()),
        "{origin}: `{key}` is not a key (write it dotted, e.g. grpo.update.iterations)"
    );
    let dotted: Vec<String> = parts
        .iter()
        .map(|part| {
            let bare = part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if bare {
                part.to_string()
            } else {
                Value::String(part.to_string()).to_string()
            }
        })
        .collect();
    let text = format!("{} = {value}", dotted.join("."));
    match from_toml::<RunConfig>(&text, &origin) {
        Err(error) if error.kind != ConfigErrorKind::MissingKey => Err(ConfigError {
            line: None,
            ..error
        }
        .into()),
        _ => Ok(()),
    }
}

/// Sets the dotted `key` in `config`, creating the tables on the way.
fn set_key(config: &mut Value, key: &str, value: Value) -> anyhow::Result<()> {
    let parts: Vec<&str> = key.split('.').map(str::trim).collect();
    let mut node = config;
    for part in &parts[..parts.len() - 1] {
        let table = node
            .as_table_mut()
            .with_context(|| format!("`{key}`: `{part}` is inside a value, not a table"))?;
        node = table
            .entry(part.to_string())
            .or_insert_with(|| Value::Table(Table::new()));
    }
    let table = node
        .as_table_mut()
        .with_context(|| format!("`{key}` does not name a key inside a table"))?;
    table.insert(parts[parts.len() - 1].to_string(), value);
    Ok(())
}

/// A grid of values over config keys.
#[derive(Debug, Default)]
pub struct Sweep {
    axes: Vec<(String, Vec<Value>)>,
}

/// One point of a sweep: a value for each swept key.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SweepPoint {
    values: Vec<(String, Value)>,
}

impl Sweep {
    /// Reads `KEY=V1,V2,…` arguments, each key and value checked against the run config.
    pub fn parse(arguments: &[String]) -> anyhow::Result<Self> {
        let mut axes = Vec::new();
        for argument in arguments {
            let (key, values) = split_assignment(argument)?;
            let values: Vec<Value> = values.split(',').map(|v| parse_value(v.trim())).collect();
            for value in &values {
                check_key("--sweep", argument, key, value)?;
            }
            axes.push((key.to_string(), values));
        }
        Ok(Self { axes })
    }

    /// Every point of the grid (one empty point without sweeps).
    pub fn points(&self) -> Vec<SweepPoint> {
        let mut points = vec![SweepPoint::default()];
        for (key, values) in &self.axes {
            points = points
                .into_iter()
                .flat_map(|point| {
                    values.iter().map(move |value| {
                        let mut next = point.clone();
                        next.values.push((key.clone(), value.clone()));
                        next
                    })
                })
                .collect();
        }
        points
    }
}

impl SweepPoint {
    /// The config with this point's values set.
    pub fn apply(&self, config: &Value) -> anyhow::Result<Value> {
        let mut config = config.clone();
        for (key, value) in &self.values {
            set_key(&mut config, key, value.clone())?;
        }
        Ok(config)
    }

    /// Whether it sets nothing.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// `trainer.learning_rate=0.0001 seed=2`.
    pub fn describe(&self) -> String {
        self.values
            .iter()
            .map(|(key, value)| format!("{key}={value}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_create_tables_and_read_toml_values() {
        let config = apply_overrides(
            "seed = 1\n[grpo]\nsteps = 5\n",
            &[
                "grpo.steps=10".into(),
                "tasks.train=arith:3".into(),
                "seed=2".into(),
            ],
        )
        .unwrap();
        assert_eq!(config["grpo"]["steps"].as_integer(), Some(10));
        assert_eq!(config["tasks"]["train"].as_str(), Some("arith:3"));
        assert_eq!(config["seed"].as_integer(), Some(2));
        assert!(apply_overrides("seed = 1", &["seed.inner=2".into()]).is_err());
        assert!(apply_overrides("seed = 1", &["=2".into()]).is_err());
        assert!(apply_overrides("", &["trainer..seed=2".into()]).is_err());
    }

    #[test]
    fn a_sweep_is_the_grid_of_its_axes() {
        let sweep = Sweep::parse(&[
            "seed=0,1,2".into(),
            "trainer.learning_rate=1e-4,3e-4".into(),
        ])
        .unwrap();
        let points = sweep.points();
        assert_eq!(points.len(), 6);
        let config = points[5].apply(&apply_overrides("", &[]).unwrap()).unwrap();
        assert_eq!(config["seed"].as_integer(), Some(2));
        assert_eq!(config["trainer"]["learning_rate"].as_float(), Some(3e-4));
        assert_eq!(Sweep::parse(&[]).unwrap().points().len(), 1);
    }

    fn source<'a>(text: &'a str, sets: &'a [String], sweeps: &'a [String]) -> ConfigSource<'a> {
        ConfigSource {
            origin: "run.toml",
            text,
            sets,
            sweeps,
        }
    }

    #[test]
    fn every_key_is_checked_and_errors_name_the_flag_or_the_file() {
        let sweeps = ["trainer.learnig_rate=1e-5,3e-5".to_string()];
        let error = run_configs(&source("", &[], &sweeps)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "--sweep trainer.learnig_rate=1e-5,3e-5: unknown key `learnig_rate` in [trainer]; \
             did you mean `learning_rate`?"
        );
        let error = run_configs(&source("seed = 1\n[grpo]\nstepz = 2\n", &[], &[])).unwrap_err();
        assert_eq!(
            error.to_string(),
            "run.toml:3: unknown key `stepz` in [grpo]; did you mean `steps`?"
        );
        let sets = ["trainer.lora.rank=8".to_string()];
        let error = format!("{:#}", run_configs(&source("", &sets, &[])).unwrap_err());
        assert!(
            error.starts_with(
                "run.toml with --set trainer.lora.rank=8: the key `alpha` is missing in \
                 [trainer.lora]"
            ),
            "{error}"
        );
        let sweeps = [
            "trainer.learning_rate=1e-5,3e-5".to_string(),
            "seed=1,2".to_string(),
        ];
        let configs = run_configs(&source("[grpo]\nsteps = 3\n", &[], &sweeps)).unwrap();
        assert_eq!(configs.len(), 4);
        assert_eq!(configs[3].1.trainer.learning_rate, 3e-5);
        assert_eq!((configs[3].1.seed, configs[3].1.grpo.steps), (2, 3));
        let sets = ["grpo.group=1".to_string()];
        let error = format!("{:#}", run_configs(&source("", &sets, &[])).unwrap_err());
        assert!(
            error.starts_with("run.toml with --set grpo.group=1: grpo.group must be at least 2"),
            "{error}"
        );
    }
}
