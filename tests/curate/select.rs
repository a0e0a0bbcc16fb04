//! The selection rules: verifier → PRM → length, label exclusion, corrected samples,
//! duplicates, caps and difficulty balance.

use crate::common::{apples, rollout, score, task};
use rollscope::curate::TaskIndex;
use rollscope::curate::select::{CORRECTED_BY, SelectionRules, select_from};
use rollscope::store::Summary;
use rollscope::trajectory::{
    ErrorKind, Label, LabelStatus, Message, ScoreSource, Task, Trajectory, TrajectoryId,
};
use std::collections::HashMap;

/// A sample of `task`: `turns` assistant turns, a verdict, the given PRM minimum.
fn sample(task: &Task, number: u64, turns: usize, passed: bool, prm: Option<f64>) -> Trajectory {
    let messages = (0..turns)
        .map(|turn| Message::assistant(format!("turn {turn} of sample {number}")))
        .collect();
    let mut trajectory = rollout(task, number, messages, Some(passed));
    trajectory.step_scores = prm
        .map(|value| vec![score(0, value, ScoreSource::Rule)])
        .unwrap_or_default();
    trajectory
}

fn confirmed(mut trajectory: Trajectory) -> Trajectory {
    trajectory.labels.push(Label {
        step: 0,
        kind: ErrorKind::Calculation,
        status: LabelStatus::Confirmed,
        note: None,
        author: Some("ana".into()),
        time: 1,
    });
    trajectory
}

fn run(
    trajectories: &[Trajectory],
    tasks: &TaskIndex,
    rules: &SelectionRules,
) -> rollscope::curate::Selection {
    let summaries: Vec<Summary> = trajectories
        .iter()
        .enumerate()
        .map(|(seq, trajectory)| Summary::of(trajectory, seq as u64))
        .collect();
    let records: HashMap<TrajectoryId, Trajectory> = trajectories
        .iter()
        .map(|trajectory| (trajectory.id, trajectory.clone()))
        .collect();
    select_from(&summaries, tasks, rules, &mut |id| {
        records
            .get(&id)
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("no record {id}"))
    })
    .unwrap()
}

fn numbers(selection: &rollscope::curate::Selection) -> Vec<u64> {
    selection
        .kept
        .iter()
        .map(|summary| summary.id.0 - 0x1000)
        .collect()
}

#[test]
fn the_best_comes_first_by_verifier_then_prm_then_length() {
    let task = apples();
    let samples = [
        sample(&task, 1, 1, true, Some(0.5)),
        sample(&task, 2, 3, true, Some(0.9)),
        sample(&task, 3, 2, true, Some(0.9)),
        sample(&task, 4, 1, false, Some(1.0)),
        sample(&task, 5, 1, true, None),
    ];
    let tasks = TaskIndex::from_tasks([task]);
    let all = SelectionRules {
        per_task: 5,
        require_pass: false,
        ..SelectionRules::default()
    };
    assert_eq!(numbers(&run(&samples, &tasks, &all)), [3, 2, 1, 5, 4]);
    let best = run(&samples, &tasks, &SelectionRules::default());
    assert_eq!(numbers(&best), [3]);
    let preview = &best.preview;
    assert_eq!(
        (preview.samples, preview.tasks, preview.tasks_kept),
        (5, 1, 1)
    );
    assert_eq!(
        preview.capped, 3,
        "three other passing samples beyond the cap of 1"
    );
    assert_eq!(preview.kept_by_difficulty, [(Some(1), 1)]);
    assert_eq!(preview.mean_turns_kept, Some(2.0));
}

#[test]
fn confirmed_errors_are_left_out_and_counted_and_corrections_come_back_in() {
    let labelled = task("labelled", "arith", "Q1?", "1", "#### 1");
    let failing = task("failing", "arith", "Q2?", "2", "#### 2");
    let samples = [
        confirmed(sample(&labelled, 1, 1, true, Some(1.0))),
        sample(&labelled, 2, 1, false, Some(1.0)),
        sample(&failing, 3, 1, false, Some(1.0)),
    ];
    let tasks = TaskIndex::from_tasks([labelled, failing]);
    let selection = run(&samples, &tasks, &SelectionRules::default());
    assert!(selection.kept.is_empty());
    let preview = &selection.preview;
    assert_eq!(preview.tasks_excluded_by_labels, 1);
    assert_eq!(preview.samples_excluded_by_labels, 1);
    assert_eq!(preview.tasks_no_pass, 1);
    let keep_labelled = SelectionRules {
        exclude_confirmed_errors: false,
        ..SelectionRules::default()
    };
    assert_eq!(numbers(&run(&samples, &tasks, &keep_labelled)), [1]);

    let mut corrected = confirmed(sample(&tasks_task(&tasks, "failing"), 4, 1, false, None));
    corrected.extra.insert(CORRECTED_BY.into(), "ana".into());
    let with_correction = [samples[2].clone(), corrected];
    assert!(
        run(&with_correction, &tasks, &SelectionRules::default())
            .kept
            .is_empty()
    );
    let include = SelectionRules {
        include_corrected: true,
        ..SelectionRules::default()
    };
    let selection = run(&with_correction, &tasks, &include);
    assert_eq!(numbers(&selection), [4]);
    assert_eq!(selection.preview.corrected, 1);
}

fn tasks_task(tasks: &TaskIndex, id: &str) -> Task {
    tasks.get(id).cloned().unwrap()
}

#[test]
fn duplicate_completions_are_dropped_before_the_cap() {
    let task = apples();
    let twin = |number| {
        let mut trajectory = rollout(
            &task,
            number,
            vec![Message::assistant("Final Answer: 42")],
            Some(true),
        );
        trajectory.step_scores = vec![score(0, 1.0, ScoreSource::Rule)];
        trajectory
    };
    let samples = [twin(1), twin(2), sample(&task, 3, 1, true, Some(0.8))];
    let tasks = TaskIndex::from_tasks([task]);
    let two = SelectionRules {
        per_task: 2,
        ..SelectionRules::default()
    };
    let selection = run(&samples, &tasks, &two);
    assert_eq!(numbers(&selection), [1, 3]);
    assert_eq!(
        (selection.preview.duplicates, selection.preview.capped),
        (1, 0)
    );
    let keep_twins = SelectionRules {
        dedup: false,
        ..two
    };
    let selection = run(&samples, &tasks, &keep_twins);
    assert_eq!(numbers(&selection), [1, 2]);
    assert_eq!(selection.preview.capped, 1);
}

#[test]
fn balancing_keeps_as_many_tasks_per_level_as_the_smallest_level() {
    let level = |id: &str, difficulty| {
        let mut task = task(id, "arith", id, "1", "#### 1");
        task.difficulty = Some(difficulty);
        task
    };
    let tasks = [level("a", 1), level("b", 1), level("c", 1), level("d", 2)];
    let samples = [
        sample(&tasks[0], 1, 1, true, Some(0.5)),
        sample(&tasks[1], 2, 1, true, Some(0.9)),
        sample(&tasks[2], 3, 1, true, Some(0.7)),
        sample(&tasks[3], 4, 1, true, Some(0.1)),
    ];
    let index = TaskIndex::from_tasks(tasks);
    let plain = run(&samples, &index, &SelectionRules::default());
    assert_eq!(
        plain.preview.kept_by_difficulty,
        [(Some(1), 3), (Some(2), 1)]
    );
    let balanced = SelectionRules {
        balance_difficulty: true,
        ..SelectionRules::default()
    };
    let selection = run(&samples, &index, &balanced);
    assert_eq!(
        numbers(&selection),
        [2, 4],
        "the best task of level 1 (PRM 0.9) and level 2's"
    );
    assert_eq!(selection.preview.dropped_by_balance, 2);
    assert_eq!(
        selection.preview.kept_by_difficulty,
        [(Some(1), 1), (Some(2), 1)]
    );
    assert!(balanced.describe().contains("balanced by difficulty"));
}

#[test]
fn a_prm_threshold_leaves_out_unsupported_right_answers() {
    let task = apples();
    let samples = [
        sample(&task, 1, 1, true, Some(0.5)),
        sample(&task, 2, 2, true, Some(1.0)),
        sample(&task, 3, 1, true, None),
    ];
    let other = task_with_id("other");
    let guesses = [
        sample(&other, 4, 1, true, Some(0.5)),
        sample(&other, 5, 1, false, Some(1.0)),
    ];
    let tasks = TaskIndex::from_tasks([task, other]);
    let all: Vec<Trajectory> = samples.iter().chain(&guesses).cloned().collect();
    let strict = SelectionRules {
        per_task: 3,
        min_prm: Some(1.0),
        ..SelectionRules::default()
    };
    let selection = run(&all, &tasks, &strict);
    assert_eq!(numbers(&selection), [2]);
    let preview = &selection.preview;
    assert_eq!((preview.samples_below_prm, preview.tasks_below_prm), (3, 1));
    assert_eq!(preview.tasks_no_pass, 0);
    assert!(strict.describe().contains("PRM ≥ 1"));
    let lenient = run(
        &all,
        &tasks,
        &SelectionRules {
            per_task: 3,
            ..SelectionRules::default()
        },
    );
    assert_eq!(numbers(&lenient), [2, 1, 3, 4]);
}

fn task_with_id(id: &str) -> Task {
    let mut task = apples();
    task.id = id.into();
    task
}

fn suggested(mut trajectory: Trajectory, kind: ErrorKind) -> Trajectory {
    trajectory.labels.push(Label {
        step: 0,
        kind,
        status: LabelStatus::Suggested,
        note: Some("a rule found it".into()),
        author: Some(rollscope::curate::SUGGESTER.into()),
        time: 1,
    });
    trajectory
}

#[test]
fn trusted_suggested_kinds_leave_a_sample_out_and_the_verifier_alone_keeps_everything_passing() {
    let task = apples();
    let samples = [
        suggested(sample(&task, 1, 1, true, Some(1.0)), ErrorKind::Format),
        suggested(sample(&task, 2, 2, true, Some(1.0)), ErrorKind::Reasoning),
        confirmed(sample(&task, 3, 1, true, Some(0.5))),
        sample(&task, 4, 3, true, Some(1.0)),
    ];
    let tasks = TaskIndex::from_tasks([task]);
    let trusting = SelectionRules {
        per_task: 4,
        exclude_suggested: vec![ErrorKind::Format, ErrorKind::Calculation],
        ..SelectionRules::default()
    };
    let selection = run(&samples, &tasks, &trusting);
    assert_eq!(
        numbers(&selection),
        [2, 4],
        "format suggested and confirmed out"
    );
    assert_eq!(selection.preview.samples_excluded_by_labels, 2);
    assert!(
        trusting
            .describe()
            .contains("no suggested format/calculation label"),
        "{}",
        trusting.describe()
    );
    assert_eq!(
        numbers(&run(&samples, &tasks, &SelectionRules::verifier_only(4))),
        [1, 3, 2, 4],
        "every passing sample, shortest first: no process score ranks them"
    );
    let only_format = SelectionRules {
        per_task: 4,
        exclude_confirmed_errors: false,
        exclude_suggested: vec![ErrorKind::Format],
        ..SelectionRules::default()
    };
    assert_eq!(numbers(&run(&samples, &tasks, &only_format)), [2, 4, 3]);
}

#[test]
fn equal_samples_are_chosen_by_sample_index_whatever_order_they_were_stored_in() {
    let task = apples();
    let tasks = TaskIndex::from_tasks([task.clone()]);
    let stored_as_they_finished: Vec<Trajectory> = [3u32, 1, 2]
        .into_iter()
        .map(|index| {
            let mut trajectory = sample(&task, u64::from(index), 1, true, Some(1.0));
            trajectory.messages.last_mut().unwrap().content = format!("answer {index}");
            trajectory.group = Some(0);
            trajectory.sample = Some(index);
            trajectory
        })
        .collect();
    let two = SelectionRules {
        per_task: 2,
        ..SelectionRules::default()
    };
    assert_eq!(
        numbers(&run(&stored_as_they_finished, &tasks, &two)),
        [1, 2]
    );
    let reversed: Vec<Trajectory> = stored_as_they_finished.into_iter().rev().collect();
    assert_eq!(numbers(&run(&reversed, &tasks, &two)), [1, 2]);
}
