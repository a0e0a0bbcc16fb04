//! Labels that repair: a labelled failure is resampled from the turn of its first error (a
//! person's label before an earlier suggestion), the turns before it kept; the passing
//! continuations are selected and exported beside best of N, the manifest naming the label
//! behind each; solved tasks and unlabelled failures are left alone.

use super::scripted::{Scripted, script_task};
use rollscope::curate::repair::LabelSource;
use rollscope::curate::{ExportRequest, Manifest, SelectionRules, export_selection};
use rollscope::formats::{ExportOptions, Format};
use rollscope::model::LoadOptions;
use rollscope::run::repair::{RepairConfig, RepairRequest, run_repair};
use rollscope::run::{JobPolicy, RunContext, RunControl};
use rollscope::session::SessionPaths;
use rollscope::store::{Filter, Store};
use rollscope::trajectory::{
    ErrorKind, Label, LabelStatus, Message, Reward, Task, ToolCall, Trajectory, TrajectoryId,
};
use std::collections::BTreeSet;
use std::sync::Arc;

const RUN: &str = "badcase-0001";

fn label(step: u32, kind: ErrorKind, status: LabelStatus) -> Label {
    Label {
        step,
        kind,
        status,
        note: None,
        author: Some("annotator".into()),
        time: 0,
    }
}

/// A stored two-turn attempt at `task`: the right call 17+25, then `answer`.
fn attempt(task: &Task, sample: u32, answer: &str, labels: Vec<Label>) -> Trajectory {
    let mut call = Message::assistant("");
    let mut tool_call = ToolCall::new("calculator", "{\"expression\": \"17+25\"}");
    tool_call.id = Some("call_0_0".into());
    call.tool_calls.push(tool_call);
    let mut result = Message::tool("42");
    result.tool_call_id = Some("call_0_0".into());
    result.name = Some("calculator".into());
    let mut messages = task.prompt.clone();
    messages.extend([
        call,
        result,
        Message::assistant(format!("Final Answer: {answer}")),
    ]);
    let mut trajectory = Trajectory::new(TrajectoryId::derived(RUN, 0, 0, sample), messages);
    trajectory.task_id = Some(task.id.clone());
    trajectory.run = Some(RUN.into());
    trajectory.policy_version = Some(0);
    trajectory.reward = Some(Reward::scalar(if answer == "42" { 1.0 } else { 0.0 }));
    trajectory.labels = labels;
    trajectory
}

#[test]
fn a_labelled_failure_is_repaired_from_its_first_wrong_turn_and_exported_with_its_label() {
    let root = tempfile::tempdir().unwrap();
    let paths = SessionPaths::new(root.path(), "default").unwrap();
    let store = Arc::new(Store::open(&paths.store_dir()).unwrap());
    let context = RunContext::new(store, paths, LoadOptions::default(), RunControl::new()).unwrap();
    let tasks: Vec<Task> = (0..3).map(|index| script_task(index, "echo")).collect();
    context.store.put_tasks(&tasks).unwrap();
    let failure = attempt(
        &tasks[0],
        0,
        "41",
        vec![
            label(1, ErrorKind::Calculation, LabelStatus::Confirmed),
            label(0, ErrorKind::Format, LabelStatus::Suggested),
        ],
    );
    let solved_failure = attempt(
        &tasks[1],
        1,
        "40",
        vec![label(1, ErrorKind::Calculation, LabelStatus::Confirmed)],
    );
    let solved_success = attempt(&tasks[1], 2, "42", Vec::new());
    let unlabelled = attempt(&tasks[2], 3, "43", Vec::new());
    context
        .store
        .put_trajectories(&[
            failure.clone(),
            solved_failure,
            solved_success.clone(),
            unlabelled,
        ])
        .unwrap();

    let scripted = Scripted::start();
    let rules = SelectionRules::default();
    let solved = BTreeSet::from([tasks[1].id.clone()]);
    let config = RepairConfig {
        samples: 3,
        ..RepairConfig::default()
    };
    let request = RepairRequest {
        rollout_run: RUN,
        solved: &solved,
        config: &config,
        rules: &rules,
        seed: 5,
    };
    let policy = JobPolicy::Endpoint {
        url: &scripted.url,
        model: "script",
    };
    let mut progress = Vec::new();
    let outcome = run_repair(&context, &request, policy, &mut |done, total| {
        progress.push((done, total))
    })
    .unwrap();
    assert_eq!(progress.last(), Some(&(1, 1)), "one failure resampled");
    assert_eq!((outcome.failures, outcome.by_hand), (1, 1));
    assert_eq!((outcome.continuations, outcome.passed), (3, 3));
    assert_eq!(outcome.repairs.len(), 1, "one per task, duplicates dropped");
    let repair = &outcome.repairs[0];
    assert_eq!(repair.failure, failure.id);
    assert_eq!((repair.turn, repair.step), (2, 1), "a person's label wins");
    assert_eq!(
        (repair.kind, repair.source),
        (ErrorKind::Calculation, LabelSource::Hand)
    );
    let child = context.store.get(repair.sample).unwrap().unwrap();
    assert_eq!(child.fork.as_ref().unwrap().parent, failure.id);
    assert_eq!(child.passed(), Some(true));
    assert_eq!(
        child.messages[..4],
        failure.messages[..4],
        "the correct first turn is kept"
    );
    assert_eq!(child.messages[4].content, "Final Answer: 42");

    let path = root.path().join("selection.jsonl");
    let report = export_selection(
        &context.store,
        &ExportRequest {
            filter: Filter {
                run: Some(RUN.into()),
                ..Filter::default()
            },
            selection: Some(rules.clone()),
            format: Format::OpenaiMessages,
            options: ExportOptions::default(),
            path: path.clone(),
            session: None,
            repairs: outcome.repairs.clone(),
        },
        &mut |_, _| {},
    )
    .unwrap();
    let lines = std::fs::read_to_string(&path).unwrap().lines().count();
    assert_eq!(lines, 2, "best of N's success and the repair");
    let manifest = Manifest::read(&Manifest::path_for(&path)).unwrap();
    assert_eq!(manifest, report.manifest);
    assert_eq!(manifest.repairs, outcome.repairs);
    assert_eq!(manifest.counts.selected, 2);
    manifest.verify(&path).unwrap();

    let off = RepairConfig {
        samples: 0,
        ..RepairConfig::default()
    };
    let nothing = run_repair(
        &context,
        &RepairRequest {
            config: &off,
            ..request
        },
        policy,
        &mut |_, _| {},
    )
    .unwrap();
    assert!(nothing.run.is_none() && nothing.repairs.is_empty());
}
