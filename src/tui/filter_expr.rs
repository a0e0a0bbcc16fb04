//! The `:filter` language: space-separated terms that narrow the list.
//!
//! `pass` `fail` `unlabelled` `confirmed` `suggested` `run:ID` `step:N` `group:N` `task:ID`
//! `label:KIND` `reward:A..B` (either end optional), `all` (clears); `text:` takes the rest
//! of the line as a full-text search of what was said (`text:"Final Answer" tool:calculator`);
//! any other word is text to find in the task, question, run or id.

use crate::curate::labels::LabelKinds;
use crate::store::{Filter, Outcome};
use crate::trajectory::LabelStatus;

/// Parses a filter expression (`label:` takes the session's kind names too); the error names
/// the bad term and what was expected.
pub fn parse(expression: &str, kinds: &LabelKinds) -> Result<Filter, String> {
    let mut filter = Filter::default();
    let mut words = Vec::new();
    let (expression, search) = split_search(expression);
    for term in expression.split_whitespace() {
        let (key, value) = term.split_once(':').unwrap_or((term, ""));
        match (key.to_ascii_lowercase().as_str(), value) {
            ("all" | "clear", "") => filter = Filter::default(),
            ("pass", "") => filter.outcome = Some(Outcome::Pass),
            ("fail", "") => filter.outcome = Some(Outcome::Fail),
            ("unlabelled" | "unlabeled", "") => filter.unlabelled_failures = true,
            ("confirmed", "") => filter.label_status = Some(LabelStatus::Confirmed),
            ("suggested", "") => filter.label_status = Some(LabelStatus::Suggested),
            ("run", run) if !run.is_empty() => filter.run = Some(run.to_string()),
            ("task", task) if !task.is_empty() => filter.task = Some(task.to_string()),
            ("step", step) => filter.step = Some(number(term, step)?),
            ("group", group) => filter.group = Some(number(term, group)?),
            ("label", kind) => filter.label = Some(kinds.parse(kind)?),
            ("reward", range) => {
                let (low, high) = range.split_once("..").ok_or_else(|| {
                    format!("`{term}`: write a reward range as reward:0.5..1 (either end optional)")
                })?;
                filter.reward_min = bound(term, low)?;
                filter.reward_max = bound(term, high)?;
            }
            _ => words.push(term),
        }
    }
    if !words.is_empty() {
        filter.text = Some(words.join(" "));
    }
    filter.full_text = search.map(str::to_string);
    Ok(filter)
}

/// The expression before a `text:` term, and the search after it (up to the end).
fn split_search(expression: &str) -> (&str, Option<&str>) {
    let starts = expression
        .char_indices()
        .filter(|&(at, _)| at == 0 || expression[..at].ends_with(char::is_whitespace))
        .map(|(at, _)| at);
    for at in starts {
        let rest = &expression[at..];
        if rest.len() >= 5 && rest[..5].eq_ignore_ascii_case("text:") {
            let search = rest[5..].trim();
            return (&expression[..at], (!search.is_empty()).then_some(search));
        }
    }
    (expression, None)
}

fn number(term: &str, text: &str) -> Result<u64, String> {
    text.parse()
        .map_err(|_| format!("`{term}`: expected a whole number after the colon"))
}

fn bound(term: &str, text: &str) -> Result<Option<f64>, String> {
    if text.is_empty() {
        return Ok(None);
    }
    text.parse()
        .map(Some)
        .map_err(|_| format!("`{term}`: `{text}` is not a number"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curate::labels::SessionLabelKind;
    use crate::trajectory::{ErrorKind, KindKey};

    #[test]
    fn terms_set_fields_and_words_search() {
        let filter = parse(
            "fail run:grpo-0001 step:3 label:calc reward:..0.5 apples",
            &LabelKinds::default(),
        )
        .unwrap();
        assert_eq!(filter.outcome, Some(Outcome::Fail));
        assert_eq!(filter.run.as_deref(), Some("grpo-0001"));
        assert_eq!(filter.step, Some(3));
        assert_eq!(filter.label, Some(ErrorKind::Calculation));
        assert_eq!((filter.reward_min, filter.reward_max), (None, Some(0.5)));
        assert_eq!(filter.text.as_deref(), Some("apples"));
        assert!(parse("all", &LabelKinds::default()).unwrap().is_empty());
        assert!(
            parse("fail all", &LabelKinds::default())
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn text_takes_the_rest_of_the_line_as_a_search() {
        let filter = parse(
            "fail text:\"Final Answer: 241\" tool:calculator",
            &LabelKinds::default(),
        )
        .unwrap();
        assert_eq!(filter.outcome, Some(Outcome::Fail));
        assert_eq!(
            filter.full_text.as_deref(),
            Some("\"Final Answer: 241\" tool:calculator")
        );
        assert_eq!(filter.text, None);
        assert_eq!(
            parse("TEXT:marbles", &LabelKinds::default())
                .unwrap()
                .full_text
                .as_deref(),
            Some("marbles")
        );
        assert_eq!(
            parse("context:x", &LabelKinds::default())
                .unwrap()
                .full_text,
            None
        );
        assert_eq!(
            parse("text:", &LabelKinds::default()).unwrap().full_text,
            None
        );
    }

    #[test]
    fn a_session_kind_is_found_by_its_name() {
        let kinds = LabelKinds::try_from(vec![SessionLabelKind {
            key: 6,
            name: "hallucination".into(),
            description: None,
        }])
        .unwrap();
        let six = ErrorKind::Session(KindKey::new(6).unwrap());
        assert_eq!(
            parse("label:hallucination", &kinds).unwrap().label,
            Some(six)
        );
        assert_eq!(parse("label:label6", &kinds).unwrap().label, Some(six));
        let error = parse("label:hallu", &LabelKinds::default()).unwrap_err();
        assert!(error.contains("unknown error kind"), "{error}");
    }

    #[test]
    fn bad_terms_say_what_was_expected() {
        assert!(
            parse("step:x", &LabelKinds::default())
                .unwrap_err()
                .contains("whole number")
        );
        assert!(
            parse("reward:1", &LabelKinds::default())
                .unwrap_err()
                .contains("reward:0.5..1")
        );
        assert!(
            parse("label:bogus", &LabelKinds::default())
                .unwrap_err()
                .contains("unknown error kind")
        );
    }
}
