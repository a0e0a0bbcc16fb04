//! Scripted calculator demonstrations: a task's annotated solution (`<<expr=result>>` steps,
//! as GSM8K and the arithmetic set write them) replayed as one calculator call per step
//! (the call alone, as Qwen writes them, so the numbers are copied once from the question),
//! each answered by the real calculator, then the final answer. They teach the tool-call
//! format and the shape of a solution; the cold start of the main job trains on them.

use crate::agent::tools::Calculator;
use crate::formats::gsm8k::calculations;
use crate::trajectory::{Message, Task, ToolCall};
use serde_json::json;

/// How a demonstration reaches its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DemoStyle {
    /// One calculator call per step of the reference solution, then the answer.
    Calculator,
    /// The answer straight away, computed in the head.
    Direct,
}

/// The demonstration of a task in the given style: its prompt, then the calculator steps of
/// its reference solution (unless direct) and the final answer. `None` when the task has no
/// annotated solution or no ground truth.
pub fn demonstration(task: &Task, style: DemoStyle) -> Option<Vec<Message>> {
    let solution = task.reference_solution.as_deref()?;
    let answer = task.ground_truth.as_deref()?;
    let steps = calculations(solution);
    if steps.is_empty() {
        return None;
    }
    let mut messages = task.prompt.clone();
    if style == DemoStyle::Direct {
        messages.push(final_answer(answer));
        return Some(messages);
    }
    for (index, (expression, _)) in steps.iter().enumerate() {
        let mut call = Message::assistant(String::new());
        let mut tool_call =
            ToolCall::from_json_arguments("calculator", &json!({"expression": expression}));
        tool_call.id = Some(format!("call_{index}"));
        call.tool_calls.push(tool_call);
        messages.push(call);
        let output = Calculator::evaluate(expression);
        let mut result = Message::tool(output.text);
        result.tool_call_id = Some(format!("call_{index}"));
        result.name = Some("calculator".into());
        result.is_error = output.failure.is_some();
        messages.push(result);
    }
    messages.push(final_answer(answer));
    Some(messages)
}

/// The closing assistant turn: the answer in a sentence, then on the verifier's line.
fn final_answer(answer: &str) -> Message {
    Message::assistant(format!("The answer is {answer}.\nFinal Answer: {answer}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::tasks::TaskSetSpec;
    use crate::trajectory::Role;

    #[test]
    fn every_arithmetic_task_has_a_demonstration_whose_calls_reach_the_answer() {
        let spec: TaskSetSpec = "arith:3".parse().unwrap();
        let tasks = spec.load(Some(50), 7).unwrap();
        for task in &tasks {
            let messages = demonstration(task, DemoStyle::Calculator).expect("annotated solution");
            let results: Vec<&Message> = messages.iter().filter(|m| m.role == Role::Tool).collect();
            assert!(!results.is_empty(), "{}", task.id);
            assert!(results.iter().all(|m| !m.is_error), "{}", task.id);
            let truth = task.ground_truth.as_deref().unwrap();
            assert_eq!(results.last().unwrap().content, truth, "{}", task.id);
            let last = messages.last().unwrap();
            assert!(last.content.ends_with(&format!("Final Answer: {truth}")));
        }
    }

    #[test]
    fn a_task_without_annotations_has_none() {
        let mut task = Task::new("t", "test", "What is 2 + 2?");
        task.ground_truth = Some("4".into());
        task.reference_solution = Some("Just add them.\n#### 4".into());
        assert!(demonstration(&task, DemoStyle::Calculator).is_none());
        assert!(demonstration(&task, DemoStyle::Direct).is_none());
    }

    #[test]
    fn a_direct_demonstration_answers_without_calling_the_tool() {
        let spec: TaskSetSpec = "arith:1".parse().unwrap();
        let task = spec.load(Some(1), 3).unwrap().remove(0);
        let messages = demonstration(&task, DemoStyle::Direct).unwrap();
        assert_eq!(messages.len(), task.prompt.len() + 1);
        let last = messages.last().unwrap();
        assert!(last.tool_calls.is_empty());
        let truth = task.ground_truth.as_deref().unwrap();
        assert!(last.content.ends_with(&format!("Final Answer: {truth}")));
    }
}
