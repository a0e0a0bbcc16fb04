//! Rule-based process scores: each step (assistant turn, or span of a single-message
//! solution) is checked exactly — every arithmetic claim, every tool call's validity, and
//! whether the turn after a tool result restates that result faithfully (the tool said 69,
//! the model writes 96). Where tools are offered, a final answer must also have a basis: a
//! number a tool returned, a calculation that holds, or the task gives; a right answer with
//! none is a guess the verifier cannot tell from a solution. A step scores 1 when every
//! check passes and half as much for each failure; the note names what failed. A step
//! nothing could check (no claim, call, tool result or answer) gets no score: a rule
//! score of 1.00 must mean that checks passed, not that there were none.

use super::answer::{answer_value, exact_value, extract_answer};
use super::arith::{self, display};
use super::claims::{Claim, Verdict, extract_claims};
use super::protocol::check_stored_call;
use crate::trajectory::{Message, Role, ScoreSource, StepScore, Trajectory};
use num_rational::BigRational;
use num_traits::Signed;
use serde_json::Value;

/// The score of a step with this many failed checks.
pub fn step_value(failures: usize) -> f64 {
    0.5f64.powi(i32::try_from(failures).unwrap_or(i32::MAX))
}

/// What the checks of one step found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StepCheck {
    /// Checks made (claims, tool calls, tool results restated).
    pub checks: usize,
    /// One note per failed check.
    pub failures: Vec<String>,
}

impl StepCheck {
    /// The step's score, with a note naming what failed; `None` when nothing was checked.
    pub fn to_score(&self, step: u32) -> Option<StepScore> {
        if self.checks == 0 {
            return None;
        }
        let note = if self.failures.is_empty() {
            match self.checks {
                1 => "1 check passed".to_string(),
                n => format!("all {n} checks passed"),
            }
        } else {
            self.failures.join("; ")
        };
        Some(StepScore {
            step,
            value: step_value(self.failures.len()),
            source: ScoreSource::Rule,
            note: Some(note),
        })
    }

    /// Adds the arithmetic claims of a text.
    pub fn claims(&mut self, text: &str) {
        for claim in extract_claims(text) {
            self.claim(&claim);
        }
    }

    fn claim(&mut self, claim: &Claim) {
        self.checks += 1;
        match &claim.verdict {
            Verdict::Holds => {}
            Verdict::Fails { computed, stated } => self.failures.push(format!(
                "`{}` is false: it is {computed}, not {stated}",
                claim.text.trim()
            )),
            Verdict::Unparsed { reason } => self.failures.push(format!(
                "`{}` cannot be checked: {reason}",
                claim.text.trim()
            )),
        }
    }

    /// Adds the validity checks of a message's tool calls against the tools offered.
    pub fn tool_calls(&mut self, message: &Message, tools: &[Value]) {
        for call in &message.tool_calls {
            self.checks += 1;
            if let Err(error) = check_stored_call(call, tools) {
                let name = if call.name.is_empty() {
                    "?"
                } else {
                    &call.name
                };
                self.failures
                    .push(format!("the call of `{name}` is malformed: {error}"));
            }
        }
    }

    /// Adds a check that a turn restates a numeric tool result faithfully: it fails when
    /// the turn does not state the result but states a new number (one not in `earlier`,
    /// the text before the turn) that is a slip of it.
    pub fn tool_result_use(&mut self, tool: &str, result: &str, turn: &str, earlier: &str) {
        let Some(value) = result_value(result) else {
            return;
        };
        self.checks += 1;
        let stated = numbers_in(turn);
        if stated.contains(&value) {
            return;
        }
        let result_digits = digits(&value);
        if result_digits.len() < 2 {
            return;
        }
        let known = numbers_in(earlier);
        if let Some(miss) = stated
            .iter()
            .find(|number| !known.contains(number) && is_near_miss(&result_digits, &digits(number)))
        {
            self.failures.push(format!(
                "`{tool}` returned {} but the turn states {}",
                display(&value),
                display(miss)
            ));
        }
    }

    /// Adds a check that the final answer a text states (if any) is one of `basis`, the
    /// numbers it may rest on.
    pub fn answer_basis(&mut self, text: &str, basis: &[BigRational]) {
        let Some(value) = extract_answer(text).and_then(|answer| answer_value(&answer.text)) else {
            return;
        };
        self.checks += 1;
        if !basis.contains(&value) {
            self.failures.push(format!(
                "the answer {} has no basis: no tool result, calculation that holds or number \
                 of the task states it",
                display(&value)
            ));
        }
    }
}

/// The numbers a final answer in message `index` may rest on: those the task's messages
/// give, those tools returned without error, and those of the calculations that hold in the
/// assistant's messages up to and including this one.
fn answer_basis(messages: &[Message], index: usize) -> Vec<BigRational> {
    let mut basis = Vec::new();
    for message in &messages[..=index] {
        match message.role {
            Role::Assistant => {
                let reasoning = message.reasoning.as_deref().unwrap_or("");
                for text in [message.content.as_str(), reasoning] {
                    for claim in extract_claims(text) {
                        if claim.verdict == Verdict::Holds {
                            basis.extend(numbers_in(&claim.text));
                        }
                    }
                }
            }
            Role::Tool if message.is_error => {}
            _ => basis.extend(numbers_in(&message.content)),
        }
    }
    basis
}

/// The value of a tool result that is one number (`68`, `-1.25`, `2/3 (≈ 0.6667)`).
fn result_value(result: &str) -> Option<BigRational> {
    let text = result.trim();
    exact_value(text.split(" (≈").next().unwrap_or(text).trim())
}

/// Every number written in a text (not glued to letters), with its sign.
pub fn numbers_in(text: &str) -> Vec<BigRational> {
    let mut numbers = Vec::new();
    let mut pos = 0;
    while pos < text.len() {
        let Some(c) = text[pos..].chars().next() else {
            break;
        };
        let glued = text[..pos].ends_with(|c: char| c.is_alphanumeric() || c == '.');
        if (c.is_ascii_digit() || c == '$')
            && !glued
            && let Some((literal, end)) = arith::number(text, pos)
        {
            let negative = text[..pos].trim_end().ends_with(['-', '−']);
            numbers.push(if negative {
                -literal.value
            } else {
                literal.value
            });
            pos = end;
            continue;
        }
        pos += c.len_utf8();
    }
    numbers
}

/// The significant digits of a value (sign, point and leading zeros dropped).
fn digits(value: &BigRational) -> String {
    display(&value.abs())
        .split(' ')
        .next()
        .unwrap_or("")
        .chars()
        .filter(char::is_ascii_digit)
        .collect::<String>()
        .trim_start_matches('0')
        .to_string()
}

/// Whether `stated` looks like a slip of `result`: the same digits in another order, one
/// digit changed, or a digit dropped or added.
fn is_near_miss(result: &str, stated: &str) -> bool {
    if result == stated || stated.is_empty() {
        return false;
    }
    if result.len() == stated.len() {
        let mut a: Vec<char> = result.chars().collect();
        let mut b: Vec<char> = stated.chars().collect();
        let changed = a.iter().zip(&b).filter(|(x, y)| x != y).count();
        a.sort_unstable();
        b.sort_unstable();
        return changed == 1 || a == b;
    }
    let (long, short) = if result.len() > stated.len() {
        (result, stated)
    } else {
        (stated, result)
    };
    long.len() == short.len() + 1
        && (0..long.len()).any(|skip| {
            long.char_indices()
                .filter(|(index, _)| *index != skip)
                .map(|(_, c)| c)
                .eq(short.chars())
        })
}

/// Rule scores for the steps of a trajectory that something could check, checked against
/// the tools offered (the task's tool specs; with none, only the calls' syntax is checked).
pub fn rule_scores(trajectory: &Trajectory, tools: &[Value]) -> Vec<StepScore> {
    let steps = trajectory.steps();
    steps
        .iter()
        .enumerate()
        .filter_map(|(index, location)| {
            let message = &trajectory.messages[location.message];
            let last_of_message = steps
                .get(index + 1)
                .is_none_or(|next| next.message != location.message);
            let mut check = StepCheck::default();
            let text = message.span_text(location.span);
            check.claims(text);
            if location.span.is_none()
                && let Some(reasoning) = &message.reasoning
            {
                check.claims(reasoning);
            }
            if last_of_message {
                check.tool_calls(message, tools);
            }
            let results = preceding_results(&trajectory.messages, location.message);
            if !results.is_empty() {
                let earlier = earlier_text(&trajectory.messages[..location.message]);
                for (tool, result) in results {
                    check.tool_result_use(tool, result, text, &earlier);
                }
            }
            if !tools.is_empty() {
                check.answer_basis(text, &answer_basis(&trajectory.messages, location.message));
            }
            check.to_score(u32::try_from(index).unwrap_or(u32::MAX))
        })
        .collect()
}

/// The text of earlier messages and their tool calls, whose numbers are not new.
pub fn earlier_text(messages: &[Message]) -> String {
    let mut text = String::new();
    for message in messages {
        text.push_str(&message.content);
        text.push('\n');
        for call in &message.tool_calls {
            text.push_str(&call.arguments);
            text.push('\n');
        }
    }
    text
}

/// The successful tool results between the previous assistant message and message `index`,
/// as (tool name, result text).
pub fn preceding_results(messages: &[Message], index: usize) -> Vec<(&str, &str)> {
    messages[..index]
        .iter()
        .rev()
        .take_while(|message| message.role != Role::Assistant)
        .filter(|message| message.role == Role::Tool && !message.is_error)
        .map(|message| {
            (
                message.name.as_deref().unwrap_or("tool"),
                message.content.as_str(),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slips_of_digits_are_near_misses() {
        assert!(is_near_miss("69", "96"));
        assert!(is_near_miss("68", "66"));
        assert!(is_near_miss("1250", "125"));
        assert!(!is_near_miss("68", "12"));
        assert!(!is_near_miss("68", "68"));
    }
}
