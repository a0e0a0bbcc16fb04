//! Format errors: a tool call that does not parse or fit its tool; and, when the outcome
//! failed, an answer that is right but carries no marker, or a marked answer that is not a
//! number.

use super::{Context, Evidence};
use crate::agent::answer::{answer_value, extract_answer};
use crate::agent::protocol::check_stored_call;
use crate::curate::numbers::{numbers_of, show};
use crate::trajectory::ErrorKind;

/// Evidence of format errors.
pub fn evidence(context: &Context<'_>) -> Vec<Evidence> {
    let mut found = malformed_calls(context);
    if context.failed_on_outcome() {
        found.extend(answer_form(context));
    }
    found
}

/// Each malformed tool call, on the last step of its message.
fn malformed_calls(context: &Context<'_>) -> Vec<Evidence> {
    let messages = &context.trajectory.messages;
    let mut found = Vec::new();
    for (index, location) in context.steps.iter().enumerate() {
        if !context.last_of_message(index) {
            continue;
        }
        let notes: Vec<String> = messages[location.message]
            .tool_calls
            .iter()
            .filter_map(|call| {
                let error = check_stored_call(call, context.tools()).err()?;
                let name = if call.name.is_empty() {
                    "?"
                } else {
                    &call.name
                };
                Some(format!("the call of `{name}` is malformed: {error}"))
            })
            .collect();
        if !notes.is_empty() {
            found.push(Evidence {
                step: index as u32,
                kind: ErrorKind::Format,
                note: notes.join("; "),
            });
        }
    }
    found
}

/// A right but unmarked answer, or a marked answer that is not a number when the truth is.
fn answer_form(context: &Context<'_>) -> Option<Evidence> {
    let truth = context.truth_value.as_ref()?;
    let last = context.trajectory.last_assistant_text()?;
    let note = match extract_answer(last) {
        None if numbers_of(last).last() == Some(truth) => format!(
            "the last turn ends on {}, the ground truth, but has no answer marker (`Final Answer:`)",
            show(truth)
        ),
        Some(marked) if answer_value(&marked.text).is_none() => format!(
            "the marked answer `{}` is not a number; the ground truth is {}",
            crate::text::clip(&marked.text, 60),
            show(truth)
        ),
        _ => return None,
    };
    Some(Evidence {
        step: context.last_step(),
        kind: ErrorKind::Format,
        note,
    })
}
