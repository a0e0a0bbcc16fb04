//! tau-bench results: a JSON array of `{task_id, reward, info{reward_info{reward, info}}, traj,
//! trial}` where `traj` is the OpenAI-message conversation between the agent, a simulated user
//! and the domain tools.

use super::chat::{name_tool_results, read_messages};
use super::context::{Context, TaskDraft};
use super::document::read_records;
use super::fields::{into_object, number, take_number, take_required};
use super::intake::Intake;
use super::{ImportError, ImportReport, Item};
use crate::trajectory::Reward;
use serde_json::Value;

/// Reads a tau-bench results file.
pub fn read(
    context: &mut Context<'_>,
    intake: &mut Intake<'_, '_>,
) -> Result<ImportReport, ImportError> {
    let path = context.path;
    read_records(path, intake, |value| parse(context, value))
}

fn parse(context: &mut Context<'_>, value: Value) -> Result<Vec<Item>, String> {
    let mut object = into_object(value, "")?;
    let mut messages = read_messages(take_required(&mut object, "traj", "")?, "traj")?;
    name_tool_results(&mut messages);
    let mut trajectory = context.trajectory(messages);
    if let Some(total) = take_number(&mut object, "reward", "")? {
        let mut reward = Reward::scalar(total);
        let parts = object
            .get("info")
            .and_then(|info| info.pointer("/reward_info/info"));
        if let Some(Value::Object(parts)) = parts {
            for (name, value) in parts {
                if let Some(value) = number(value) {
                    reward.components.insert(name.clone(), value);
                }
            }
        }
        trajectory.reward = Some(reward);
    }
    trajectory.extra = object;
    let draft = TaskDraft::from_trajectory(&trajectory, Vec::new());
    Ok(context.with_task(trajectory, draft))
}
