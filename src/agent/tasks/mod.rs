//! Task sets: GSM8K, generated arithmetic word problems, lookup questions over the shipped
//! collection, and task files; named on the command line by a spec such as `arith:3`.
//!
//! Generated and derived sets are split into train and eval by a hash of each question's
//! text, so the same problem can never be in both, whatever the seed.

pub mod arith;
mod file;
pub mod gsm8k;
pub mod lookup;
mod rng;
pub mod weather;

pub use file::load as load_file;
pub use rng::{SplitMix64, stable_hash};

use crate::agent::tools::builtin_spec;
use crate::trajectory::{Message, Role, Task};
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// The system message of built-in tasks.
pub const INSTRUCTIONS: &str = "Solve the problem step by step. You may call the tools offered; each result comes back to you before you continue. Check every calculation. When you are done, write the answer on its own line as `Final Answer: <answer>`.";
/// Share of a generated set held out for evaluation, in percent.
pub const EVAL_PERCENT: u64 = 20;
/// Tasks generated when no limit is given.
pub const DEFAULT_GENERATED: usize = 100;

/// Which part of a generated or derived set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// Tasks to train on (the default).
    Train,
    /// Held-out tasks, never in `Train`.
    Eval,
}

impl Split {
    /// The split a question belongs to (by a stable hash of its text).
    pub fn of(question: &str) -> Self {
        if stable_hash(question) % 100 < EVAL_PERCENT {
            Self::Eval
        } else {
            Self::Train
        }
    }
}

/// A task set named on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskSetSpec {
    /// `gsm8k:train` or `gsm8k:test`: a shipped GSM8K split.
    Gsm8k {
        /// Train, or the held-out test split (`Eval`).
        split: Split,
    },
    /// `arith[:LEVEL[+D]][:train|eval]`: generated word problems (all levels in turn when no
    /// level is given), with D extra distractor sentences.
    Arith {
        /// Difficulty 1–5, or all in turn.
        level: Option<u32>,
        /// Distractor sentences beyond the level's own.
        distractors: u32,
        /// Train or eval.
        split: Split,
    },
    /// `lookup[:LEVEL][:train|eval]`: questions over the shipped collection.
    Lookup {
        /// Difficulty 1–3, or all.
        level: Option<u32>,
        /// Train or eval.
        split: Split,
    },
    /// `weather[:train|eval]`: generated temperature problems, whose answers may be below
    /// zero.
    Weather {
        /// Train or eval.
        split: Split,
    },
    /// A task file: our task JSONL or GSM8K-shaped rows.
    File(PathBuf),
}

const SPEC_HELP: &str = "use gsm8k:train, gsm8k:test, arith[:LEVEL[+DISTRACTORS]][:train|eval], lookup[:LEVEL][:train|eval], weather[:train|eval], or the path of a .jsonl task file";

impl FromStr for TaskSetSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut parts = text.split(':');
        let head = parts.next().unwrap_or("");
        let generated = matches!(head, "arith" | "lookup");
        if head == "gsm8k" {
            return match parts.next() {
                Some("train") => Ok(Self::Gsm8k { split: Split::Train }),
                Some("test") => Ok(Self::Gsm8k { split: Split::Eval }),
                _ => Err(format!(
                    "`{text}`: say which GSM8K split, gsm8k:train (7,473 problems, to train on) or gsm8k:test (1,319, held out)"
                )),
            }
            .and_then(|spec| match parts.next() {
                None => Ok(spec),
                Some(extra) => Err(format!("`{extra}` in `{text}` is not understood; {SPEC_HELP}")),
            });
        }
        if head == "weather" {
            return match (parts.next(), parts.next()) {
                (None | Some("train"), None) => Ok(Self::Weather {
                    split: Split::Train,
                }),
                (Some("eval"), None) => Ok(Self::Weather { split: Split::Eval }),
                _ => Err(format!(
                    "`{text}`: temperature problems take a split only, weather:train or weather:eval"
                )),
            };
        }
        if !generated {
            let path = PathBuf::from(text);
            if path.is_file() {
                return Ok(Self::File(path));
            }
            return Err(format!(
                "`{text}` is neither a task set nor a file; {SPEC_HELP}"
            ));
        }
        let (mut level, mut distractors, mut split) = (None, 0, Split::Train);
        for part in parts {
            match part {
                "train" => split = Split::Train,
                "eval" => split = Split::Eval,
                part => {
                    let max = if head == "arith" { arith::MAX_LEVEL } else { 3 };
                    let (number, extra) = match part.split_once('+') {
                        Some((number, extra)) if head == "arith" => (number, Some(extra)),
                        _ => (part, None),
                    };
                    let parsed = number.parse::<u32>().ok().filter(|n| (1..=max).contains(n));
                    level = Some(parsed.ok_or_else(|| {
                        format!("`{number}` in `{text}` is not a level (1 to {max}) or train/eval")
                    })?);
                    if let Some(extra) = extra {
                        let most = arith::MAX_EXTRA_DISTRACTORS;
                        distractors = extra
                            .parse::<u32>()
                            .ok()
                            .filter(|n| (1..=most).contains(n))
                            .ok_or_else(|| {
                                format!(
                                    "`+{extra}` in `{text}` is not a count of extra distractor sentences (1 to {most})"
                                )
                            })?;
                    }
                }
            }
        }
        Ok(if head == "arith" {
            Self::Arith {
                level,
                distractors,
                split,
            }
        } else {
            Self::Lookup { level, split }
        })
    }
}

impl fmt::Display for TaskSetSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let generated = |f: &mut fmt::Formatter<'_>,
                         name: &str,
                         level: &Option<u32>,
                         distractors: u32,
                         split| {
            write!(f, "{name}")?;
            if let Some(level) = level {
                write!(f, ":{level}")?;
            }
            if distractors > 0 {
                write!(f, "+{distractors}")?;
            }
            if split == Split::Eval {
                write!(f, ":eval")?;
            }
            Ok(())
        };
        match self {
            Self::Gsm8k {
                split: Split::Train,
            } => write!(f, "gsm8k:train"),
            Self::Gsm8k { split: Split::Eval } => write!(f, "gsm8k:test"),
            Self::Arith {
                level,
                distractors,
                split,
            } => generated(f, "arith", level, *distractors, *split),
            Self::Lookup { level, split } => generated(f, "lookup", level, 0, *split),
            Self::Weather { split } => generated(f, "weather", &None, 0, *split),
            Self::File(path) => write!(f, "{}", path.display()),
        }
    }
}

impl TaskSetSpec {
    /// The tasks, at most `limit` (generated sets make `DEFAULT_GENERATED` when `None`);
    /// `seed` chooses the generated problems.
    pub fn load(&self, limit: Option<usize>, seed: u64) -> anyhow::Result<Vec<Task>> {
        let cap = limit.unwrap_or(usize::MAX);
        let mut tasks = match self {
            Self::Gsm8k { split } => gsm8k::shipped(*split)?.into_iter().take(cap).collect(),
            Self::File(path) => load_file(path)?.into_iter().take(cap).collect(),
            Self::Arith {
                level,
                distractors,
                split,
            } => generate_arith(
                *level,
                *distractors,
                *split,
                seed,
                limit.unwrap_or(DEFAULT_GENERATED),
            ),
            Self::Lookup { level, split } => lookup::shipped()?
                .into_iter()
                .filter(|task| level.is_none_or(|level| task.difficulty == Some(level)))
                .filter(|task| Split::of(task.question()) == *split)
                .take(cap)
                .collect(),
            Self::Weather { split } => {
                generate_split(*split, limit.unwrap_or(DEFAULT_GENERATED), |index| {
                    weather::generate(seed, index)
                })
            }
        };
        let tools: &[&str] = match self {
            Self::Lookup { .. } => &["search", "calculator"],
            Self::File(_) => &[],
            _ => &["calculator", "python"],
        };
        for task in &mut tasks {
            prepare(task, tools);
        }
        Ok(tasks)
    }
}

/// `count` generated problems of one split: level `level`, or levels 1–5 in turn, each with
/// `distractors` extra distractor sentences.
pub fn generate_arith(
    level: Option<u32>,
    distractors: u32,
    split: Split,
    seed: u64,
    count: usize,
) -> Vec<Task> {
    generate_split(split, count, |position| {
        let (task_level, index) = match level {
            Some(level) => (level, position),
            None => (
                1 + (position % u64::from(arith::MAX_LEVEL)) as u32,
                position / 5,
            ),
        };
        arith::generate_with_distractors(seed, task_level, distractors, index)
    })
}

/// A generated problem's id: its family, the seed unless it is 0, then `rest`
/// (`arith-s3-1+1-00005`, `weather-00012`).
fn generated_id(family: &str, seed: u64, rest: &str) -> String {
    if seed == 0 {
        format!("{family}-{rest}")
    } else {
        format!("{family}-s{seed}-{rest}")
    }
}

/// The first `count` problems of one split among those `make` writes at positions 0, 1, …
fn generate_split(split: Split, count: usize, mut make: impl FnMut(u64) -> Task) -> Vec<Task> {
    let mut tasks = Vec::with_capacity(count);
    let mut position = 0u64;
    while tasks.len() < count {
        let task = make(position);
        if Split::of(task.question()) == split {
            tasks.push(task);
        }
        position += 1;
    }
    tasks
}

/// Gives a built-in task its system instructions and tool specs (task files keep theirs).
fn prepare(task: &mut Task, tools: &[&str]) {
    if !task
        .prompt
        .iter()
        .any(|message| message.role == Role::System)
        && !tools.is_empty()
    {
        task.prompt.insert(0, Message::system(INSTRUCTIONS));
    }
    if task.tools.is_empty() {
        task.tools = tools.iter().filter_map(|name| builtin_spec(name)).collect();
    }
}
