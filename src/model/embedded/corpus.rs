//! The text the embedded tokenizer is trained on: GSM8K's train split (`formats::gsm8k`,
//! shipped in `examples/gsm8k/`; the test split is held out for evaluation and never seen) and
//! synthetic calculator conversations rendered by the chat template, so the chat and
//! tool-call structure is in the vocabulary.

use crate::formats::gsm8k::{self, Gsm8kRow, calculations};
use crate::model::chat::messages_json;
use crate::model::error::{ModelError, Result};
use crate::model::template::{ChatTemplate, RenderOptions};
use crate::trajectory::{Message, ToolCall};
use serde_json::{Value, json};

/// Where the shipped train split is, for errors.
const TRAIN_PATH: &str = "examples/gsm8k/train.jsonl";

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
    let answer = row.final_answer().unwrap_or("0");
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
    let rows: Vec<Gsm8kRow> = gsm8k::rows(gsm8k::TRAIN, TRAIN_PATH)
        .map_err(|problem| ModelError::Field {
            file: TRAIN_PATH.into(),
            field: "answer".into(),
            problem,
        })?
        .into_iter()
        .map(|(_, row)| row)
        .collect();
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
