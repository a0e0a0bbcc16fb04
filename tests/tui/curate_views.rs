//! The Stats comparison, the Curate form, the audit queue: update tests, and the engine's
//! answers to their commands.

use crate::common::*;
use crossterm::event::KeyCode;
use rollscope::curate::audit::Sign;
use rollscope::curate::{Finding, Trait};
use rollscope::engine::{
    Activity, Command, Engine, EngineConfig, ExportProgress, Overview, Tag, Update,
};
use rollscope::formats::Format;
use rollscope::store::{Filter, Outcome};
use rollscope::tui::Action;
use rollscope::tui::Msg;
use rollscope::tui::curate_form::{ExportStatus, Field};
use std::time::Duration;

fn with_overview() -> rollscope::tui::App {
    let mut app = listed_app(100, 100);
    act(&mut app, &[Action::TabStats]);
    app.update(Msg::Engine(Update::Overview(Box::new(Overview::of(
        &summaries(512),
    )))));
    app
}

#[test]
fn stats_pin_a_before_version_and_move_the_after_one() {
    let mut app = with_overview();
    act(&mut app, &[Action::Down, Action::Pin]);
    assert_eq!(app.tabs.stats.pinned, Some(1));
    act(&mut app, &[Action::Down, Action::Down]);
    assert_eq!((app.tabs.stats.pinned, app.tabs.stats.scroll), (Some(1), 3));
    let screen = render(&app);
    assert!(
        screen.contains("before / after · A grpo-0001 @ 1 → B grpo-0001 @ 3"),
        "{screen}"
    );
    assert!(screen.contains("error kinds by policy version"));
    act(&mut app, &[Action::PageDown]);
    assert_eq!(app.tabs.stats.scroll, 13);
    act(&mut app, &[Action::Top, Action::Down, Action::Pin]);
    assert_eq!(
        app.tabs.stats.pinned, None,
        "pinning the pinned version unpins it"
    );
}

#[test]
fn the_curate_form_asks_for_previews_and_runs_the_export() {
    let mut app = with_overview();
    act(&mut app, &[Action::TabCurate]);
    assert_eq!(app.tabs.curate.form.field, Field::Source);
    let commands = act(&mut app, &[Action::Down, Action::Right]);
    let [Command::PreviewSelection { rules, filter }] = commands.as_slice() else {
        panic!("expected a preview request, got {commands:?}")
    };
    assert_eq!((rules.per_task, filter.is_empty()), (2, true));
    assert!(app.tabs.curate.form.waiting);

    act(&mut app, &[Action::Top, Action::Open]);
    assert!(app.prompt.is_some(), "enter on the source edits it");
    type_text(&mut app, "fail run:grpo-0001");
    let commands = app.update(key(KeyCode::Enter));
    let [Command::PreviewSelection { filter, .. }] = commands.as_slice() else {
        panic!("expected a preview request, got {commands:?}")
    };
    assert_eq!(filter.outcome, Some(Outcome::Fail));
    let preview = rollscope::curate::SelectionPreview {
        samples: 10,
        tasks: 2,
        tasks_kept: 1,
        samples_kept: 1,
        tasks_no_pass: 1,
        ..Default::default()
    };
    app.update(Msg::Engine(Update::SelectionPreview {
        filter: Box::new(filter.clone()),
        rules: Box::new(app.tabs.curate.form.rules.clone()),
        preview: Box::new(preview.clone()),
        kept: vec![trajectory(3).id],
    }));
    assert_eq!(app.tabs.curate.form.current_preview(), Some(&preview));
    assert!(!app.tabs.curate.form.waiting);
    assert!(render(&app).contains("1 tasks kept (50%)"));

    act(
        &mut app,
        &[
            Action::Bottom,
            Action::Up,
            Action::Up,
            Action::Up,
            Action::Up,
        ],
    );
    assert_eq!(app.tabs.curate.form.field, Field::Format);
    assert!(
        act(&mut app, &[Action::Right]).is_empty(),
        "the format needs no recount"
    );
    assert_eq!(app.tabs.curate.form.format, Format::TrlPromptCompletion);
    let commands = act(&mut app, &[Action::Bottom, Action::Open]);
    let [Command::Export { request, replace }] = commands.as_slice() else {
        panic!("expected an export, got {commands:?}")
    };
    assert!(!replace, "an existing file is never replaced unasked");
    assert_eq!(request.format, Format::TrlPromptCompletion);
    assert_eq!(
        request.path,
        std::path::PathBuf::from("exports/best-of-n.trl-prompt-completion.jsonl"),
        "the proposed path follows the format"
    );
    assert_eq!(
        request.selection.as_ref().map(|rules| rules.per_task),
        Some(2)
    );
    app.update(Msg::Engine(Update::Export(ExportProgress::Writing {
        written: 5,
        total: 10,
    })));
    assert_eq!(
        app.tabs.curate.form.export,
        ExportStatus::Writing {
            written: 5,
            total: 10
        }
    );
    assert!(render(&app).contains("writing 5 of 10"));
    app.update(Msg::Engine(Update::Failed {
        tag: None,
        during: Activity::Exporting,
        message: "disk full".into(),
    }));
    assert_eq!(
        app.tabs.curate.form.export,
        ExportStatus::Failed("disk full".into())
    );

    act(&mut app, &[Action::Top, Action::Open]);
    type_text(&mut app, " step:x");
    assert!(app.update(key(KeyCode::Enter)).is_empty());
    assert!(
        app.status
            .notice
            .as_ref()
            .is_some_and(|notice| notice.error)
    );
}

#[test]
fn the_audit_command_lists_the_queue_with_its_evidence() {
    let mut app = listed_app(64, 64);
    act(&mut app, &[Action::Command]);
    type_text(&mut app, "audit");
    let commands = app.update(key(KeyCode::Enter));
    let [Command::ListAudit { tag, filter, .. }] = commands.as_slice() else {
        panic!("expected an audit listing, got {commands:?}")
    };
    assert!(filter.is_empty());
    let rows = summaries(3);
    app.update(Msg::Engine(Update::Window(rollscope::engine::Window {
        tag: *tag,
        start: 0,
        rows: rows.clone(),
        matching: Some(3),
        stored: Some(64),
    })));
    app.update(Msg::Engine(Update::Audit {
        tag: *tag,
        findings: vec![Finding {
            id: rows[0].id,
            task_id: rows[0].task_id.clone(),
            reward: rows[0].reward,
            signs: vec![Sign {
                kind: Trait::CopiedFromPrompt,
                evidence: "the answer 25 is written in the prompt".into(),
            }],
        }],
        audited: 40,
    }));
    let audit = app.tabs.rollouts.list.audit.as_ref().unwrap();
    assert_eq!((audit.findings.len(), audit.audited), (1, Some(40)));
    let screen = render(&app);
    assert!(screen.contains("audit queue"), "{screen}");
    assert!(
        screen.contains("answer in prompt: the answer 25 is written in the prompt"),
        "{screen}"
    );
    act(&mut app, &[Action::Command]);
    type_text(&mut app, "audit");
    let commands = app.update(key(KeyCode::Enter));
    assert!(matches!(commands.as_slice(), [Command::List { .. }]));
    assert!(app.tabs.rollouts.list.audit.is_none());
}

#[test]
fn an_empty_audit_queue_says_nothing_looks_suspicious() {
    let mut app = listed_app(64, 64);
    act(&mut app, &[Action::Command]);
    type_text(&mut app, "audit");
    let commands = app.update(key(KeyCode::Enter));
    let [Command::ListAudit { tag, .. }] = commands.as_slice() else {
        panic!("expected an audit listing, got {commands:?}")
    };
    app.update(Msg::Engine(Update::Window(rollscope::engine::Window {
        tag: *tag,
        start: 0,
        rows: Vec::new(),
        matching: Some(0),
        stored: Some(64),
    })));
    app.update(Msg::Engine(Update::Audit {
        tag: *tag,
        findings: Vec::new(),
        audited: 40,
    }));
    let screen = render(&app);
    assert!(
        screen.contains("no high-reward rollout looks suspicious (40 audited)"),
        "{screen}"
    );
    assert!(!screen.contains("the store is empty"), "{screen}");
}

#[test]
fn the_engine_previews_exports_and_audits() {
    let (dir, store) = demo_store(256);
    let (engine, updates) = Engine::spawn(store, EngineConfig::default()).unwrap();
    let next = || loop {
        match updates
            .recv_timeout(Duration::from_secs(30))
            .expect("an update")
        {
            Update::State(_) => continue,
            update => return update,
        }
    };
    engine.send(Command::PreviewSelection {
        filter: Filter::default(),
        rules: Default::default(),
    });
    let Update::SelectionPreview { preview, kept, .. } = next() else {
        panic!("expected a selection preview")
    };
    assert_eq!((preview.tasks, preview.samples), (32, 256));
    assert_eq!(kept.len(), preview.samples_kept);
    engine.send(Command::List {
        tag: Tag(2),
        listing: rollscope::engine::Listing {
            filter: Filter {
                ids: Some(kept.clone()),
                ..Filter::default()
            },
            ..Default::default()
        },
        window: 0..1000,
    });
    let chosen = loop {
        if let Update::Window(window) = next()
            && window.matching.is_some()
        {
            break window;
        }
    };
    assert!(matches!(next(), Update::Queue { .. }));
    let mut listed: Vec<_> = chosen.rows.iter().map(|row| row.id).collect();
    let mut expected = kept.clone();
    listed.sort();
    expected.sort();
    assert_eq!(listed, expected, "the chosen samples, and only them");

    let path = dir.path().join("out").join("best.jsonl");
    let export = |replace| Command::Export {
        request: Box::new(rollscope::curate::ExportRequest {
            filter: Filter::default(),
            selection: Some(Default::default()),
            format: Format::OpenaiMessages,
            options: Default::default(),
            path: path.clone(),
            session: None,
            repairs: Vec::new(),
        }),
        replace,
    };
    engine.send(export(false));
    let report = loop {
        match next() {
            Update::Export(ExportProgress::Writing { total, .. }) => {
                assert_eq!(total, preview.samples_kept)
            }
            Update::Export(ExportProgress::Done(report)) => break report,
            other => panic!("unexpected {other:?}"),
        }
    };
    assert_eq!(report.path, path);
    assert_eq!(report.manifest.counts.written, preview.samples_kept);
    assert!(report.manifest_path.is_file());
    assert_eq!(
        report.manifest.session.as_deref(),
        Some(dir.path().file_name().unwrap().to_str().unwrap())
    );
    let written = std::fs::read(&path).unwrap();
    std::fs::write(&path, "kept\n").unwrap();
    engine.send(export(false));
    assert_eq!(
        next(),
        Update::Export(ExportProgress::Exists(path.clone())),
        "an existing file is not replaced unasked"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "kept\n");
    engine.send(export(true));
    loop {
        if let Update::Export(ExportProgress::Done(_)) = next() {
            break;
        }
    }
    assert_eq!(
        std::fs::read(&path).unwrap(),
        written,
        "replaced when asked"
    );

    engine.send(Command::ListAudit {
        tag: Tag(3),
        filter: Filter::default(),
        options: Default::default(),
        window: 0..10,
    });
    let Update::Window(window) = next() else {
        panic!("expected a window")
    };
    let Update::Audit {
        findings, audited, ..
    } = next()
    else {
        panic!("expected the audit")
    };
    assert_eq!(window.matching, Some(findings.len()));
    assert!(audited > 0);
}

#[test]
fn the_form_steps_min_prm_lists_the_chosen_samples_and_asks_before_replacing() {
    let mut app = with_overview();
    act(
        &mut app,
        &[
            Action::TabCurate,
            Action::Down,
            Action::Down,
            Action::Down,
            Action::Down,
        ],
    );
    assert_eq!(app.tabs.curate.form.field, Field::MinPrm);
    let commands = act(&mut app, &[Action::Right]);
    assert!(
        matches!(commands.as_slice(), [Command::PreviewSelection { rules, .. }] if rules.min_prm == Some(0.1))
    );
    act(&mut app, &[Action::Right; 12]);
    assert_eq!(app.tabs.curate.form.rules.min_prm, Some(1.0), "at most 1");
    act(&mut app, &[Action::Left; 5]);
    assert_eq!(app.tabs.curate.form.rules.min_prm, Some(0.5));
    assert!(render(&app).contains("≥ 0.5 on every step"));
    act(&mut app, &[Action::Left; 5]);
    assert_eq!(app.tabs.curate.form.rules.min_prm, None, "below 0.1 is off");

    act(&mut app, &[Action::Bottom, Action::Up]);
    assert_eq!(app.tabs.curate.form.field, Field::Chosen);
    act(&mut app, &[Action::Open]);
    assert_eq!(
        app.tab,
        rollscope::tui::Tab::Curate,
        "nothing chosen before a preview"
    );
    let chosen = vec![trajectory(5).id, trajectory(9).id];
    app.update(Msg::Engine(Update::SelectionPreview {
        filter: Box::default(),
        rules: Box::new(app.tabs.curate.form.rules.clone()),
        preview: Box::new(rollscope::curate::SelectionPreview {
            samples_kept: 2,
            ..Default::default()
        }),
        kept: chosen.clone(),
    }));
    assert!(render(&app).contains("2 samples · enter lists them in the Rollouts tab"));
    let commands = act(&mut app, &[Action::Open]);
    assert_eq!(app.tab, rollscope::tui::Tab::Rollouts);
    let listed = commands
        .iter()
        .find_map(|command| match command {
            Command::List { listing, .. } => Some(listing.filter.clone()),
            _ => None,
        })
        .expect("the chosen samples listed");
    let mut sorted = chosen;
    sorted.sort_unstable();
    assert_eq!(listed.ids, Some(sorted), "the chosen ids, in id order");

    act(
        &mut app,
        &[Action::TabCurate, Action::Bottom, Action::Up, Action::Up],
    );
    assert_eq!(app.tabs.curate.form.field, Field::Path);
    app.tabs.curate.set_path("mine.jsonl");
    act(&mut app, &[Action::Up, Action::Up, Action::Right]);
    assert_eq!(
        app.tabs.curate.form.path, "mine.jsonl",
        "a typed path stays"
    );
    let existing = std::path::PathBuf::from("/s/mine.jsonl");
    app.update(Msg::Engine(Update::Export(ExportProgress::Exists(
        existing.clone(),
    ))));
    assert_eq!(
        app.tabs.curate.form.export,
        ExportStatus::Exists {
            path: existing.clone(),
            typed: "mine.jsonl".into()
        }
    );
    assert!(render(&app).contains("enter on Export again replaces it"));
    app.tabs.curate.set_path("sub/mine.jsonl");
    let commands = act(&mut app, &[Action::Bottom, Action::Open]);
    assert!(
        matches!(
            commands.as_slice(),
            [Command::Export { replace: false, .. }]
        ),
        "another path is not replaced unasked: {commands:?}"
    );
    app.tabs.curate.set_path("mine.jsonl");
    app.update(Msg::Engine(Update::Export(ExportProgress::Exists(
        existing,
    ))));
    let commands = act(&mut app, &[Action::Bottom, Action::Open]);
    assert!(
        matches!(commands.as_slice(), [Command::Export { replace: true, .. }]),
        "the second Export to the same path replaces: {commands:?}"
    );
}
