//! The calculator against exact rational arithmetic, and its everyday cases and errors.

use super::common::{in_seconds, runtime};
use num_bigint::BigInt;
use num_rational::BigRational;
use proptest::prelude::*;
use rollscope::agent::arith::{PercentMode, display, evaluate_expression};
use rollscope::agent::tools::{Calculator, ToolFailure, ToolRegistry};
use serde_json::json;
use std::sync::Arc;

/// An expression tree with its exact value computed independently of the parser.
#[derive(Clone, Debug)]
enum Expr {
    Integer(i64),
    Decimal(i64, u32),
    Add(Box<Expr>, Box<Expr>),
    Sub(Box<Expr>, Box<Expr>),
    Mul(Box<Expr>, Box<Expr>),
    Div(Box<Expr>, Box<Expr>),
    Pow(Box<Expr>, i32),
    Neg(Box<Expr>),
    Percent(Box<Expr>),
}

impl Expr {
    fn text(&self) -> String {
        match self {
            Self::Integer(n) => n.to_string(),
            Self::Decimal(n, places) => {
                let digits = format!("{:0>width$}", n, width = *places as usize + 1);
                let (whole, fraction) = digits.split_at(digits.len() - *places as usize);
                format!("{whole}.{fraction}")
            }
            Self::Add(a, b) => format!("({} + {})", a.text(), b.text()),
            Self::Sub(a, b) => format!("({} - {})", a.text(), b.text()),
            Self::Mul(a, b) => format!("({} * {})", a.text(), b.text()),
            Self::Div(a, b) => format!("({} / {})", a.text(), b.text()),
            Self::Pow(a, e) => format!("({})^{e}", a.text()),
            Self::Neg(a) => format!("-({})", a.text()),
            Self::Percent(a) => format!("({})%", a.text()),
        }
    }

    /// The exact value, `None` on division by zero.
    fn value(&self) -> Option<BigRational> {
        let ratio = |n: i64, d: BigInt| BigRational::new(BigInt::from(n), d);
        Some(match self {
            Self::Integer(n) => ratio(*n, 1.into()),
            Self::Decimal(n, places) => {
                ratio(*n, num_traits::pow(BigInt::from(10), *places as usize))
            }
            Self::Add(a, b) => a.value()? + b.value()?,
            Self::Sub(a, b) => a.value()? - b.value()?,
            Self::Mul(a, b) => a.value()? * b.value()?,
            Self::Div(a, b) => {
                let divisor = b.value()?;
                if divisor == ratio(0, 1.into()) {
                    return None;
                }
                a.value()? / divisor
            }
            Self::Pow(a, e) => {
                let base = a.value()?;
                if base == ratio(0, 1.into()) && *e < 0 {
                    return None;
                }
                let magnitude = num_traits::pow(base, e.unsigned_abs() as usize);
                if *e < 0 { magnitude.recip() } else { magnitude }
            }
            Self::Neg(a) => -a.value()?,
            Self::Percent(a) => a.value()? / BigRational::from_integer(100.into()),
        })
    }
}

fn expression() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        (0i64..10_000).prop_map(Expr::Integer),
        ((0i64..100_000), (1u32..4)).prop_map(|(n, places)| Expr::Decimal(n, places)),
    ];
    leaf.prop_recursive(4, 24, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::Add(a.into(), b.into())),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::Sub(a.into(), b.into())),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::Mul(a.into(), b.into())),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::Div(a.into(), b.into())),
            (inner.clone(), -3i32..4).prop_map(|(a, e)| Expr::Pow(a.into(), e)),
            inner.clone().prop_map(|a| Expr::Neg(a.into())),
            inner.prop_map(|a| Expr::Percent(a.into())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn the_calculator_equals_exact_rational_arithmetic(expr in expression()) {
        let text = expr.text();
        let result = evaluate_expression(&text, PercentMode::Fraction);
        match expr.value() {
            Some(expected) => {
                let evaluated = result.map_err(|error| TestCaseError::fail(format!("{text}: {error}")))?;
                prop_assert_eq!(&evaluated.value, &expected, "{}", text);
                let shown = Calculator::evaluate(&text).text;
                prop_assert_eq!(shown, display(&expected));
            }
            None => prop_assert!(
                result.as_ref().is_err_and(|error| error.to_string() == "division by zero"),
                "{} gave {:?}", text, result
            ),
        }
    }
}

fn calculate(expression: &str) -> String {
    Calculator::evaluate(expression).text
}

#[test]
fn decimals_are_exact_and_results_are_written_plainly() {
    assert_eq!(calculate("0.1+0.2"), "0.3");
    assert_eq!(calculate("0.1+0.2-0.3"), "0");
    assert_eq!(calculate("1.10 * 3"), "3.3");
    assert_eq!(calculate("1/3 + 1/6"), "0.5");
    assert_eq!(calculate("2/3"), "2/3 (≈ 0.6666666667)");
    assert_eq!(calculate("-7 / 2"), "-3.5");
    assert_eq!(calculate("2^100"), "1267650600228229401496703205376");
    assert_eq!(calculate("2^-3"), "0.125");
}

#[test]
fn percentages_units_of_notation_and_unicode_operators() {
    assert_eq!(calculate("15%"), "0.15");
    assert_eq!(calculate("20% of 50"), "10");
    assert_eq!(calculate("200 - 15% of 200"), "170");
    assert_eq!(calculate("$1,250.50 × 2"), "2501");
    assert_eq!(calculate("12 ÷ 4 − 1"), "2");
    assert_eq!(calculate("3 x 4"), "12");
    assert_eq!(calculate("-(2 + 3) * -2"), "10");
    assert_eq!(calculate("7 // 2"), "3");
}

#[test]
fn bad_expressions_are_clear_errors() {
    let error = |expression: &str| {
        let output = Calculator::evaluate(expression);
        assert_eq!(output.failure, Some(ToolFailure::Error), "{expression}");
        output.text
    };
    assert_eq!(error("1/0"), "error: division by zero");
    assert_eq!(error("(1 - 1)^-2"), "error: division by zero");
    assert!(error("9^9^9").contains("too large"));
    assert!(error("10^5000").contains("too large"));
    assert!(error("2^(1/2)").contains("whole numbers"));
    assert!(error("2 + apples").contains("`a` at character 5"));
    assert!(error("").contains("empty"));
    assert!(error("((1)").contains("never closed"));
    assert!(error(&"1+".repeat(6000)).contains("longer than"));
}

#[test]
fn the_registry_times_calls_and_counts_failures() {
    let mut registry = ToolRegistry::new();
    registry.register(Arc::new(Calculator::new())).unwrap();
    assert!(registry.register(Arc::new(Calculator::new())).is_err());
    let runtime = runtime();
    let started = std::time::Instant::now();
    let good = runtime.block_on(registry.call(
        "calculator",
        json!({"expression": "6*7"}).as_object().cloned().unwrap(),
        in_seconds(5),
    ));
    let around_ms = started.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(good.text, "42");
    assert!(!good.is_error());
    assert!(
        good.latency_ms > 0.0 && good.latency_ms <= around_ms,
        "the call's latency {} ms lies within the {around_ms} ms around it",
        good.latency_ms
    );
    let bad = runtime.block_on(registry.call(
        "calculator",
        json!({"expression": "1/0"}).as_object().cloned().unwrap(),
        in_seconds(5),
    ));
    assert_eq!(bad.failure, Some(ToolFailure::Error));
    let missing =
        runtime.block_on(registry.call("calculator", serde_json::Map::new(), in_seconds(5)));
    assert_eq!(missing.failure, Some(ToolFailure::Format));
    assert!(missing.text.contains("needs the argument `expression`"));
    let stats = registry.stats();
    let calculator = &stats["calculator"];
    assert_eq!(calculator.calls, 3);
    assert_eq!(calculator.failures[&ToolFailure::Error], 1);
    assert_eq!(calculator.failures[&ToolFailure::Format], 1);
    let message = bad.to_message();
    assert!(message.is_error);
    assert_eq!(message.name.as_deref(), Some("calculator"));
    assert!(message.latency_ms.is_some());
}

#[test]
fn calls_from_spawned_tasks_all_answer() {
    use rollscope::agent::protocol::parse_turn;
    use rollscope::agent::tools::{PythonTool, SandboxLimits};
    let mut registry = ToolRegistry::new();
    registry.register(Arc::new(Calculator::new())).unwrap();
    registry
        .register(Arc::new(PythonTool::new(SandboxLimits::default())))
        .unwrap();
    let registry = Arc::new(registry);
    let runtime = runtime();
    let handles: Vec<_> = (0..24)
        .map(|n| {
            let registry = Arc::clone(&registry);
            let text = if n % 6 == 0 {
                format!("<tool_call>{{\"name\": \"python\", \"arguments\": {{\"code\": \"print({n} * {n})\"}}}}</tool_call>")
            } else {
                format!("<tool_call>{{\"name\": \"calculator\", \"arguments\": {{\"expression\": \"{n}*{n}\"}}}}</tool_call>")
            };
            runtime.spawn(async move {
                let turn = parse_turn(&text, &registry.specs(), n);
                registry.execute(&turn.calls[0], in_seconds(60)).await
            })
        })
        .collect();
    for (n, handle) in handles.into_iter().enumerate() {
        let observation = runtime.block_on(handle).unwrap();
        assert_eq!(
            observation.text.trim(),
            (n * n).to_string(),
            "{observation:?}"
        );
    }
    let stats = registry.stats();
    assert_eq!(stats["calculator"].calls, 20);
    assert_eq!(stats["python"].calls, 4);
}

#[test]
fn python_calls_from_spawned_tasks_overlap_in_time() {
    use rollscope::agent::protocol::parse_turn;
    use rollscope::agent::tools::{PythonTool, SandboxLimits};
    let mut registry = ToolRegistry::new();
    registry
        .register(Arc::new(PythonTool::new(SandboxLimits::default())))
        .unwrap();
    let registry = Arc::new(registry);
    let runtime = runtime();
    let code = "import time\\nstart = time.time()\\ntime.sleep(1.0)\\nprint(start, time.time())";
    let handles: Vec<_> = (0..4)
        .map(|n| {
            let registry = Arc::clone(&registry);
            let text = format!(
                "<tool_call>{{\"name\": \"python\", \"arguments\": {{\"code\": \"{code}\"}}}}</tool_call>"
            );
            runtime.spawn(async move {
                let turn = parse_turn(&text, &registry.specs(), n);
                registry.execute(&turn.calls[0], in_seconds(60)).await
            })
        })
        .collect();
    let intervals: Vec<(f64, f64)> = handles
        .into_iter()
        .map(|handle| {
            let observation = runtime.block_on(handle).unwrap();
            let times: Vec<f64> = observation
                .text
                .split_whitespace()
                .map(|time| time.parse().unwrap())
                .collect();
            assert_eq!(times.len(), 2, "{observation:?}");
            (times[0], times[1])
        })
        .collect();
    let last_start = intervals.iter().map(|i| i.0).fold(f64::MIN, f64::max);
    let first_end = intervals.iter().map(|i| i.1).fold(f64::MAX, f64::min);
    assert!(
        last_start < first_end,
        "all four one-second calls were running at once: {intervals:?}"
    );
}
