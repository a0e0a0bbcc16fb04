//! The `calculator` tool: exact rational arithmetic on one expression.

use super::{Tool, ToolFuture, ToolOutput};
use crate::agent::arith::{PercentMode, display, evaluate_expression};
use serde_json::{Map, Value, json};
use std::time::Instant;

/// Evaluates `+ - * / ^`, parentheses, decimals and percentages exactly.
pub struct Calculator {
    parameters: Value,
}

impl Default for Calculator {
    fn default() -> Self {
        Self::new()
    }
}

impl Calculator {
    /// The tool's name.
    pub const NAME: &'static str = "calculator";

    /// A calculator.
    pub fn new() -> Self {
        Self {
            parameters: json!({
                "type": "object",
                "properties": {
                    "expression": {
                        "type": "string",
                        "description": "An arithmetic expression, e.g. \"(12.5 + 7) * 3\", \"2^10\", \"15% of 80\"."
                    }
                },
                "required": ["expression"]
            }),
        }
    }

    /// The result text of an expression: the value, or `error: …`.
    pub fn evaluate(expression: &str) -> ToolOutput {
        match evaluate_expression(expression, PercentMode::Fraction) {
            Ok(evaluated) => ToolOutput::ok(display(&evaluated.value)),
            Err(error) => ToolOutput::error(format!("error: {error}")),
        }
    }
}

impl Tool for Calculator {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Evaluates an arithmetic expression exactly: + - * / ^ (whole exponents), parentheses, decimals and percentages. Answers with an integer, a decimal, or a fraction with its decimal approximation."
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn call(&self, arguments: Map<String, Value>, _deadline: Instant) -> ToolFuture<'_> {
        let expression = arguments
            .get("expression")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        Box::pin(async move { Self::evaluate(&expression) })
    }
}
