//! `--set KEY=VALUE` overrides and `--sweep KEY=V1,V2` grids over run-config keys. Values
//! are read as TOML (`1e-4`, `true`, `"arith:3"`), falling back to a plain string.

use anyhow::Context;
use toml::{Table, Value};

/// Parses a config text and applies `KEY=VALUE` overrides to it.
pub fn apply_overrides(text: &str, sets: &[String]) -> anyhow::Result<Value> {
    let mut config = Value::Table(text.parse::<Table>()?);
    for set in sets {
        let (key, value) = split_assignment(set)?;
        set_key(&mut config, key, parse_value(value))?;
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

/// Sets the dotted `key` in `config`, creating the tables on the way.
fn set_key(config: &mut Value, key: &str, value: Value) -> anyhow::Result<()> {
    let parts: Vec<&str> = key.split('.').collect();
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
#[derive(Clone, Debug, Default)]
pub struct SweepPoint {
    values: Vec<(String, Value)>,
}

impl Sweep {
    /// Reads `KEY=V1,V2,…` arguments.
    pub fn parse(arguments: &[String]) -> anyhow::Result<Self> {
        let mut axes = Vec::new();
        for argument in arguments {
            let (key, values) = split_assignment(argument)?;
            let values: Vec<Value> = values.split(',').map(|v| parse_value(v.trim())).collect();
            anyhow::ensure!(!values.is_empty(), "`{argument}` sweeps over no values");
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
}
