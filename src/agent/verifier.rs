//! Verifiers: the built-in outcome reward plus external verifier commands declared in the
//! session config. A verifier command reads `{"task": …, "trajectory": …, "answer": …}` on
//! stdin and writes `{"score": 0.8, "passed": true}` on stdout before its deadline; its
//! weighted score is stored under its name.
//!
//! ```toml
//! [[verifiers]]
//! name = "units"
//! command = ["python3", "verifiers/units.py"]
//! weight = 0.5
//! timeout_ms = 5000
//! ```

use super::reward::{RewardConfig, add, final_answer, outcome_reward};
use super::tools::{CommandLine, OutputLimits, ProcessEnd, run_process};
use crate::trajectory::{Reward, Task, Trajectory};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A `[[verifiers]]` entry of the session config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExternalVerifierConfig {
    /// The component name its score is stored under.
    pub name: String,
    /// The command that scores a trajectory.
    pub command: CommandLine,
    /// Weight of its score in the total.
    #[serde(default = "unit_weight")]
    pub weight: f64,
    /// How long it may take, in milliseconds.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
}

fn unit_weight() -> f64 {
    1.0
}

fn default_timeout_ms() -> u64 {
    10_000
}

/// An outcome reward with what went wrong while computing it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Verdicts {
    /// The reward, components by name.
    pub reward: Reward,
    /// Verifiers that failed to answer (their component is 0 and the trajectory does not
    /// pass).
    pub problems: Vec<String>,
}

/// The built-in reward and the session's external verifiers.
#[derive(Clone, Debug, Default)]
pub struct Verifier {
    config: RewardConfig,
    external: Vec<ExternalVerifierConfig>,
    dir: PathBuf,
}

impl Verifier {
    /// A verifier with built-in weights `config` and external commands run in `dir` (the
    /// session folder).
    pub fn new(config: RewardConfig, external: Vec<ExternalVerifierConfig>, dir: &Path) -> Self {
        Self {
            config,
            external,
            dir: dir.to_path_buf(),
        }
    }

    /// Scores a finished trajectory. Passing needs the answer to match (when the task has a
    /// ground truth) and every external verifier that gives a verdict to pass.
    pub async fn score(&self, task: &Task, trajectory: &Trajectory) -> Verdicts {
        let mut verdicts = Verdicts {
            reward: outcome_reward(task, trajectory, &self.config),
            problems: Vec::new(),
        };
        if self.external.is_empty() {
            return verdicts;
        }
        let request = json!({
            "task": task,
            "trajectory": trajectory,
            "answer": final_answer(trajectory),
        })
        .to_string();
        for verifier in &self.external {
            match self.run(verifier, &request).await {
                Ok((score, passed)) => {
                    add(&mut verdicts.reward, &verifier.name, verifier.weight, score);
                    if let Some(passed) = passed {
                        let before = verdicts.reward.passed.unwrap_or(true);
                        verdicts.reward.passed = Some(before && passed);
                    }
                }
                Err(problem) => {
                    add(&mut verdicts.reward, &verifier.name, verifier.weight, 0.0);
                    verdicts.reward.passed = Some(false);
                    verdicts
                        .problems
                        .push(format!("verifier `{}`: {problem}", verifier.name));
                }
            }
        }
        verdicts
    }

    async fn run(
        &self,
        verifier: &ExternalVerifierConfig,
        request: &str,
    ) -> Result<(f64, Option<bool>), String> {
        let mut command = verifier
            .command
            .command(&self.dir)
            .map_err(|error| error.to_string())?;
        let deadline = Instant::now() + Duration::from_millis(verifier.timeout_ms);
        let run = run_process(
            &mut command,
            request.as_bytes(),
            OutputLimits::default(),
            deadline,
        )
        .await
        .map_err(|error| format!("cannot start: {error}"))?;
        match run.end {
            ProcessEnd::Exited(0) => {}
            ProcessEnd::TimedOut => return Err("did not answer in time".into()),
            other => {
                return Err(format!(
                    "ended with {other:?}: {}",
                    run.stderr.text().trim()
                ));
            }
        }
        let answer: Value = serde_json::from_str(run.stdout.text().trim())
            .map_err(|error| format!("did not answer with JSON {{\"score\": …}}: {error}"))?;
        let score = answer
            .get("score")
            .and_then(Value::as_f64)
            .ok_or("its answer has no number `score`")?;
        Ok((score, answer.get("passed").and_then(Value::as_bool)))
    }
}
