//! Single-message solutions split into steps (PRM800K, Math-Shepherd, TRL stepwise): the steps
//! are joined into one assistant message and each becomes a span of it.

use crate::trajectory::{Message, Span, Trajectory};

/// An assistant message holding `steps` joined by newlines, with one span per step.
pub fn solution_message<S: AsRef<str>>(steps: &[S]) -> Result<Message, String> {
    let mut message = Message::assistant("");
    for step in steps {
        if !message.content.is_empty() {
            message.content.push('\n');
        }
        let start = offset(message.content.len())?;
        message.content.push_str(step.as_ref());
        let end = offset(message.content.len())?;
        message.spans.push(Span { start, end });
    }
    Ok(message)
}

fn offset(length: usize) -> Result<u32, String> {
    u32::try_from(length).map_err(|_| "the solution is longer than 4 GiB".to_string())
}

/// The texts of a trajectory's steps: each span of a split message, or each assistant
/// message's text (its tool calls written as `name(arguments)` when it has no text).
pub fn step_texts(trajectory: &Trajectory) -> Vec<String> {
    trajectory
        .steps()
        .into_iter()
        .map(|step| {
            let message = &trajectory.messages[step.message];
            let text = message.span_text(step.span);
            if !text.is_empty() || step.span.is_some() {
                return text.to_string();
            }
            message
                .tool_calls
                .iter()
                .map(|call| format!("{}({})", call.name, call.arguments))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect()
}

/// The text after the last `marker` in `text`, trimmed (e.g. `The answer is:`), if any.
pub fn answer_after(text: &str, marker: &str) -> Option<String> {
    let (_, after) = text.rsplit_once(marker)?;
    let answer = after.trim();
    (!answer.is_empty()).then(|| answer.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_cover_each_step_exactly() {
        let message = solution_message(&["Step 1: 2+2=4", "Step 2: 4·3=12"]).unwrap();
        assert_eq!(message.content, "Step 1: 2+2=4\nStep 2: 4·3=12");
        let texts: Vec<&str> = message
            .spans
            .iter()
            .map(|&s| message.span_text(Some(s)))
            .collect();
        assert_eq!(texts, ["Step 1: 2+2=4", "Step 2: 4·3=12"]);
        assert_eq!(
            answer_after("So 5. The answer is: 13520", "The answer is:"),
            Some("13520".into())
        );
    }
}
