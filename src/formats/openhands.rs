//! OpenHands trajectories, in the two shapes its users have: an event stream (a JSON array of
//! events, as OpenHands saves a conversation and its tests replay one) is one trajectory; an
//! evaluation or resolver output row (`{instance_id | issue, instruction, history, metrics,
//! test_result | git_patch, success, error, …}`, JSONL or an array of them) is one trajectory
//! each. `success` (or the evaluation report's `resolved`) is the outcome; the patch, costs,
//! token counts and everything else the row holds stay in `extra`. How events read as
//! messages: `openhands_events`.

use super::context::{Context, TaskDraft};
use super::document::{first_byte, first_record, read_records, read_single};
use super::fields::{element, into_array, into_object, take, take_string};
use super::intake::Intake;
use super::openhands_events::{Conversation, EventReader};
use super::{ImportError, ImportReport, Item};
use crate::trajectory::{Message, Reward, Role, StopReason, Trajectory};
use serde_json::Value;

/// Key of a trajectory's `extra` counting the bookkeeping events left out, by kind.
const LEFT_OUT_KEY: &str = "openhands_events_left_out";

/// Whether a record with these keys is an OpenHands event (the first of a stream) or an
/// evaluation / resolver row (a SWE-agent `.traj` has `history` too, beside `trajectory`).
pub fn looks_like(has: &impl Fn(&str) -> bool) -> bool {
    let event = has("source") && (has("action") || has("observation"));
    let row = has("history")
        && !has("trajectory")
        && (has("instruction") || has("git_patch") || has("test_result"));
    event || row
}

/// Reads an OpenHands event stream or a file of evaluation / resolver rows.
pub fn read(
    context: &mut Context<'_>,
    intake: &mut Intake<'_, '_>,
) -> Result<ImportReport, ImportError> {
    let path = context.path;
    let rows = first_record(path)?.is_some_and(|first| first.get("history").is_some());
    if first_byte(path)? == Some(b'[') && !rows {
        return read_stream(context, intake);
    }
    read_records(path, intake, |value| parse_row(context, value))
}

/// Reads a whole file holding one event stream.
fn read_stream(
    context: &mut Context<'_>,
    intake: &mut Intake<'_, '_>,
) -> Result<ImportReport, ImportError> {
    let path = context.path;
    read_single(path, intake, |value| {
        let conversation = conversation(value, "")?;
        let trajectory = trajectory(context, conversation)?;
        let draft = TaskDraft::from_trajectory(&trajectory, Vec::new());
        Ok(context.with_task(trajectory, draft))
    })
}

/// One evaluation or resolver row.
fn parse_row(context: &mut Context<'_>, value: Value) -> Result<Vec<Item>, String> {
    let mut object = into_object(value, "")?;
    let history = take(&mut object, "history").ok_or("no `history` field")?;
    let mut conversation = conversation(history, "history")?;
    let instruction = take_string(&mut object, "instruction", "")?;
    if let Some(instruction) = instruction
        && !conversation
            .messages
            .iter()
            .any(|message| message.role == Role::User)
    {
        conversation.messages.insert(0, Message::user(instruction));
    }
    let mut trajectory = trajectory(context, conversation)?;
    let resolved = object
        .get("test_result")
        .and_then(|result| result.pointer("/report/resolved"))
        .and_then(Value::as_bool);
    if let Some(passed) = object.get("success").and_then(Value::as_bool).or(resolved) {
        trajectory.reward = Some(Reward {
            passed: Some(passed),
            ..Reward::scalar(f64::from(u8::from(passed)))
        });
    }
    if let Some(error) = object.get("error").and_then(Value::as_str)
        && !error.trim().is_empty()
    {
        trajectory.stop_reason = StopReason::Other(format!("error: {error}"));
    }
    let left_out = trajectory.extra.remove(LEFT_OUT_KEY);
    trajectory.extra = object;
    if let Some(left_out) = left_out {
        trajectory.extra.insert(LEFT_OUT_KEY.into(), left_out);
    }
    let draft = TaskDraft::from_trajectory(&trajectory, Vec::new());
    Ok(context.with_task(trajectory, draft))
}

/// The conversation of an array of events at `path`.
fn conversation(events: Value, path: &str) -> Result<Conversation, String> {
    let mut reader = EventReader::default();
    for (index, event) in into_array(events, path)?.into_iter().enumerate() {
        reader.event(event, &element(path, index))?;
    }
    Ok(reader.finish())
}

/// A trajectory of a conversation: its messages, the finish text as the answer, and a stop
/// reason saying whether the agent finished.
fn trajectory(context: &Context<'_>, conversation: Conversation) -> Result<Trajectory, String> {
    if conversation.messages.is_empty() {
        return Err("the events hold no message, action or observation".into());
    }
    let finished = conversation.final_answer.is_some();
    let mut trajectory = context.trajectory(conversation.messages);
    trajectory.final_answer = conversation.final_answer;
    if !finished {
        trajectory.stop_reason = StopReason::Other("unfinished".into());
    }
    if !conversation.left_out.is_empty() {
        let counts = conversation
            .left_out
            .into_iter()
            .map(|(kind, count)| (kind, count.into()));
        trajectory
            .extra
            .insert(LEFT_OUT_KEY.into(), Value::Object(counts.collect()));
    }
    Ok(trajectory)
}
