//! Labels that travel: JSONL out and back, and merges per author that skip what is known, add
//! a teammate's labels beside ours and list one author's conflicts without overwriting them
//! unless asked.

use crate::common::{apples, rollout, store};
use rollscope::curate::labels::{
    LabelRecord, MergeReport, Prefer, collect_labels, merge_labels, plan_merge, read_labels,
    write_labels,
};
use rollscope::store::Filter;
use rollscope::trajectory::{ErrorKind, Label, LabelStatus, Message, TrajectoryId};

fn label(
    step: u32,
    kind: ErrorKind,
    status: LabelStatus,
    note: Option<&str>,
    author: &str,
) -> Label {
    Label {
        step,
        kind,
        status,
        note: note.map(str::to_string),
        author: Some(author.into()),
        time: 100,
    }
}

use ErrorKind::*;
use LabelStatus::*;

#[test]
fn merges_add_teammates_labels_beside_ours_and_list_one_authors_conflicts() {
    let id = TrajectoryId(1);
    let ours = vec![
        label(0, Calculation, Confirmed, Some("17+25"), "ana"),
        label(1, Reasoning, Confirmed, None, "ana"),
        label(2, Format, Suggested, Some("no marker"), "rollscope-suggest"),
    ];
    let theirs = vec![
        label(0, Calculation, Confirmed, Some("17+25"), "ben"),
        label(1, Reasoning, Confirmed, None, "ben"),
        label(1, Reasoning, Confirmed, None, "ben"),
        label(2, Format, Confirmed, Some("no marker"), "ben"),
        label(3, Calculation, Suggested, None, "ben"),
    ];
    let mut report = MergeReport::default();
    let merged = plan_merge(id, &ours, &theirs, None, &mut report);
    assert_eq!(
        (report.added, report.identical),
        (4, 0),
        "every label of ben's is his own, beside ana's (the repeated one once)"
    );
    assert!(report.conflicts.is_empty(), "two authors never conflict");
    assert_eq!(merged.len(), 6);
    assert!(merged.contains(&ours[0]) && merged.contains(&theirs[0]));
    assert!(
        !merged.contains(&ours[2]),
        "ben's confirmed format replaces the rules' suggestion, as a typed label does"
    );

    let edited = vec![
        label(0, Calculation, Confirmed, Some("17+25"), "ana"),
        label(1, Reasoning, Confirmed, Some("skipped a step"), "ana"),
    ];
    let mut report = MergeReport::default();
    let merged = plan_merge(id, &ours, &edited, None, &mut report);
    assert_eq!((report.identical, report.added), (1, 0));
    assert_eq!(report.conflicts.len(), 1, "ana's own label, edited since");
    let conflict = &report.conflicts[0];
    assert_eq!((conflict.step, conflict.resolution), (1, "unresolved"));
    assert_eq!(conflict.ours[0].note, None);
    assert_eq!(conflict.theirs[0].note.as_deref(), Some("skipped a step"));
    assert_eq!(merged, ours, "nothing overwritten without --prefer");

    let mut report = MergeReport::default();
    let taken = plan_merge(id, &ours, &edited, Some(Prefer::Theirs), &mut report);
    assert!(taken.contains(&edited[1]) && !taken.contains(&ours[1]));
    assert_eq!(report.conflicts[0].resolution, "took theirs");
    let mut report = MergeReport::default();
    let kept = plan_merge(id, &ours, &edited, Some(Prefer::Ours), &mut report);
    assert_eq!(kept, ours);
    assert_eq!(report.conflicts[0].resolution, "kept ours");
}

#[test]
fn labels_export_then_import_into_another_session() {
    let task = apples();
    let turns = vec![
        Message::assistant("17 + 25 = 43"),
        Message::assistant("Final Answer: 43"),
    ];
    let mut mine = rollout(&task, 1, turns.clone(), Some(false));
    mine.labels = vec![label(0, Calculation, Confirmed, Some("43 is wrong"), "ana")];
    let other = rollout(&task, 2, turns, Some(false));
    let (dir, store) = store();
    store
        .put_trajectories(&[mine.clone(), other.clone()])
        .unwrap();
    let records = collect_labels(&store, &Filter::default()).unwrap();
    assert_eq!(records, [LabelRecord::of(mine.id, &mine.labels[0])]);
    let path = dir.path().join("labels.jsonl");
    let mut file = std::fs::File::create(&path).unwrap();
    write_labels(&records, &mut file).unwrap();
    let mut more = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    let extra = [
        LabelRecord::of(other.id, &label(1, Reasoning, Confirmed, None, "ben")),
        LabelRecord::of(other.id, &label(9, Format, Confirmed, None, "ben")),
        LabelRecord::of(
            TrajectoryId(0xdead),
            &label(0, Format, Confirmed, None, "ben"),
        ),
    ];
    write_labels(&extra, &mut more).unwrap();
    drop((file, more));
    let read = read_labels(&path).unwrap();
    assert_eq!(read.len(), 4);

    let (_teammate_dir, teammate) = crate::common::store();
    let mut theirs = mine.clone();
    theirs.labels = vec![
        label(0, Calculation, Confirmed, Some("off by one"), "ben"),
        label(0, Calculation, Confirmed, Some("an older note"), "ana"),
    ];
    teammate.put_trajectories(&[theirs, other.clone()]).unwrap();
    let dry = merge_labels(&teammate, &read, None, true).unwrap();
    assert_eq!(dry.changed, 1);
    assert_eq!(
        teammate
            .get_without_trace(other.id)
            .unwrap()
            .unwrap()
            .labels,
        []
    );
    let report = merge_labels(&teammate, &read, None, false).unwrap();
    assert_eq!((report.read, report.added, report.identical), (4, 1, 0));
    assert_eq!(
        report.conflicts.len(),
        1,
        "ana's label with another note than ana's stored one"
    );
    assert_eq!(report.missing, [TrajectoryId(0xdead)]);
    assert_eq!(
        report.bad_steps.len(),
        1,
        "step 10 of a two-step trajectory"
    );
    let stored = teammate.get_without_trace(mine.id).unwrap().unwrap();
    assert_eq!(
        stored.labels[0].note.as_deref(),
        Some("off by one"),
        "not overwritten"
    );
    assert_eq!(
        teammate
            .get_without_trace(other.id)
            .unwrap()
            .unwrap()
            .labels
            .len(),
        1
    );
    let again = merge_labels(&teammate, &read, Some(Prefer::Theirs), false).unwrap();
    assert_eq!(again.identical, 1);
    let stored = teammate.get_without_trace(mine.id).unwrap().unwrap();
    let notes: Vec<(Option<&str>, Option<&str>)> = stored
        .labels
        .iter()
        .map(|label| (label.author.as_deref(), label.note.as_deref()))
        .collect();
    assert_eq!(
        notes,
        [
            (Some("ben"), Some("off by one")),
            (Some("ana"), Some("43 is wrong"))
        ],
        "ana's label took its exported note; ben's stayed"
    );

    std::fs::write(&path, "{\"trajectory\": \"0000000000000001\"}\n").unwrap();
    let error = format!("{:#}", read_labels(&path).unwrap_err());
    assert!(error.contains("labels.jsonl:1"), "{error}");
}
