//! Calculation errors, from the exact checks of the rule PRM: a false arithmetic claim, or a
//! tool result restated wrongly in the turn after it.

use super::{Context, Evidence};
use crate::agent::claims::{Verdict, extract_claims};
use crate::agent::prm_rule::{StepCheck, earlier_text, preceding_results};
use crate::trajectory::ErrorKind;

/// One piece of evidence per step with a false claim or a misused tool result.
pub fn evidence(context: &Context<'_>) -> Vec<Evidence> {
    let messages = &context.trajectory.messages;
    let mut found = Vec::new();
    for (index, location) in context.steps.iter().enumerate() {
        let message = &messages[location.message];
        let text = context.step_text(index);
        let mut notes = false_claims(text);
        if location.span.is_none()
            && let Some(reasoning) = &message.reasoning
        {
            notes.extend(false_claims(reasoning));
        }
        let results = preceding_results(messages, location.message);
        if !results.is_empty() {
            let earlier = earlier_text(&messages[..location.message]);
            let mut check = StepCheck::default();
            for (tool, result) in results {
                check.tool_result_use(tool, result, text, &earlier);
            }
            notes.extend(check.failures);
        }
        if !notes.is_empty() {
            found.push(Evidence {
                step: index as u32,
                kind: ErrorKind::Calculation,
                note: format!("rule PRM: {}", notes.join("; ")),
            });
        }
    }
    found
}

/// Notes on the claims of a text that are checked and false.
fn false_claims(text: &str) -> Vec<String> {
    extract_claims(text)
        .into_iter()
        .filter_map(|claim| match claim.verdict {
            Verdict::Fails { computed, stated } => Some(format!(
                "`{}` is false: it is {computed}, not {stated}",
                claim.text.trim()
            )),
            _ => None,
        })
        .collect()
}
