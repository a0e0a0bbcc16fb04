//! Diagnosis against the task's own solution. A task generated with its worked solution
//! (`<<16+4=20>>` annotations, as the arithmetic families and GSM8K write them) says which
//! numbers of the question are quantities and which are distractors, and what each step
//! computes; a failed trajectory's calculations are compared with it:
//!
//! | found | kind |
//! |---|---|
//! | a calculation with a number the solution's step does not use (a distractor's, one used twice, one the problem does not give) | understanding |
//! | the solution's numbers under another operation, or in another order | reasoning |
//! | an answer that is not the tool result before it | calculation |
//! | an answer written inside a malformed call after an earlier one, with no result | reasoning |
//! | no marked answer at all | format |
//!
//! A wrong answer that follows from its last result, or rests on none, is left to the
//! understanding rules (a quantity the solution computes on the way, another unit, a part)
//! and then the reasoning rule.
//!
//! Tasks without an annotated solution, or without tools (a solution written in one message,
//! as Math-Shepherd's), keep the rules.

use super::{Context, Evidence};
use crate::agent::arith::{PercentMode, Token, evaluate_expression, tokenize};
use crate::agent::claims::split_annotations;
use crate::agent::prm_rule::preceding_results;
use crate::agent::protocol::check_stored_call;
use crate::curate::numbers::{numbers_of, question_numbers, show};
use crate::trajectory::{ErrorKind, Task};
use num_rational::BigRational;

/// A calculation as written: its numbers in order and its operators.
#[derive(Clone, Debug, PartialEq)]
struct Calculation {
    operands: Vec<BigRational>,
    operators: Vec<Token>,
    text: String,
}

impl Calculation {
    /// The left side of `text` (up to `=`), when it is arithmetic with at least one operator.
    fn parse(text: &str) -> Option<Self> {
        let left = text.split('=').next()?.trim();
        let tokens = tokenize(left).ok()?;
        let mut operands = Vec::new();
        let mut operators = Vec::new();
        for spanned in tokens {
            match spanned.token {
                Token::Number(literal) => operands.push(literal.value),
                Token::Open | Token::Close => {}
                operator => operators.push(operator),
            }
        }
        (!operators.is_empty()).then(|| Self {
            operands,
            operators,
            text: left.to_string(),
        })
    }

    /// Its exact value.
    fn value(&self) -> Option<BigRational> {
        evaluate_expression(&self.text, PercentMode::Fraction)
            .ok()
            .map(|evaluated| evaluated.value)
    }
}

/// One step of a worked solution: what it computes and its result.
#[derive(Clone, Debug)]
struct SolutionStep {
    calculation: Calculation,
    result: BigRational,
}

/// A task's worked solution, read from its annotations.
#[derive(Clone, Debug)]
pub struct Solution {
    steps: Vec<SolutionStep>,
    distractors: Vec<BigRational>,
    question: Vec<BigRational>,
}

impl Solution {
    /// The solution of a task whose reference solution annotates every step it computes.
    pub fn of(task: &Task) -> Option<Self> {
        let (annotations, _) = split_annotations(task.reference_solution.as_deref()?);
        let steps: Vec<SolutionStep> = annotations
            .iter()
            .map(|inner| {
                let (left, right) = inner.rsplit_once('=')?;
                let result = crate::agent::arith::parse_number(right)?;
                Some(SolutionStep {
                    calculation: Calculation::parse(left)?,
                    result,
                })
            })
            .collect::<Option<_>>()?;
        if steps.is_empty() {
            return None;
        }
        let question = question_numbers(task);
        let used = |value: &BigRational| {
            steps
                .iter()
                .any(|step| step.calculation.operands.contains(value))
        };
        let distractors = question
            .iter()
            .filter(|value| !used(value))
            .cloned()
            .collect();
        Some(Self {
            steps,
            distractors,
            question,
        })
    }

    /// The solution step that shares the most numbers with `operands` (the first of equals).
    fn nearest(&self, operands: &[BigRational]) -> &SolutionStep {
        let mut best = &self.steps[0];
        let mut best_overlap = 0;
        for step in &self.steps {
            let overlap = operands.len() - left_over(operands, &step.calculation.operands).len();
            if overlap > best_overlap {
                (best, best_overlap) = (step, overlap);
            }
        }
        best
    }

    /// What is wrong with one calculation of the trajectory, given the results it had before.
    fn check(&self, step: u32, call: &Calculation, carried: &[BigRational]) -> Vec<Evidence> {
        let nearest = self.nearest(&call.operands);
        let reference = format!(
            "the solution computes {} = {}",
            nearest.calculation.text,
            show(&nearest.result)
        );
        let extras: Vec<BigRational> = left_over(&call.operands, &nearest.calculation.operands)
            .into_iter()
            .filter(|value| !carried.contains(value))
            .collect();
        let mut found = Vec::new();
        if !extras.is_empty() {
            let uses: Vec<String> = extras.iter().map(|value| self.describe(value)).collect();
            found.push(Evidence {
                step,
                kind: ErrorKind::Understanding,
                note: format!("`{}` uses {}; {reference}", call.text, uses.join(" and ")),
            });
        }
        if call.operators != nearest.calculation.operators {
            found.push(Evidence {
                step,
                kind: ErrorKind::Reasoning,
                note: format!("`{}` takes another operation: {reference}", call.text),
            });
        } else if extras.is_empty() && !self.computes(call.value().as_ref()) {
            found.push(Evidence {
                step,
                kind: ErrorKind::Reasoning,
                note: format!(
                    "`{}` has the numbers in another order: {reference}",
                    call.text
                ),
            });
        }
        found
    }

    /// Whether `value` is a result the solution computes.
    fn computes(&self, value: Option<&BigRational>) -> bool {
        value.is_some_and(|value| self.steps.iter().any(|step| &step.result == value))
    }

    /// A number the solution's step does not use, said for the note.
    fn describe(&self, value: &BigRational) -> String {
        let shown = show(value);
        if self.distractors.contains(value) {
            format!("{shown}, the distractor's number")
        } else if self.question.contains(value) {
            format!("{shown} once more than the problem gives it")
        } else {
            format!("{shown}, which the problem does not give")
        }
    }
}

/// The elements of `values` left once each element of `used` has cancelled one equal to it.
fn left_over(values: &[BigRational], used: &[BigRational]) -> Vec<BigRational> {
    let mut unused: Vec<&BigRational> = used.iter().collect();
    values
        .iter()
        .filter(
            |value| match unused.iter().position(|other| other == value) {
                Some(at) => {
                    unused.swap_remove(at);
                    false
                }
                None => true,
            },
        )
        .cloned()
        .collect()
}

/// Evidence for a failed trajectory against its task's solution.
pub fn evidence(context: &Context<'_>, solution: &Solution) -> Vec<Evidence> {
    let messages = &context.trajectory.messages;
    let mut found = Vec::new();
    let mut results: Vec<BigRational> = Vec::new();
    let mut malformed_before = false;
    for (index, location) in context.steps.iter().enumerate() {
        let step = index as u32;
        let first_of_message = index == 0 || context.last_of_message(index - 1);
        if first_of_message {
            results.extend(
                preceding_results(messages, location.message)
                    .into_iter()
                    .filter_map(|(_, result)| numbers_of(result).into_iter().next()),
            );
        }
        for claim in crate::agent::claims::extract_claims(context.step_text(index)) {
            if let Some(calculation) = Calculation::parse(&claim.text) {
                found.extend(solution.check(step, &calculation, &results));
            }
            results.extend(crate::agent::answer::answer_value(&claim.text));
        }
        if !context.last_of_message(index) {
            continue;
        }
        let mut malformed = false;
        for call in &messages[location.message].tool_calls {
            if let Some(calculation) = expression(&call.arguments).and_then(Calculation::parse) {
                found.extend(solution.check(step, &calculation, &results));
            }
            if check_stored_call(call, context.tools()).is_err() {
                malformed = true;
                if malformed_before && results.is_empty() {
                    found.extend(answer_in_call(step, &call.arguments, context));
                }
            }
        }
        malformed_before |= malformed;
    }
    found.extend(answer(context, results.last()));
    found
}

/// The `expression` argument of a call, from its JSON or, in a malformed call, its text.
fn expression(arguments: &str) -> Option<&str> {
    let start = arguments.find("\"expression\"")? + "\"expression\"".len();
    let rest = arguments[start..]
        .trim_start()
        .strip_prefix(':')?
        .trim_start();
    let rest = rest.strip_prefix('"')?;
    Some(&rest[..rest.find('"')?])
}

/// A wrong answer written inside a malformed call after an earlier format error, with no
/// result to rest on.
fn answer_in_call(step: u32, arguments: &str, context: &Context<'_>) -> Option<Evidence> {
    let marked = crate::agent::answer::extract_answer(arguments)?;
    let value = crate::agent::answer::answer_value(&marked.text);
    if value.is_some() && value == context.truth_value {
        return None;
    }
    Some(Evidence {
        step,
        kind: ErrorKind::Reasoning,
        note: format!(
            "answers `{}` inside a malformed call, with no result to rest on",
            crate::text::clip(&marked.text, 40)
        ),
    })
}

/// What is wrong with the answer: missing, or not the tool result before it. (A wrong answer
/// that follows from the last result, or that rests on none, is left to the understanding
/// and reasoning rules.)
fn answer(context: &Context<'_>, last_result: Option<&BigRational>) -> Option<Evidence> {
    let step = context.last_step();
    let Some(answer) = &context.answer_value else {
        return context.answer.is_none().then(|| Evidence {
            step,
            kind: ErrorKind::Format,
            note: "no final answer: the last turn has no `Final Answer:` line".into(),
        });
    };
    let result = last_result?;
    (Some(answer) != context.truth_value.as_ref() && answer != result).then(|| Evidence {
        step,
        kind: ErrorKind::Calculation,
        note: format!(
            "the answer {} does not follow from the tool result {}",
            show(answer),
            show(result)
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(value: i64) -> BigRational {
        BigRational::from_integer(value.into())
    }

    #[test]
    fn a_solution_knows_its_quantities_distractors_and_steps() {
        let task = Task {
            reference_solution: Some("Zoe then has 16+4 = <<16+4=20>>20 beads.\n#### 20".into()),
            ground_truth: Some("20".into()),
            ..Task::new(
                "t",
                "arith",
                "Zoe has 16 beads. Then Zoe gets 4 more beads. The shop is 10 metres from \
                 Zoe's home. How many beads does Zoe have now?",
            )
        };
        let solution = Solution::of(&task).unwrap();
        assert_eq!(solution.distractors, vec![number(10)]);
        let check = |text: &str| {
            let call = Calculation::parse(text).unwrap();
            solution
                .check(0, &call, &[])
                .into_iter()
                .map(|evidence| evidence.kind)
                .collect::<Vec<_>>()
        };
        assert_eq!(check("16+4"), vec![]);
        assert_eq!(check("4+16"), vec![]);
        assert_eq!(check("16+10"), vec![ErrorKind::Understanding]);
        assert_eq!(
            check("16-10"),
            vec![ErrorKind::Understanding, ErrorKind::Reasoning]
        );
        assert_eq!(check("16-4"), vec![ErrorKind::Reasoning]);
        assert_eq!(check("4+4"), vec![ErrorKind::Understanding]);
        assert_eq!(expression(r#"{"expression": "4+2"}}\nThe"#), Some("4+2"));
    }
}
