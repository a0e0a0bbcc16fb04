//! Task rows and scored solutions (verl, GSM8K, PRM800K, Math-Shepherd) import with their
//! answers, steps and step scores.

use super::common::import;
use rollscope::formats::Format;
use rollscope::trajectory::{Role, ScoreSource, StopReason};

#[test]
fn verl_rollout_dump() {
    let imported = import("verl_rollout_dump_step3.jsonl");
    assert_eq!(imported.report.format, Some(Format::VerlRollouts));
    assert_eq!((imported.trajectories.len(), imported.tasks.len()), (4, 2));
    let [a, b, c, d] = &imported.trajectories[..] else {
        unreachable!()
    };
    assert_eq!(a.group, b.group);
    assert_ne!(a.group, c.group);
    assert_eq!(c.group, d.group);
    let samples: Vec<Option<u32>> = imported.trajectories.iter().map(|t| t.sample).collect();
    assert_eq!(samples, [Some(0), Some(1), Some(0), Some(1)]);
    let rewards: Vec<f64> = imported
        .trajectories
        .iter()
        .map(|t| t.reward.as_ref().unwrap().total)
        .collect();
    assert_eq!(rewards, [1.0, 0.0, 1.0, 0.0]);
    assert_eq!(a.policy_version, Some(3));
    assert!(a.messages[1].content.ends_with("#### 18"));
    assert_eq!(imported.task_of(a).ground_truth.as_deref(), Some("18"));
    assert_eq!(imported.task_of(c).ground_truth.as_deref(), Some("3"));
}

#[test]
fn verl_task_rows() {
    let imported = import("verl_gsm8k_multiturn_tasks.jsonl");
    assert_eq!(imported.report.format, Some(Format::VerlTasks));
    assert_eq!((imported.trajectories.len(), imported.tasks.len()), (0, 5));
    let truths: Vec<&str> = imported
        .tasks
        .iter()
        .map(|t| t.ground_truth.as_deref().unwrap())
        .collect();
    assert_eq!(truths, ["18", "3", "70000", "540", "20"]);
    let first = &imported.tasks[0];
    assert_eq!(first.source, "openai/gsm8k");
    assert_eq!(first.prompt.len(), 2);
    assert_eq!(first.prompt[0].role, Role::System);
    assert!(
        first
            .reference_solution
            .as_deref()
            .unwrap()
            .ends_with("#### 18")
    );
    assert_eq!(first.extra["reward_model"]["style"], "rule");
    assert_eq!(
        first.extra["extra_info"]["tools_kwargs"]["calc_gsm8k_reward"]["create_kwargs"]["ground_truth"],
        "18"
    );
}

#[test]
fn gsm8k_rows_as_tasks() {
    let imported = import("gsm8k_test_first150.jsonl");
    assert_eq!(imported.report.format, Some(Format::Gsm8k));
    assert_eq!(
        (imported.trajectories.len(), imported.tasks.len()),
        (0, 150)
    );
    let first = &imported.tasks[0];
    assert_eq!(first.ground_truth.as_deref(), Some("18"));
    assert!(
        first
            .question()
            .starts_with("Janet’s ducks lay 16 eggs per day.")
    );
    assert!(
        first
            .reference_solution
            .as_deref()
            .unwrap()
            .contains("<<16-3-4=9>>")
    );
    assert_eq!(
        imported.tasks[146].ground_truth.as_deref(),
        Some("2125"),
        "`#### 2,125`"
    );
}

#[test]
fn prm800k_rows_as_scored_solutions() {
    let imported = import("samples_prm800k.jsonl");
    assert_eq!(imported.report.format, Some(Format::Prm800k));
    assert_eq!(imported.trajectories.len(), 6);
    let steps: Vec<usize> = imported
        .trajectories
        .iter()
        .map(|t| t.steps().len())
        .collect();
    assert_eq!(
        steps,
        [6, 7, 5, 7, 8, 12],
        "the give-up row's empty last step is left out"
    );
    let first = &imported.trajectories[0];
    let values: Vec<f64> = first.step_scores.iter().map(|s| s.value).collect();
    assert_eq!(values, [1.0; 6]);
    assert!(
        first
            .step_scores
            .iter()
            .all(|s| s.source == ScoreSource::Human)
    );
    assert_eq!(
        first.step_scores[1].note.as_deref(),
        Some("written by the labeler")
    );
    let solution = &first.messages[1];
    assert_eq!(
        solution.span_text(Some(solution.spans[1])),
        "We have $3p+e=1.24$ and $5p+e=1.82$."
    );
    assert_eq!(first.final_answer.as_deref(), Some("29"));
    assert_eq!(imported.task_of(first).ground_truth.as_deref(), Some("29"));
    let second = &imported.trajectories[1];
    let values: Vec<f64> = second.step_scores.iter().map(|s| s.value).collect();
    assert_eq!(values, [1.0, 0.5, 1.0, 1.0, 1.0, 1.0, 0.0]);
    assert_eq!(second.stop_reason, StopReason::Other("found_error".into()));
    assert_eq!(
        imported.trajectories[4].stop_reason,
        StopReason::Other("give_up".into())
    );
    assert_eq!(
        imported.task_of(&imported.trajectories[5]).ground_truth,
        None
    );
    let reference = imported
        .task_of(&imported.trajectories[1])
        .reference_solution
        .as_deref();
    assert!(
        reference
            .unwrap()
            .starts_with("Choose any seat in which to place the Independent")
    );
}

#[test]
fn math_shepherd_rows_as_scored_solutions() {
    let imported = import("samples_math-shepherd.jsonl");
    assert_eq!(imported.report.format, Some(Format::MathShepherd));
    assert_eq!(imported.trajectories.len(), 7);
    let first = &imported.trajectories[0];
    let values: Vec<f64> = first.step_scores.iter().map(|s| s.value).collect();
    assert_eq!(values, [1.0, 1.0, 1.0, 1.0, 0.0]);
    assert!(
        first
            .step_scores
            .iter()
            .all(|s| s.source == ScoreSource::MonteCarlo)
    );
    let solution = &first.messages[1];
    assert_eq!(solution.spans.len(), 5);
    assert_eq!(
        solution.span_text(Some(solution.spans[0])),
        "Step 1: Janet spends 3 hours + 5 hours = <<3+5=8>>8 hours per week on music lessons."
    );
    assert!(!solution.content.contains("ки"));
    assert!(
        first.messages[0]
            .content
            .ends_with("than clarinet lessons in a year?")
    );
    assert_eq!(first.final_answer.as_deref(), Some("13520"));
    assert_eq!(imported.task_of(first).source, "GSM8K");
    for trajectory in &imported.trajectories {
        assert_eq!(trajectory.step_scores.len(), trajectory.steps().len());
    }
}
