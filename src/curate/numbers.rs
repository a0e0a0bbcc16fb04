//! Exact numbers the curation rules compare: a trajectory's answer, the ground truth, the
//! quantities a reference solution computes and the numbers a question gives.

use crate::agent::answer::{answer_value, exact_value};
use crate::agent::arith::display;
use crate::agent::claims::extract_claims;
use crate::agent::prm_rule::numbers_in;
use crate::agent::reward::final_answer;
use crate::trajectory::{Task, Trajectory};
use num_rational::BigRational;
use num_traits::ToPrimitive;

/// The number a trajectory's final answer states, if it states one.
pub fn answer_number(trajectory: &Trajectory) -> Option<BigRational> {
    final_answer(trajectory).and_then(|answer| answer_value(&answer))
}

/// The ground truth as an exact number, when it is one.
pub fn truth_number(task: &Task) -> Option<BigRational> {
    task.ground_truth.as_deref().and_then(exact_value)
}

/// The results of the calculations a reference solution writes (`40*3=120` gives 120), each
/// with the claim it comes from, in order.
pub fn reference_results(task: &Task) -> Vec<(String, BigRational)> {
    let Some(reference) = &task.reference_solution else {
        return Vec::new();
    };
    extract_claims(reference)
        .into_iter()
        .filter_map(|claim| {
            let value = answer_value(&claim.text)?;
            Some((claim.text.trim().to_string(), value))
        })
        .collect()
}

/// Every number the task's question writes.
pub fn question_numbers(task: &Task) -> Vec<BigRational> {
    numbers_in(task.question())
}

/// Every number a text writes.
pub fn numbers_of(text: &str) -> Vec<BigRational> {
    numbers_in(text)
}

/// A number as text: integers plainly, fractions as decimals where exact.
pub fn show(value: &BigRational) -> String {
    display(value)
}

/// A number as a float (for means and errors), `NaN` when it does not fit.
pub fn to_f64(value: &BigRational) -> f64 {
    value.to_f64().unwrap_or(f64::NAN)
}
