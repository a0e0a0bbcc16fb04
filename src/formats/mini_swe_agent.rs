//! mini-swe-agent `.traj.json` files, one trajectory per file: `{info{exit_status, submission,
//! model_stats, config}, messages, trajectory_format, instance_id}`. Messages are OpenAI
//! messages with an `extra` object of their own; roles include `tool` and a final `exit`.

use super::chat::{name_tool_results, read_messages};
use super::context::{Context, TaskDraft};
use super::document::read_single;
use super::fields::{into_object, take_required};
use super::intake::Intake;
use super::swe_agent::apply_info;
use super::{ImportError, ImportReport, Item};
use serde_json::Value;

/// Reads a mini-swe-agent trajectory file.
pub fn read(
    context: &mut Context<'_>,
    intake: &mut Intake<'_, '_>,
) -> Result<ImportReport, ImportError> {
    let path = context.path;
    read_single(path, intake, |value| parse(context, value))
}

fn parse(context: &mut Context<'_>, value: Value) -> Result<Vec<Item>, String> {
    let mut object = into_object(value, "")?;
    let mut messages = read_messages(take_required(&mut object, "messages", "")?, "messages")?;
    name_tool_results(&mut messages);
    let mut trajectory = context.trajectory(messages);
    apply_info(&mut trajectory, object.get("info"));
    trajectory.extra = object;
    let draft = TaskDraft::from_trajectory(&trajectory, Vec::new());
    Ok(context.with_task(trajectory, draft))
}
