//! The error analysis on a small constructed store, against values computed by hand.

use crate::common::{apples, call, result, rollout, store, task};
use rollscope::curate::analyse;
use rollscope::store::Filter;
use rollscope::trajectory::{ErrorKind, Label, LabelStatus, Message, ToolCall, Trajectory};

fn label(kind: ErrorKind, status: LabelStatus) -> Label {
    Label {
        step: 0,
        kind,
        status,
        note: None,
        author: Some("tester".into()),
        time: 1,
    }
}

/// Two policy versions of run `grpo-a` on the apples task (truth 42) and an eggs task
/// (truth 10): eight rollouts whose figures are worked out in the test.
fn rollouts() -> Vec<Trajectory> {
    let apples = apples();
    let eggs = task(
        "eggs",
        "gsm8k",
        "Ann has 4 eggs and buys 6 more. How many eggs does she have?",
        "10",
        "4 + 6 = <<4+6=10>>10\n#### 10",
    );
    let answer = |text: &str| vec![Message::assistant(text)];
    let mut malformed = Message::assistant("I add.");
    malformed
        .tool_calls
        .push(ToolCall::new("calculator", "17+25"));
    let mut all = vec![
        rollout(
            &apples,
            1,
            vec![
                call(1, "I add.", "17+25"),
                result(1, "42"),
                Message::assistant("Final Answer: 42"),
            ],
            Some(true),
        ),
        rollout(
            &apples,
            2,
            answer("17 + 25 = 42\nFinal Answer: 42"),
            Some(true),
        ),
        rollout(&apples, 3, answer("Final Answer: 40"), Some(false)),
        rollout(&apples, 4, answer("Final Answer: 45"), Some(false)),
        rollout(&eggs, 5, answer("4 + 6 = 10. Final Answer: 10"), Some(true)),
        rollout(&eggs, 6, answer("4 + 6 = 13 so 13 eggs."), Some(false)),
        rollout(&apples, 7, answer("Final Answer: 42"), Some(true)),
        rollout(
            &apples,
            8,
            vec![
                malformed,
                result(1, "42"),
                Message::assistant("Final Answer: 42"),
            ],
            Some(true),
        ),
    ];
    for (index, trajectory) in all.iter_mut().enumerate() {
        trajectory.run = Some("grpo-a".into());
        trajectory.policy_version = Some(if index < 6 { 0 } else { 1 });
    }
    all[2].labels = vec![label(ErrorKind::Calculation, LabelStatus::Confirmed)];
    all[3].labels = vec![
        label(ErrorKind::Format, LabelStatus::Confirmed),
        label(ErrorKind::Calculation, LabelStatus::Suggested),
    ];
    all[5].labels = vec![label(ErrorKind::Reasoning, LabelStatus::Suggested)];
    all
}

#[test]
fn statistics_match_hand_computed_values() {
    let (_dir, store) = store();
    let eggs = task(
        "eggs",
        "gsm8k",
        "Ann has 4 eggs and buys 6 more. How many eggs does she have?",
        "10",
        "4 + 6 = <<4+6=10>>10\n#### 10",
    );
    store.put_tasks(&[apples(), eggs]).unwrap();
    store.put_trajectories(&rollouts()).unwrap();
    let analysis = analyse(&store, &Filter::default()).unwrap();
    assert_eq!(
        (analysis.trajectories, analysis.passed, analysis.failed),
        (8, 5, 3)
    );
    assert_eq!(analysis.kinds.confirmed(ErrorKind::Calculation), 1);
    assert_eq!(analysis.kinds.confirmed(ErrorKind::Format), 1);
    assert_eq!(analysis.kinds.suggested(ErrorKind::Calculation), 1);
    assert_eq!(analysis.kinds.suggested(ErrorKind::Reasoning), 1);
    assert_eq!(analysis.kinds.suggested(ErrorKind::Format), 0);

    let sources: Vec<(&str, usize, usize)> = analysis
        .sources
        .iter()
        .map(|group| (group.name.as_str(), group.trajectories, group.passed))
        .collect();
    assert_eq!(sources, [("arith", 6, 4), ("gsm8k", 2, 1)]);
    assert_eq!(analysis.runs.len(), 1);
    assert_eq!(analysis.runs[0].kinds.confirmed(ErrorKind::Format), 1);

    let first = &analysis.versions[0];
    assert_eq!((first.run.as_str(), first.step), ("grpo-a", Some(0)));
    assert_eq!((first.trajectories, first.tasks), (6, 2));
    assert_eq!(first.accuracy(), Some(0.5));
    // pass@1: apples 2/4, eggs 1/2 → 0.5. pass@2: apples 1 − C(2,2)/C(4,2) = 5/6, eggs 1 → 11/12.
    // pass@4: only apples has 4 samples: 1 − C(2,4)/C(4,4) = 1.
    let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
    assert!(close(first.pass_at(1).unwrap(), 0.5));
    assert!(close(first.pass_at(2).unwrap(), 11.0 / 12.0));
    assert_eq!(first.pass_at_k[2].k, 4);
    assert_eq!(first.pass_at_k[2].tasks, 1);
    assert!(close(first.pass_at(4).unwrap(), 1.0));
    // Numeric error: 0, 0, 2, 3, 0 and one rollout with no answer.
    let numeric = first.numeric.unwrap();
    assert_eq!(
        (numeric.answered, numeric.unanswered, numeric.exact),
        (5, 1, 3)
    );
    assert!(close(numeric.mean_absolute.unwrap(), 1.0));
    assert!(close(numeric.median_absolute.unwrap(), 0.0));
    assert!(close(numeric.mean_relative.unwrap(), 1.0 / 42.0));
    // Only the unmarked eggs rollout fails the format check.
    assert!(close(first.format_correct.unwrap(), 5.0 / 6.0));

    let second = &analysis.versions[1];
    assert_eq!(second.step, Some(1));
    assert_eq!(second.accuracy(), Some(1.0));
    // The malformed call (arguments `17+25`, not JSON) fails the format check.
    assert!(close(second.format_correct.unwrap(), 0.5));
    // Characters written: 16 ("Final Answer: 42"), and 6 + 10 + 5 + 16 = 37.
    assert!(close(second.mean_chars.unwrap(), 26.5));
    assert!(close(second.mean_turns, 1.5));

    assert_eq!(analysis.first_error.confirmed, [2]);
    assert_eq!(analysis.first_error.suggested, [2]);
    // Both reviewed rollouts (confirmed labels) get a reasoning suggestion — wrong answers with
    // no further evidence — which matches neither person's label.
    let precision = analysis.precision.unwrap();
    assert_eq!(precision.reviewed, 2);
    let reasoning = precision.kind(ErrorKind::Reasoning);
    assert_eq!((reasoning.suggested, reasoning.correct), (2, 0));
    assert_eq!(reasoning.precision(), Some(0.0));
    let calculation = precision.kind(ErrorKind::Calculation);
    assert_eq!((calculation.confirmed, calculation.found), (1, 0));
    assert_eq!(calculation.precision(), None);

    let only_failures = analyse(
        &store,
        &Filter {
            outcome: Some(rollscope::store::Outcome::Fail),
            ..Filter::default()
        },
    )
    .unwrap();
    assert_eq!(only_failures.trajectories, 3);
    assert_eq!(only_failures.versions.len(), 1);
}
