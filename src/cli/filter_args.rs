//! The filter flags shared by `list`, `export`, `delete` and `stats`.

use super::Cli;
use crate::store::{Filter, Outcome};
use crate::trajectory::LabelStatus;
use clap::Args;

/// Which trajectories a command applies to.
#[derive(Clone, Debug, Default, Args)]
pub struct FilterArgs {
    /// Only this run.
    #[arg(long)]
    pub run: Option<String>,
    /// Only this policy version (training step).
    #[arg(long)]
    pub step: Option<u64>,
    /// Only this GRPO group.
    #[arg(long)]
    pub group: Option<u64>,
    /// Only this task id.
    #[arg(long)]
    pub task: Option<String>,
    /// Only trajectories with a label of this kind: calculation, reasoning, understanding,
    /// format, or a kind the session names under [[labels]] in session.toml.
    #[arg(long, value_name = "KIND")]
    pub label: Option<String>,
    /// Only labels of this status.
    #[arg(long, value_parser = parse_status)]
    pub status: Option<LabelStatus>,
    /// Only passing trajectories.
    #[arg(long, conflicts_with = "fail")]
    pub pass: bool,
    /// Only failing trajectories.
    #[arg(long)]
    pub fail: bool,
    /// Only failures no person has labelled yet (the badcase queue).
    #[arg(long)]
    pub unlabelled: bool,
    /// Only rewards at least this.
    #[arg(long, allow_hyphen_values = true)]
    pub reward_min: Option<f64>,
    /// Only rewards at most this.
    #[arg(long, allow_hyphen_values = true)]
    pub reward_max: Option<f64>,
    /// Only trajectories whose task, question, run or id contains this text.
    #[arg(long)]
    pub contains: Option<String>,
    /// Only trajectories with a message, tool call or tool result that matches this search:
    /// words (all in one message), "a phrase", tool:NAME, role:ROLE, task:ID, OR, -word.
    #[arg(long, value_name = "QUERY")]
    pub text: Option<String>,
}

fn parse_status(text: &str) -> Result<LabelStatus, String> {
    match text {
        "suggested" => Ok(LabelStatus::Suggested),
        "confirmed" => Ok(LabelStatus::Confirmed),
        _ => Err(format!(
            "unknown label status `{text}`: use suggested or confirmed"
        )),
    }
}

impl FilterArgs {
    /// The store filter these flags describe (`--label` read with the session's kinds).
    pub fn to_filter(&self, cli: &Cli) -> anyhow::Result<Filter> {
        let label = match &self.label {
            Some(text) => Some(
                cli.label_kinds()?
                    .parse(text)
                    .map_err(|error| anyhow::anyhow!("--label: {error}"))?,
            ),
            None => None,
        };
        Ok(Filter {
            run: self.run.clone(),
            step: self.step,
            group: self.group,
            task: self.task.clone(),
            label,
            label_status: self.status,
            outcome: if self.pass {
                Some(Outcome::Pass)
            } else if self.fail {
                Some(Outcome::Fail)
            } else {
                None
            },
            unlabelled_failures: self.unlabelled,
            reward_min: self.reward_min,
            reward_max: self.reward_max,
            text: self.contains.clone(),
            full_text: self.text.clone(),
            ids: None,
        })
    }
}
