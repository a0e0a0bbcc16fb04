//! The text the embedded tokenizer is trained on: GSM8K's train split (shipped in
//! `examples/gsm8k/`; the test split is held out for evaluation and never seen) and
//! synthetic calculator conversations rendered by the chat template, so the chat and
//! tool-call structure is in the vocabulary.

use crate::model::chat::messages_json;
use crate::model::error::Result;
use crate::model::template::{ChatTemplate, RenderOptions};
use crate::trajectory::{Message, ToolCall};
use serde_json::{Value, json};

/// GSM8K's train split (7,473 problems), one `{"question", "answer"}` object per line (MIT,
/// see `examples/gsm8k/LICENSE`).
pub const GSM8K_TRAIN: &str = include_str!("../../../examples/gsm8k/train.jsonl");
/// GSM8K's test split (1,319 problems), held out: evaluation only.
pub const GSM8K_TEST: &str = include_str!("../../../examples/gsm8k/test.jsonl");

/// The system prompt of the synthetic conversations.
pub const SYSTEM_PROMPT: &str = "You are a careful math assistant. Use the calculator for arithmetic. End with 'Final Answer: <number>'.";

/// The calculator tool as an OpenAI tool specification.
pub fn calculator_tool() -> Value {
    json!({
        "type": "function",
        "function": {
            "name": "calculator",
            "description": "Evaluate an arithmetic expression exactly.",
            "parameters": {
                "type": "object",
                "properties": {"expression": {"type": "string"}},
                "required": ["expression"]
            }
        }
    })
}

/// One GSM8K problem.
#[derive(Clone, Debug, PartialEq)]
pub struct Gsm8kRow {
    /// The question.
    pub question: String,
    /// The worked answer with `<<expr=result>>` calculator annotations and `#### answer`.
    pub answer: String,
}

/// The rows of a GSM8K JSONL text (lines that do not parse are skipped).
pub fn gsm8k_rows(text: &str) -> Vec<Gsm8kRow> {
    text.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|row| {
            Some(Gsm8kRow {
                question: row.get("question")?.as_str()?.to_string(),
                answer: row.get("answer")?.as_str()?.to_string(),
            })
        })
        .collect()
}

/// The `(expression, result)` calculator annotations of a worked answer.
pub fn calculations(answer: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut rest = answer;
    while let Some(start) = rest.find("<<") {
        let after = &rest[start + 2..];
        let Some(end) = after.find(">>") else { break };
        if let Some((expression, result)) = after[..end].split_once('=') {
            found.push((expression.to_string(), result.to_string()));
        }
        rest = &after[end + 2..];
    }
    found
}

/// The final answer after `####`.
pub fn final_answer(answer: &str) -> Option<&str> {
    answer.rsplit_once("####").map(|(_, tail)| tail.trim())
}

/// A tool-use conversation solving one row: one calculator call per annotation, then the
/// final answer.
pub fn calculator_conversation(row: &Gsm8kRow) -> Vec<Message> {
    let mut messages = vec![
        Message::system(SYSTEM_PROMPT),
        Message::user(row.question.clone()),
    ];
    for (expression, result) in calculations(&row.answer) {
        let mut call = Message::assistant(format!("I compute {expression}."));
        call.tool_calls.push(ToolCall::from_json_arguments(
            "calculator",
            &json!({"expression": expression}),
        ));
        messages.push(call);
        messages.push(Message::tool(result));
    }
    let answer = final_answer(&row.answer).unwrap_or("0");
    messages.push(Message::assistant(format!(
        "The answer is {answer}.\nFinal Answer: {answer}"
    )));
    messages
}

/// Every whole number up to this one is a single token of the embedded tokenizer.
pub const WHOLE_NUMBER_TOKENS: u32 = 199;

/// Times the list of whole numbers is repeated in the corpus: often enough that their merges
/// outrank the rarer word merges.
const NUMBER_LIST_REPEATS: usize = 300;

/// The default corpus: every GSM8K train question and answer, every fourth problem as a
/// rendered calculator conversation, and the whole numbers up to `WHOLE_NUMBER_TOKENS`.
pub fn default_corpus(template: &ChatTemplate) -> Result<Vec<String>> {
    let rows = gsm8k_rows(GSM8K_TRAIN);
    let mut corpus: Vec<String> = rows
        .iter()
        .map(|row| format!("{}\n{}", row.question, row.answer))
        .collect();
    let tools = [calculator_tool()];
    for row in rows.iter().step_by(4) {
        let messages = messages_json(&calculator_conversation(row));
        corpus.push(template.render(&messages, &tools, &RenderOptions::default())?);
    }
    let numbers: Vec<String> = (0..=WHOLE_NUMBER_TOKENS).map(|n| n.to_string()).collect();
    corpus.extend(std::iter::repeat_n(numbers.join(" "), NUMBER_LIST_REPEATS));
    Ok(corpus)
}
