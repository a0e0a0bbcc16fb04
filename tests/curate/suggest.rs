//! Each suggestion rule on constructed trajectories, where it should fire and where not.

use crate::common::{APPLES, apples, call, result, rollout, score, task};
use rollscope::curate::SUGGESTER;
use rollscope::curate::suggest::{merge_suggestions, suggest};
use rollscope::trajectory::{
    ErrorKind, Label, LabelStatus, Message, ScoreSource, Task, ToolCall, Trajectory,
};

fn kinds(trajectory: &Trajectory, task: &Task) -> Vec<(u32, ErrorKind)> {
    suggest(trajectory, Some(task), 7)
        .iter()
        .map(|label| (label.step, label.kind))
        .collect()
}

fn note(trajectory: &Trajectory, task: &Task, kind: ErrorKind) -> String {
    suggest(trajectory, Some(task), 7)
        .into_iter()
        .find(|label| label.kind == kind)
        .and_then(|label| label.note)
        .unwrap_or_default()
}

#[test]
fn suggestions_are_marked_as_suggestions_with_evidence() {
    let task = apples();
    let wrong = rollout(
        &task,
        1,
        vec![Message::assistant("17 + 25 = 43\nFinal Answer: 43")],
        Some(false),
    );
    let labels = suggest(&wrong, Some(&task), 1234);
    assert!(!labels.is_empty());
    for label in &labels {
        assert_eq!(label.status, LabelStatus::Suggested);
        assert_eq!(label.author.as_deref(), Some(SUGGESTER));
        assert_eq!(label.time, 1234);
        assert!(label.note.as_deref().is_some_and(|note| !note.is_empty()));
    }
    let passing = rollout(
        &task,
        2,
        vec![Message::assistant("Final Answer: 42")],
        Some(true),
    );
    assert!(
        suggest(&passing, Some(&task), 1).is_empty(),
        "nothing to say about a clean pass"
    );
}

#[test]
fn calculation_from_false_claims_and_misread_tool_results() {
    let task = apples();
    let false_claim = rollout(
        &task,
        1,
        vec![Message::assistant("17 + 25 = 43\nFinal Answer: 43")],
        Some(false),
    );
    assert_eq!(kinds(&false_claim, &task), [(0, ErrorKind::Calculation)]);
    assert!(
        note(&false_claim, &task, ErrorKind::Calculation)
            .contains("`17 + 25 = 43` is false: it is 42")
    );
    let true_claim = rollout(
        &task,
        2,
        vec![Message::assistant("17 + 25 = 42\nFinal Answer: 42")],
        Some(true),
    );
    assert!(kinds(&true_claim, &task).is_empty());

    let misread = rollout(
        &task,
        3,
        vec![
            call(1, "I add them.", "17+25"),
            result(1, "42"),
            Message::assistant("He has 24 apples.\nFinal Answer: 24"),
        ],
        Some(false),
    );
    assert_eq!(kinds(&misread, &task), [(1, ErrorKind::Calculation)]);
    assert!(
        note(&misread, &task, ErrorKind::Calculation)
            .contains("`calculator` returned 42 but the turn states 24")
    );
    let faithful = rollout(
        &task,
        4,
        vec![
            call(1, "I add them.", "17+25"),
            result(1, "42"),
            Message::assistant("He has 42 apples.\nFinal Answer: 42"),
        ],
        Some(true),
    );
    assert!(kinds(&faithful, &task).is_empty());
}

#[test]
fn format_from_malformed_calls_unmarked_or_unreadable_answers() {
    let task = apples();
    let mut broken = Message::assistant("I add.");
    broken
        .tool_calls
        .push(ToolCall::new("calculator", "{\"expr\": 17+25"));
    let malformed = rollout(
        &task,
        1,
        vec![broken, Message::assistant("Final Answer: 42")],
        Some(true),
    );
    assert_eq!(kinds(&malformed, &task), [(0, ErrorKind::Format)]);
    assert!(
        note(&malformed, &task, ErrorKind::Format)
            .contains("the call of `calculator` is malformed")
    );
    let unknown_tool = rollout(
        &task,
        2,
        vec![{
            let mut message = Message::assistant("");
            message
                .tool_calls
                .push(ToolCall::new("abacus", "{\"expression\": \"1\"}"));
            message
        }],
        Some(false),
    );
    assert!(kinds(&unknown_tool, &task).contains(&(0, ErrorKind::Format)));

    let unmarked = rollout(
        &task,
        3,
        vec![Message::assistant("So he has 42 apples.")],
        Some(false),
    );
    assert_eq!(kinds(&unmarked, &task), [(0, ErrorKind::Format)]);
    assert!(note(&unmarked, &task, ErrorKind::Format).contains("no answer marker"));
    let unreadable = rollout(
        &task,
        4,
        vec![Message::assistant("Final Answer: forty-two")],
        Some(false),
    );
    assert_eq!(kinds(&unreadable, &task), [(0, ErrorKind::Format)]);
    assert!(note(&unreadable, &task, ErrorKind::Format).contains("`forty-two` is not a number"));
    let marked_wrong = rollout(
        &task,
        5,
        vec![Message::assistant("Final Answer: 41")],
        Some(false),
    );
    assert!(
        !kinds(&marked_wrong, &task)
            .iter()
            .any(|(_, kind)| *kind == ErrorKind::Format)
    );
}

#[test]
fn understanding_from_intermediates_units_parts_and_other_operations() {
    let lessons = task(
        "lessons",
        "gsm8k",
        "Janet pays $40/hour for 3 hours of clarinet and $28/hour for 5 hours of piano a week. How much more does she spend on piano a week?",
        "20",
        "Clarinet: 40 * 3 = <<40*3=120>>120\nPiano: 28 * 5 = <<28*5=140>>140\nDifference: 140 - 120 = <<140-120=20>>20\n#### 20",
    );
    let intermediate = rollout(
        &lessons,
        1,
        vec![Message::assistant(
            "Piano costs 28 * 5 = 140.\nFinal Answer: 140",
        )],
        Some(false),
    );
    assert_eq!(
        kinds(&intermediate, &lessons),
        [(0, ErrorKind::Understanding)]
    );
    assert!(
        note(&intermediate, &lessons, ErrorKind::Understanding)
            .contains("intermediate quantity of the reference solution (`28*5=140`)")
    );

    let other_operation = rollout(
        &lessons,
        2,
        vec![Message::assistant(
            "She pays 40*3 = 120 and 28*5 = 140.\nIn all 120 + 140 = 260.\nFinal Answer: 260",
        )],
        Some(false),
    );
    // Without tools (a solution written in one message) the understanding rule reads it as
    // another quantity worked out; in the agent setting the diagnosis against the worked
    // solution calls it what the blind set's guide calls it: the right numbers under the
    // wrong operation.
    let written = Task {
        tools: Vec::new(),
        ..lessons.clone()
    };
    let found = suggest(&other_operation, Some(&written), 1);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].kind, ErrorKind::Understanding);
    assert!(
        found[0]
            .note
            .as_deref()
            .unwrap()
            .contains("combines 120 and 140 by + where the reference solution has `140-120=20`")
    );
    assert_eq!(
        kinds(&other_operation, &lessons),
        [(0, ErrorKind::Reasoning)]
    );
    assert!(
        note(&other_operation, &lessons, ErrorKind::Reasoning)
            .contains("`120 + 140` takes another operation: the solution computes 140-120 = 20")
    );

    let minutes = task(
        "minutes",
        "gsm8k",
        "How many minutes are in 7.8 hours?",
        "468",
        "7.8 * 60 = <<7.8*60=468>>468\n#### 468",
    );
    let hours = rollout(
        &minutes,
        3,
        vec![Message::assistant("Final Answer: 7.8")],
        Some(false),
    );
    assert_eq!(kinds(&hours, &minutes), [(0, ErrorKind::Understanding)]);
    assert!(note(&hours, &minutes, ErrorKind::Understanding).contains("in another unit (÷60)"));

    let apples = apples();
    let part = rollout(
        &apples,
        4,
        vec![Message::assistant("He buys 25.\nFinal Answer: 25")],
        Some(false),
    );
    assert_eq!(kinds(&part, &apples), [(0, ErrorKind::Understanding)]);
    assert!(
        note(&part, &apples, ErrorKind::Understanding)
            .contains("is a part: with 17 (given in the question)")
    );
    assert!(APPLES.contains("17"));

    let plain_wrong = rollout(
        &apples,
        5,
        vec![Message::assistant("Final Answer: 44")],
        Some(false),
    );
    assert_eq!(
        kinds(&plain_wrong, &apples),
        [(0, ErrorKind::Reasoning)],
        "no understanding evidence"
    );
}

#[test]
fn reasoning_at_the_largest_monte_carlo_drop_else_the_first_low_score_else_the_end() {
    let task = apples();
    let turns = || {
        vec![
            Message::assistant("Tom starts with 17 apples."),
            Message::assistant("He loses some, I think."),
            Message::assistant("Final Answer: 44"),
        ]
    };
    let mut mc = rollout(&task, 1, turns(), Some(false));
    mc.step_scores = vec![
        score(0, 1.0, ScoreSource::MonteCarlo),
        score(1, 0.9, ScoreSource::MonteCarlo),
        score(2, 0.1, ScoreSource::MonteCarlo),
        score(1, 0.0, ScoreSource::Human),
    ];
    assert_eq!(kinds(&mc, &task), [(2, ErrorKind::Reasoning)]);
    assert!(note(&mc, &task, ErrorKind::Reasoning).contains("from 0.90 to 0.10"));
    mc.step_scores[1].value = 0.7;
    mc.step_scores[2].value = 0.0;
    assert_eq!(
        kinds(&mc, &task),
        [(2, ErrorKind::Reasoning)],
        "the largest drop (0.7 → 0.0), not the first (1.0 → 0.7)"
    );
    mc.step_scores[0].value = 0.8;
    mc.step_scores[1].value = 0.75;
    mc.step_scores[2].value = 0.0;
    mc.branches.push(rollscope::trajectory::ForkBranch {
        run: "rollout-0002".into(),
        turn: 1,
        children: (0..4).map(rollscope::trajectory::TrajectoryId).collect(),
        passed: 1,
        edited: false,
    });
    assert_eq!(
        kinds(&mc, &task),
        [(2, ErrorKind::Reasoning)],
        "from a start of 0.25 the first step is no drop: success falls most at the last"
    );
    assert!(note(&mc, &task, ErrorKind::Reasoning).contains("success-from-here (forks)"));
    mc.step_scores[0].value = 0.0;
    mc.step_scores[1].value = 0.0;
    mc.step_scores[2].value = 0.0;
    mc.branches[0].passed = 0;
    assert_eq!(
        kinds(&mc, &task),
        [(1, ErrorKind::Reasoning)],
        "hopeless from the start: no drop, so the first low score places it"
    );

    let mut human = rollout(&task, 2, turns(), Some(false));
    human.step_scores = vec![
        score(0, 1.0, ScoreSource::Human),
        score(1, 0.0, ScoreSource::Human),
    ];
    assert_eq!(kinds(&human, &task), [(1, ErrorKind::Reasoning)]);

    let unscored = rollout(&task, 3, turns(), Some(false));
    assert_eq!(kinds(&unscored, &task), [(2, ErrorKind::Reasoning)]);
    assert!(
        note(&unscored, &task, ErrorKind::Reasoning)
            .contains("the answer 44 is wrong (ground truth 42)")
    );

    let mut judged_only = rollout(&task, 4, turns(), None);
    judged_only.step_scores = vec![
        score(0, 1.0, ScoreSource::Human),
        score(1, 1.0, ScoreSource::Human),
    ];
    judged_only.messages.pop();
    assert!(
        kinds(&judged_only, &task).is_empty(),
        "no verdict, no low score, no answer: no failure"
    );
}

#[test]
fn suggestions_replace_earlier_ones_and_never_people_s_labels() {
    let person = Label {
        step: 0,
        kind: ErrorKind::Calculation,
        status: LabelStatus::Confirmed,
        note: Some("checked".into()),
        author: Some("ana".into()),
        time: 1,
    };
    let old = Label {
        step: 1,
        kind: ErrorKind::Reasoning,
        status: LabelStatus::Suggested,
        note: Some("old evidence".into()),
        author: Some(SUGGESTER.into()),
        time: 2,
    };
    let fresh = |step, kind, note: &str| Label {
        step,
        kind,
        status: LabelStatus::Suggested,
        note: Some(note.into()),
        author: Some(SUGGESTER.into()),
        time: 9,
    };
    let merged = merge_suggestions(
        &[person.clone(), old],
        vec![
            fresh(0, ErrorKind::Calculation, "rule PRM"),
            fresh(2, ErrorKind::Format, "new"),
        ],
    );
    assert_eq!(merged.len(), 2);
    assert!(merged.contains(&person));
    assert!(
        merged
            .iter()
            .any(|label| label.step == 2 && label.kind == ErrorKind::Format)
    );
    let later = Label {
        time: 99,
        ..fresh(2, ErrorKind::Format, "new")
    };
    let unchanged = merge_suggestions(&merged, vec![fresh(0, ErrorKind::Calculation, "x"), later]);
    assert!(
        rollscope::store::same_labels(&unchanged, &merged),
        "an identical suggestion keeps its time"
    );
}
