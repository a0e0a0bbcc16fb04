//! The token view spells tokens with the tokenizer of the trajectory's run, through the engine.

use super::engine::next;
use crate::common::*;
use rollscope::engine::{Command, Engine, EngineConfig, Tag, Update};
use rollscope::store::Store;
use std::sync::Arc;

#[test]
fn the_token_view_spells_tokens_with_the_tokenizer_of_the_trajectorys_run() {
    use rollscope::engine::Window;
    use rollscope::engine::{SpellingSource, visible};
    use rollscope::model::LoadOptions;
    use rollscope::model::embedded::{EmbeddedSpec, init_folder};
    use rollscope::session::SessionPaths;
    use rollscope::trajectory::{RunInfo, RunKind, TokenTrace};
    use rollscope::tui::{Action, Msg};
    let dir = tempfile::tempdir().unwrap();
    let paths = SessionPaths::new(dir.path(), "s").unwrap();
    let base = paths.base_model();
    let model = init_folder(&base, &EmbeddedSpec::default(), &LoadOptions::default()).unwrap();
    let store = Arc::new(Store::open(&paths.store_dir()).unwrap());
    let run = RunInfo::new(
        "rollout-0001".into(),
        RunKind::Rollout,
        0,
        base.display().to_string(),
        1,
    );
    store.put_run(&run).unwrap();
    let text = "What is 12 + 30?\nThe answer is 42.";
    let ids = model.chat.tokenizer.encode(text).unwrap();
    let mut sampled = trajectory(0);
    sampled.run = Some(run.id.clone());
    sampled.token_trace = Some(TokenTrace {
        loss_mask: vec![1; ids.len()],
        token_ids: ids.clone(),
        logprobs: Vec::new(),
        entropies: Vec::new(),
    });
    store
        .put_trajectories(std::slice::from_ref(&sampled))
        .unwrap();
    let config = EngineConfig {
        session: Some(paths.clone()),
        ..EngineConfig::default()
    };
    let (engine, updates) = Engine::spawn(store, config).unwrap();
    assert!(engine.send(Command::LoadTrajectory {
        tag: Tag(7),
        id: sampled.id
    }));
    let Update::Trajectory { loaded, .. } = next(&updates) else {
        panic!("expected the trajectory")
    };
    let spellings = loaded.spellings.clone().expect("its tokens are spelled");
    assert_eq!(spellings.source, SpellingSource::Run);
    assert_eq!(spellings.tokenizer, base.join("tokenizer.json"));
    let spelled: String = ids.iter().map(|id| spellings.by_id[id].as_str()).collect();
    assert_eq!(
        spelled,
        visible(text),
        "the tokens spell the text, white space shown"
    );

    // The list's preview of its first row is that trajectory; enter opens it from there.
    let mut app = app(120, 40);
    let list = list_tag(&app.start());
    let commands = app.update(Msg::Engine(Update::Window(Window {
        tag: list,
        start: 0,
        rows: summaries(4),
        matching: Some(4),
        stored: Some(4),
    })));
    let tag = commands
        .iter()
        .find_map(|command| match command {
            Command::LoadTrajectory { tag, id } if *id == sampled.id => Some(*tag),
            _ => None,
        })
        .expect("the first row's preview is requested");
    app.update(Msg::Engine(Update::Trajectory { tag, loaded }));
    act(&mut app, &[Action::Open]);
    act(&mut app, &[Action::Tokens]);
    let screen = render(&app);
    assert!(screen.contains("spelled"), "{screen}");
    assert!(
        screen.contains("·answer") && screen.contains("?⏎"),
        "{screen}"
    );
    assert!(!screen.contains("shown as ids"), "{screen}");
}
