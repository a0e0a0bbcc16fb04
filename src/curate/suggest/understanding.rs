//! Understanding errors on failed trajectories: the answer is a quantity the reference
//! solution computes on the way (not the one asked for), the ground truth in another unit, a
//! part of the total (or the total instead of a part); or a step combines two quantities the
//! reference also combines, with another operation (a sum where the question asks for a
//! difference): it works out another quantity than the one asked.

use super::{Context, Evidence};
use crate::agent::arith::{Spanned, Token, tokenize};
use crate::agent::claims::extract_claims;
use crate::curate::numbers::{question_numbers, reference_results, show};
use crate::trajectory::{ErrorKind, Task};
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};

/// Factors between units a question may be answered in by mistake (hours and minutes,
/// dollars and cents, weeks and days, …).
const UNIT_FACTORS: [u32; 9] = [7, 12, 24, 52, 60, 100, 365, 1000, 3600];

/// Evidence that the answer answers another question.
pub fn evidence(context: &Context<'_>) -> Vec<Evidence> {
    let (Some(task), Some(answer), Some(truth)) = (
        context.task,
        context.answer_value.as_ref(),
        context.truth_value.as_ref(),
    ) else {
        return Vec::new();
    };
    if answer == truth {
        return Vec::new();
    }
    let intermediates: Vec<(String, BigRational)> = reference_results(task)
        .into_iter()
        .filter(|(_, value)| value != truth)
        .collect();
    let note = intermediate(answer, truth, &intermediates)
        .or_else(|| other_unit(answer, truth))
        .or_else(|| part_or_total(answer, truth, &intermediates, &question_numbers(task)));
    let found = match note {
        Some(note) => Some(Evidence {
            step: context.step_stating(answer),
            kind: ErrorKind::Understanding,
            note,
        }),
        None => other_operation(context, task),
    };
    found.into_iter().collect()
}

/// A two-operand calculation: its operands and operator.
struct Binary {
    left: BigRational,
    operator: &'static str,
    right: BigRational,
    text: String,
}

/// The calculations `a op b = …` of a text.
fn binaries(text: &str) -> Vec<Binary> {
    extract_claims(text)
        .into_iter()
        .filter_map(|claim| {
            let left_side = claim.text.split('=').next()?;
            let tokens = tokenize(left_side).ok()?;
            let [first, operator, second] = tokens.as_slice() else {
                return None;
            };
            let operand = |spanned: &Spanned| match &spanned.token {
                Token::Number(literal) => Some(literal.value.clone()),
                _ => None,
            };
            let operator = match operator.token {
                Token::Plus => "+",
                Token::Minus => "−",
                Token::Times => "×",
                Token::Divide => "÷",
                _ => return None,
            };
            Some(Binary {
                left: operand(first)?,
                operator,
                right: operand(second)?,
                text: claim.text.trim().to_string(),
            })
        })
        .collect()
}

/// The first step that combines two of the reference's operands with another operator.
fn other_operation(context: &Context<'_>, task: &Task) -> Option<Evidence> {
    let reference = binaries(task.reference_solution.as_deref()?);
    (0..context.steps.len()).find_map(|index| {
        binaries(context.step_text(index)).into_iter().find_map(|step| {
            let same_operands = |other: &Binary| {
                (other.left == step.left && other.right == step.right)
                    || (other.left == step.right && other.right == step.left)
            };
            let matched = reference
                .iter()
                .find(|other| same_operands(other) && other.operator != step.operator)?;
            Some(Evidence {
                step: index as u32,
                kind: ErrorKind::Understanding,
                note: format!(
                    "`{}` combines {} and {} by {} where the reference solution has `{}`: it works out another quantity than the one asked",
                    step.text,
                    show(&step.left),
                    show(&step.right),
                    step.operator,
                    matched.text
                ),
            })
        })
    })
}

fn intermediate(
    answer: &BigRational,
    truth: &BigRational,
    intermediates: &[(String, BigRational)],
) -> Option<String> {
    let (claim, _) = intermediates.iter().find(|(_, value)| value == answer)?;
    Some(format!(
        "the answer {} is an intermediate quantity of the reference solution (`{claim}`), not the asked {}",
        show(answer),
        show(truth)
    ))
}

fn other_unit(answer: &BigRational, truth: &BigRational) -> Option<String> {
    if truth.is_zero() {
        return None;
    }
    let ratio = answer / truth;
    UNIT_FACTORS.iter().find_map(|&factor| {
        let factor = BigRational::from_integer(factor.into());
        let (shown, direction) = if ratio == factor {
            (factor.clone(), "×")
        } else if ratio == BigRational::one() / &factor {
            (factor.clone(), "÷")
        } else {
            return None;
        };
        Some(format!(
            "the answer {} is the ground truth {} in another unit ({direction}{})",
            show(answer),
            show(truth),
            show(&shown)
        ))
    })
}

fn part_or_total(
    answer: &BigRational,
    truth: &BigRational,
    intermediates: &[(String, BigRational)],
    given: &[BigRational],
) -> Option<String> {
    let gap = (truth - answer).abs();
    if gap <= BigRational::one() || &gap == answer {
        return None;
    }
    let origin = if given.contains(&gap) {
        "given in the question".to_string()
    } else {
        let (claim, _) = intermediates.iter().find(|(_, value)| *value == gap)?;
        format!("from the reference's `{claim}`")
    };
    Some(if answer < truth {
        format!(
            "the answer {} is a part: with {} ({origin}) it makes the ground truth {}",
            show(answer),
            show(&gap),
            show(truth)
        )
    } else {
        format!(
            "the answer {} is a total: less {} ({origin}) it is the asked {}",
            show(answer),
            show(&gap),
            show(truth)
        )
    })
}
