//! The tool-call protocol on well-formed and malformed turns, and final-answer extraction.

use super::common::{in_seconds, runtime};
use rollscope::agent::answer::{AnswerMarker, answer_value, answers_match, extract_answer};
use rollscope::agent::protocol::{CallError, parse_turn};
use rollscope::agent::schema::SchemaError;
use rollscope::agent::tools::{Calculator, SearchTool, ToolFailure, ToolRegistry, builtin_spec};
use rollscope::trajectory::ArgumentsEncoding;
use serde_json::{Value, json};
use std::sync::Arc;

fn tools() -> Vec<Value> {
    ["calculator", "search"]
        .into_iter()
        .filter_map(builtin_spec)
        .collect()
}

#[test]
fn several_calls_with_text_around_them() {
    let text = "I need two numbers.\n<tool_call>\n{\"name\": \"calculator\", \"arguments\": {\"expression\": \"17*4\"}}\n</tool_call>\nand\n<tool_call>{\"name\": \"search\", \"arguments\": {\"query\": \"Mount Vimviand\", \"k\": 2}}</tool_call>\nThen I add them.";
    let turn = parse_turn(text, &tools(), 3);
    assert_eq!(
        turn.content,
        "I need two numbers.\n\nand\n\nThen I add them."
    );
    assert_eq!(turn.calls.len(), 2);
    assert_eq!(turn.format_failures(), 0);
    let first = turn.calls[0].call.as_ref().unwrap();
    assert_eq!(first.name, "calculator");
    assert_eq!(first.arguments["expression"], "17*4");
    assert_eq!(turn.calls[1].id, "call_3_1");
    let message = turn.to_message();
    assert_eq!(message.tool_calls.len(), 2);
    assert_eq!(message.tool_calls[0].id.as_deref(), Some("call_3_0"));
    assert_eq!(message.tool_calls[0].encoding, ArgumentsEncoding::Object);
    assert_eq!(
        message.tool_calls[1].parsed_arguments(),
        Some(json!({"query": "Mount Vimviand", "k": 2}))
    );
    assert_eq!(
        message.tool_calls[1].arguments, "{\"query\": \"Mount Vimviand\", \"k\": 2}",
        "the arguments are kept as the model wrote them"
    );
}

#[test]
fn a_call_cut_off_before_its_closing_tag_still_counts() {
    let turn = parse_turn(
        "<tool_call>{\"name\": \"calculator\", \"arguments\": {\"expression\": \"1+1\"}}",
        &tools(),
        0,
    );
    assert!(turn.calls[0].call.is_ok());
    assert_eq!(turn.content, "");
}

fn error_of(block: &str) -> CallError {
    let turn = parse_turn(
        &format!("Let me compute. <tool_call>{block}</tool_call>"),
        &tools(),
        0,
    );
    assert_eq!(turn.format_failures(), 1, "{block}");
    turn.calls[0].call.clone().unwrap_err()
}

#[test]
fn malformed_calls_become_errors_that_say_what_is_wrong() {
    let invalid = error_of("{\"name\": \"calculator\", \"arguments\": {\"expression\": \"1+1\"}");
    assert!(matches!(invalid, CallError::InvalidJson { .. }));
    assert!(invalid.observation().contains("not valid JSON"));
    assert!(
        invalid.observation().contains("<tool_call>{\"name\""),
        "the format is shown"
    );
    assert_eq!(
        error_of("[1, 2]"),
        CallError::NotAnObject { found: "array" }
    );
    assert_eq!(error_of("{\"arguments\": {}}"), CallError::MissingName);
    assert_eq!(
        error_of("{\"name\": \"calculator\", \"arguments\": \"{\\\"expression\\\": \\\"1\\\"}\"}"),
        CallError::ArgumentsNotObject {
            tool: "calculator".into(),
            found: "string"
        }
    );
    let unknown = error_of("{\"name\": \"weather\", \"arguments\": {\"city\": \"Oslo\"}}");
    assert_eq!(
        unknown.observation(),
        "error: there is no tool `weather` (tools: calculator, search)."
    );
    assert_eq!(
        error_of("{\"name\": \"calculator\", \"arguments\": {}}"),
        CallError::Schema(SchemaError::Missing {
            tool: "calculator".into(),
            argument: "expression".into()
        })
    );
    let wrong_type = error_of("{\"name\": \"search\", \"arguments\": {\"query\": 42}}");
    assert!(
        wrong_type
            .to_string()
            .contains("must be string, not integer")
    );
    assert!(matches!(error_of(""), CallError::InvalidJson { .. }));
}

#[test]
fn malformed_calls_are_stored_and_answered_without_running() {
    let mut registry = ToolRegistry::new();
    registry.register(Arc::new(Calculator::new())).unwrap();
    registry
        .register(Arc::new(SearchTool::shipped().unwrap()))
        .unwrap();
    let turn = parse_turn(
        "<tool_call>{\"name\": \"calculator\", \"arguments\": {\"expression\": 2+2}}</tool_call>\
         <tool_call>{\"name\": \"calculator\", \"arguments\": {\"expression\": \"2+2\"}}</tool_call>",
        &registry.specs(),
        1,
    );
    let stored = turn.to_message();
    assert_eq!(stored.tool_calls[0].name, "");
    assert!(
        stored.tool_calls[0].arguments.contains("2+2"),
        "the raw block is kept"
    );
    let runtime = runtime();
    let observations: Vec<_> = turn
        .calls
        .iter()
        .map(|block| runtime.block_on(registry.execute(block, in_seconds(5))))
        .collect();
    assert_eq!(observations[0].failure, Some(ToolFailure::Format));
    assert!(
        observations[0]
            .text
            .starts_with("error: the tool call is not valid JSON")
    );
    assert_eq!(observations[0].call_id, "call_1_0");
    assert_eq!(observations[1].text, "4");
    assert_eq!(
        observations[1].to_message().tool_call_id.as_deref(),
        Some("call_1_1")
    );
}

#[test]
fn answers_are_found_behind_each_marker() {
    let cases = [
        (
            "So she has 18 left.\nFinal Answer: 18",
            AnswerMarker::FinalAnswer,
            "18",
        ),
        (
            "**Final Answer:** $1,234.50",
            AnswerMarker::FinalAnswer,
            "$1,234.50",
        ),
        (
            "The final answer is 7 apples.",
            AnswerMarker::FinalAnswer,
            "7 apples.",
        ),
        ("Final Answer:\n\n42", AnswerMarker::FinalAnswer, "42"),
        (
            "48+24 = <<48+24=72>>72\n#### 72",
            AnswerMarker::Hashes,
            "72",
        ),
        (
            "Thus $\\boxed{\\frac{3}{4}}$.",
            AnswerMarker::Boxed,
            "\\frac{3}{4}",
        ),
        (
            "\\boxed{12} is wrong. Final Answer: 13",
            AnswerMarker::FinalAnswer,
            "13",
        ),
    ];
    for (text, marker, expected) in cases {
        let answer = extract_answer(text).unwrap_or_else(|| panic!("no answer in {text:?}"));
        assert_eq!(
            (answer.marker, answer.text.as_str()),
            (marker, expected),
            "{text:?}"
        );
    }
    assert_eq!(extract_answer("I think it is 5."), None);
    assert_eq!(extract_answer("Final Answer:"), None);
}

#[test]
fn answer_values_are_exact_and_units_are_dropped() {
    let value = |text: &str| answer_value(text).map(|value| value.to_string());
    assert_eq!(value("$1,234.50").as_deref(), Some("2469/2"));
    assert_eq!(value("-7 degrees").as_deref(), Some("-7"));
    assert_eq!(value("3/4 of a cake").as_deref(), Some("3/4"));
    assert_eq!(value("\\frac{3}{4}").as_deref(), Some("3/4"));
    assert_eq!(value("\\$18").as_deref(), Some("18"));
    assert_eq!(value("15%").as_deref(), Some("15"));
    assert_eq!(value("x = 2 + 3 = 5").as_deref(), Some("5"));
    assert_eq!(value("Q3 had 40").as_deref(), Some("40"));
    assert_eq!(value("none"), None);
    assert!(answers_match("18 dollars", "18"));
    assert!(answers_match("$30,000", "30000"));
    assert!(answers_match("2.50", "2.5"));
    assert!(answers_match("0.75", "3/4"));
    assert!(!answers_match("0.33", "1/3"));
    assert!(!answers_match("19", "18"));
    assert!(answers_match("the Skomkath Sea.", "Skomkath Sea"));
}
