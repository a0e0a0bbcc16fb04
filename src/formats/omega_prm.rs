//! OmegaPRM / MATH-APS process-supervision rows (OpenR's `preprocess` output):
//! `{question, final_answer, reasoning_steps, question_id?}`. The steps come in two forms:
//! a tree `{text, mc_value, children}` whose root holds the question, where every
//! root-to-leaf path is one solution, and a linear list `[{solution_prefix, mc_value}]` of
//! cumulative prefixes. Each `mc_value` is a Monte-Carlo estimate (the share of completions
//! from that step that reach the right answer), so it becomes a `monte_carlo` step score;
//! the solutions of one question share a GRPO-style group, one sample per path.

use super::context::{Context, TaskDraft};
use super::document::read_records;
use super::fields::{
    element, field, into_object, take, take_required, take_required_string, text_of,
};
use super::intake::Intake;
use super::steps::solution_message;
use super::{ImportError, ImportReport, Item};
use crate::trajectory::{Message, ScoreSource, StepScore};
use serde_json::{Map, Value};

/// Key of a trajectory's `extra` holding the root's value: the estimate before any step.
const ROOT_VALUE_KEY: &str = "mc_value_before_first_step";

/// One step of a solution: its text and Monte-Carlo value.
#[derive(Clone)]
struct Step {
    text: String,
    value: Option<f64>,
}

/// Reads OmegaPRM rows, one trajectory per solution path.
pub fn read(
    context: &mut Context<'_>,
    intake: &mut Intake<'_, '_>,
) -> Result<ImportReport, ImportError> {
    let path = context.path;
    read_records(path, intake, |value| parse(context, value))
}

fn parse(context: &mut Context<'_>, value: Value) -> Result<Vec<Item>, String> {
    let mut object = into_object(value, "")?;
    let question = take_required_string(&mut object, "question", "")?;
    let ground_truth = take(&mut object, "final_answer").map(|answer| text_of(&answer));
    let steps = take_required(&mut object, "reasoning_steps", "")?;
    let (solutions, root_value) = match steps {
        Value::Array(prefixes) => (vec![linear_steps(prefixes)?], None),
        Value::Object(root) => {
            let root_value = mc_value(&root, "reasoning_steps")?;
            let mut solutions = Vec::new();
            tree_paths(&root, "reasoning_steps", &mut Vec::new(), &mut solutions)?;
            (solutions, root_value)
        }
        _ => {
            return Err(
                "reasoning_steps: expected a tree `{text, mc_value, children}` or a list \
                 `[{solution_prefix, mc_value}]`"
                    .into(),
            );
        }
    };
    let mut items = Vec::new();
    for steps in solutions {
        if steps.is_empty() {
            continue;
        }
        let (group, sample) = context.group_sample(None, &question);
        let texts: Vec<&str> = steps.iter().map(|step| step.text.as_str()).collect();
        let solution = solution_message(&texts)?;
        let mut trajectory = context.trajectory(vec![Message::user(question.clone()), solution]);
        trajectory.group = Some(group);
        trajectory.sample = Some(sample);
        trajectory.step_scores = scores(&steps);
        trajectory.extra = object.clone();
        if let Some(value) = root_value {
            trajectory.extra.insert(ROOT_VALUE_KEY.into(), value.into());
        }
        let draft =
            TaskDraft::from_trajectory(&trajectory, Vec::new()).answer(ground_truth.clone());
        items.extend(context.with_task(trajectory, draft));
    }
    if items.is_empty() {
        return Err("reasoning_steps: no solution has a step".into());
    }
    Ok(items)
}

/// The steps of the linear form: each prefix less the one before it.
fn linear_steps(prefixes: Vec<Value>) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    let mut previous = String::new();
    for (index, prefix) in prefixes.into_iter().enumerate() {
        let path = element("reasoning_steps", index);
        let object = into_object(prefix, &path)?;
        let text = object
            .get("solution_prefix")
            .and_then(Value::as_str)
            .ok_or(format!(
                "{}: expected a string",
                field(&path, "solution_prefix")
            ))?;
        let step = text.strip_prefix(previous.as_str()).unwrap_or(text);
        steps.push(Step {
            text: step.trim().to_string(),
            value: mc_value(&object, &path)?,
        });
        previous = text.to_string();
    }
    Ok(steps)
}

/// Every root-to-leaf path below `node` (the root's own text is the question).
fn tree_paths(
    node: &Map<String, Value>,
    path: &str,
    above: &mut Vec<Step>,
    solutions: &mut Vec<Vec<Step>>,
) -> Result<(), String> {
    let children = match node.get("children") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(children)) => children.as_slice(),
        Some(_) => return Err(format!("{}: expected an array", field(path, "children"))),
    };
    if children.is_empty() {
        solutions.push(above.clone());
        return Ok(());
    }
    for (index, child) in children.iter().enumerate() {
        let child_path = element(&field(path, "children"), index);
        let child = child
            .as_object()
            .ok_or(format!("{child_path}: expected an object"))?;
        let text = child
            .get("text")
            .and_then(Value::as_str)
            .ok_or(format!("{}: expected a string", field(&child_path, "text")))?;
        above.push(Step {
            text: text.trim().to_string(),
            value: mc_value(child, &child_path)?,
        });
        tree_paths(child, &child_path, above, solutions)?;
        above.pop();
    }
    Ok(())
}

/// A node's `mc_value`: absent or null is none; anything but a number in 0..=1 is an error.
fn mc_value(node: &Map<String, Value>, path: &str) -> Result<Option<f64>, String> {
    match node.get("mc_value") {
        None | Some(Value::Null) => Ok(None),
        Some(value) => match value.as_f64() {
            Some(number) if (0.0..=1.0).contains(&number) => Ok(Some(number)),
            _ => Err(format!(
                "{}: expected a number from 0 to 1, found {value}",
                field(path, "mc_value")
            )),
        },
    }
}

/// The steps' values as `monte_carlo` step scores (steps without one get none).
fn scores(steps: &[Step]) -> Vec<StepScore> {
    steps
        .iter()
        .enumerate()
        .filter_map(|(index, step)| {
            step.value.map(|value| StepScore {
                step: index as u32,
                value,
                source: ScoreSource::MonteCarlo,
                note: None,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prefixes_become_steps_and_trees_become_paths() {
        let steps = linear_steps(vec![
            json!({"solution_prefix": "a=1.", "mc_value": 0.5}),
            json!({"solution_prefix": "a=1. b=2.", "mc_value": 1.0}),
        ])
        .unwrap();
        let texts: Vec<&str> = steps.iter().map(|step| step.text.as_str()).collect();
        assert_eq!(texts, ["a=1.", "b=2."]);
        assert_eq!(scores(&steps)[1].value, 1.0);
        let root = json!({"text": "Q", "mc_value": 0.5, "children": [
            {"text": "x", "mc_value": 1.0},
            {"text": "y", "mc_value": 0.25, "children": [{"text": "z", "mc_value": 0.0}]},
        ]});
        let mut solutions = Vec::new();
        tree_paths(
            root.as_object().unwrap(),
            "r",
            &mut Vec::new(),
            &mut solutions,
        )
        .unwrap();
        let paths: Vec<Vec<&str>> = solutions
            .iter()
            .map(|steps| steps.iter().map(|step| step.text.as_str()).collect())
            .collect();
        assert_eq!(paths, [vec!["x"], vec!["y", "z"]]);
        let bad = json!({"text": "Q", "children": [{"text": "x", "mc_value": 2}]});
        let error = tree_paths(
            bad.as_object().unwrap(),
            "r",
            &mut Vec::new(),
            &mut Vec::new(),
        );
        assert!(error.unwrap_err().contains("r.children[0].mc_value"));
    }
}
