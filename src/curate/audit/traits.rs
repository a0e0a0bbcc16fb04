//! The suspicious traits of a high-reward trajectory, each with its evidence.

use crate::agent::claims::extract_claims;
use crate::agent::protocol::spec_name;
use crate::agent::reward::final_answer;
use crate::curate::numbers::{answer_number, numbers_of, show};
use crate::text::clip;
use crate::trajectory::{Role, Task, Trajectory};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt;

/// A text answer of fewer words than this found in the prompt is a choice, not a copy.
const MIN_COPIED_WORDS: usize = 3;

/// Fewer words of work than this before the answer, with no call and no calculation, is an
/// answer without support.
const MIN_WORDS_OF_WORK: usize = 8;
/// A line this long repeated this often is repeated text.
const REPEATED_LINE_CHARS: usize = 12;
const REPEATED_LINE_TIMES: usize = 3;
/// Of this many 6-word phrases or more, this share repeated is repeated text.
const SHINGLE_MIN: usize = 20;
const SHINGLE_REPEATED_SHARE: f64 = 0.5;

/// A trait that makes a rewarded trajectory worth a second look.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trait {
    /// An answer with no tool call, no calculation and almost no words before it.
    Unsupported,
    /// The answer is a number (or text) written in the prompt.
    CopiedFromPrompt,
    /// The policy writes a tool result itself, or cites a tool it never called.
    QuotedToolOutput,
    /// Lines or phrases repeated over and over.
    RepeatedText,
    /// Far longer or shorter than the typical rewarded sample.
    AnomalousLength,
}

impl Trait {
    /// A few words for lists.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unsupported => "unsupported answer",
            Self::CopiedFromPrompt => "answer in prompt",
            Self::QuotedToolOutput => "tool output without call",
            Self::RepeatedText => "repeated text",
            Self::AnomalousLength => "anomalous length",
        }
    }
}

impl fmt::Display for Trait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A trait found, with what shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sign {
    /// The trait.
    #[serde(rename = "trait")]
    pub kind: Trait,
    /// The evidence, in a sentence.
    pub evidence: String,
}

/// The traits found in a trajectory, except the length, which needs the other samples.
pub fn signs(trajectory: &Trajectory, task: Option<&Task>) -> Vec<Sign> {
    let mut found = Vec::new();
    let mut add = |kind, evidence: Option<String>| {
        if let Some(evidence) = evidence {
            found.push(Sign { kind, evidence });
        }
    };
    add(Trait::Unsupported, unsupported(trajectory));
    add(Trait::CopiedFromPrompt, copied_from_prompt(trajectory));
    add(
        Trait::QuotedToolOutput,
        quoted_tool_output(trajectory, task),
    );
    add(Trait::RepeatedText, repeated_text(trajectory));
    found
}

/// The length trait: `chars` against the median of the rewarded samples.
pub fn length_sign(chars: usize, median: f64, ratio: f64, samples: usize) -> Option<Sign> {
    if median < 20.0 || samples < 5 {
        return None;
    }
    let size = chars as f64 / median;
    let evidence = if size >= ratio {
        format!(
            "{chars} characters, {size:.1}× the median ({median:.0}) of the {samples} rewarded samples"
        )
    } else if size <= 1.0 / ratio {
        format!(
            "{chars} characters, 1/{:.1} of the median ({median:.0}) of the {samples} rewarded samples",
            1.0 / size.max(1e-9)
        )
    } else {
        return None;
    };
    Some(Sign {
        kind: Trait::AnomalousLength,
        evidence,
    })
}

fn assistant_texts(trajectory: &Trajectory) -> impl Iterator<Item = &str> {
    trajectory
        .messages
        .iter()
        .filter(|message| message.role == Role::Assistant)
        .flat_map(|message| [message.reasoning.as_deref().unwrap_or(""), &message.content])
}

fn unsupported(trajectory: &Trajectory) -> Option<String> {
    if trajectory.tool_call_count() > 0 {
        return None;
    }
    if assistant_texts(trajectory).any(|text| !extract_claims(text).is_empty()) {
        return None;
    }
    let all: String = assistant_texts(trajectory).collect::<Vec<_>>().join("\n");
    let lower = all.to_ascii_lowercase();
    let before = ["final answer", "####", "\\boxed{"]
        .iter()
        .filter_map(|marker| lower.find(marker))
        .min()
        .map_or(all.as_str(), |at| &all[..at]);
    let words = before.split_whitespace().count();
    (words < MIN_WORDS_OF_WORK)
        .then(|| format!("no tool call, no calculation, {words} words of work before the answer"))
}

fn copied_from_prompt(trajectory: &Trajectory) -> Option<String> {
    let prompt: String = trajectory
        .prompt_messages()
        .iter()
        .map(|message| message.content.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    if let Some(value) = answer_number(trajectory) {
        return numbers_of(&prompt)
            .contains(&value)
            .then(|| format!("the answer {} is written in the prompt", show(&value)));
    }
    // A text answer is a copy only when it is a phrase: a word the prompt offers as a
    // choice (`Yes`, `B`, `Paris`) is how such tasks are answered.
    let answer = final_answer(trajectory)?;
    let answer = answer.trim();
    (answer.split_whitespace().count() >= MIN_COPIED_WORDS
        && prompt.to_lowercase().contains(&answer.to_lowercase()))
    .then(|| format!("the answer `{}` is written in the prompt", clip(answer, 40)))
}

fn quoted_tool_output(trajectory: &Trajectory, task: Option<&Task>) -> Option<String> {
    let mut names: Vec<String> = task
        .map(|task| {
            task.tools
                .iter()
                .filter_map(spec_name)
                .map(str::to_ascii_lowercase)
                .collect()
        })
        .unwrap_or_default();
    for call in trajectory
        .messages
        .iter()
        .flat_map(|message| &message.tool_calls)
    {
        names.push(call.name.to_ascii_lowercase());
    }
    names.sort();
    names.dedup();
    let mut called: Vec<String> = Vec::new();
    let mut turn = 0;
    for message in &trajectory.messages {
        match message.role {
            Role::Tool => called.extend(message.name.as_deref().map(str::to_ascii_lowercase)),
            Role::Assistant => {
                turn += 1;
                let lower = message.content.to_ascii_lowercase();
                if ["<tool_response>", "</tool_response>", "<|im_start|>tool"]
                    .iter()
                    .any(|tag| lower.contains(tag))
                {
                    return Some(format!("turn {turn} writes a tool response block itself"));
                }
                let cited = names.iter().find(|name| {
                    !called.contains(name)
                        && ["returned", "returns", "output", "result", "says", "gave"]
                            .iter()
                            .any(|verb| lower.contains(&format!("{name} {verb}")))
                });
                if let Some(name) = cited {
                    return Some(format!(
                        "turn {turn} quotes `{name}` before any call of it returned"
                    ));
                }
            }
            _ => {}
        }
    }
    None
}

fn repeated_text(trajectory: &Trajectory) -> Option<String> {
    let text: String = assistant_texts(trajectory).collect::<Vec<_>>().join("\n");
    let mut lines: HashMap<&str, usize> = HashMap::new();
    for line in text.lines().map(str::trim) {
        if line.chars().count() >= REPEATED_LINE_CHARS {
            *lines.entry(line).or_default() += 1;
        }
    }
    if let Some((line, times)) = lines
        .into_iter()
        .filter(|(_, times)| *times >= REPEATED_LINE_TIMES)
        .max_by_key(|(line, times)| (*times, std::cmp::Reverse(*line)))
    {
        return Some(format!(
            "the line `{}` appears {times} times",
            clip(line, 50)
        ));
    }
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.len() < SHINGLE_MIN + 5 {
        return None;
    }
    let shingles: Vec<&[&str]> = words.windows(6).collect();
    let distinct: std::collections::HashSet<&[&str]> = shingles.iter().copied().collect();
    let repeated = 1.0 - distinct.len() as f64 / shingles.len() as f64;
    (repeated >= SHINGLE_REPEATED_SHARE).then(|| {
        format!(
            "{:.0}% of its {} six-word phrases are repeats",
            repeated * 100.0,
            shingles.len()
        )
    })
}
