//! The full-text index: words, phrases and field queries find the right trajectories, a
//! rewrite or delete leaves no stale hit, writes are indexed in the background once they
//! pause, an index left behind catches up from the journal, and a missing one is rebuilt.

use rollscope::store::{Filter, Outcome, Query, SearchError, Store, StoreError, StoreOptions};
use rollscope::trajectory::{Message, Reward, ToolCall, Trajectory, TrajectoryId};

/// A calculator episode: the question, a call, its result, the final answer.
fn episode(id: u64, question: &str, expression: &str, result: &str, passed: bool) -> Trajectory {
    let mut call = Message::assistant("I will compute it.");
    call.tool_calls.push(ToolCall::new(
        "calculator",
        format!("{{\"expression\": \"{expression}\"}}"),
    ));
    let mut answer = Message::tool(result);
    answer.name = Some("calculator".into());
    let mut trajectory = Trajectory::new(
        TrajectoryId(id),
        vec![
            Message::user(question),
            call,
            answer,
            Message::assistant(format!("Final Answer: {result}")),
        ],
    );
    trajectory.task_id = Some(format!("arith-{id:05}"));
    trajectory.reward = Some(Reward::scalar(if passed { 1.0 } else { 0.0 }));
    trajectory
}

fn fixture() -> Vec<Trajectory> {
    vec![
        episode(
            1,
            "Tom has 17 apples and buys 25 more.",
            "17+25",
            "42",
            true,
        ),
        episode(2, "Ann has 9 oranges and eats 4.", "9-4", "5", true),
        episode(
            3,
            "A jar holds 240 marbles; one more is added.",
            "240+1",
            "241",
            false,
        ),
    ]
}

fn ids(store: &Store, query: &str) -> Vec<u64> {
    store
        .search_text(query)
        .unwrap_or_else(|error| panic!("`{query}`: {error}"))
        .into_iter()
        .map(|id| id.0)
        .collect()
}

#[test]
fn words_phrases_and_fields_find_their_trajectories() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    store.put_trajectories(&fixture()).unwrap();
    assert_eq!(ids(&store, "oranges"), [2]);
    assert_eq!(ids(&store, "APPLES"), [1], "case does not matter");
    assert_eq!(
        ids(&store, "241"),
        [3],
        "a word only a tool result and answer hold"
    );
    assert_eq!(ids(&store, "\"Final Answer: 241\""), [3]);
    assert_eq!(ids(&store, "\"answer final\""), Vec::<u64>::new());
    assert_eq!(
        ids(&store, "calculator"),
        [1, 2, 3],
        "tool names are words too"
    );
    assert_eq!(ids(&store, "tool:calculator"), [1, 2, 3]);
    assert_eq!(ids(&store, "tool:Calculator 17"), [1]);
    assert_eq!(ids(&store, "role:tool 5"), [2]);
    assert_eq!(ids(&store, "role:user 5"), Vec::<u64>::new());
    assert_eq!(ids(&store, "task:arith-00003"), [3]);
    assert_eq!(ids(&store, "oranges OR marbles"), [2, 3]);
    assert_eq!(
        ids(&store, "role:tool -42"),
        [2, 3],
        "tool results without 42"
    );
    assert_eq!(
        ids(&store, "apples 241"),
        Vec::<u64>::new(),
        "one message holds all words"
    );
    let hits = store.text_hits("241", TrajectoryId(3)).unwrap();
    assert_eq!(
        hits.messages,
        [2, 3],
        "the tool result and the final answer"
    );
    assert_eq!(hits.words, ["241"]);
}

#[test]
fn stems_and_prefix_words_find_other_forms_and_mark_them() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let mut trajectories = fixture();
    trajectories.push(episode(
        4,
        "The worker segfaults when it compiles the reservation twice.",
        "2*2",
        "4",
        false,
    ));
    store.put_trajectories(&trajectories).unwrap();
    assert_eq!(ids(&store, "segfault"), [4], "a stem finds its other forms");
    assert_eq!(ids(&store, "apple"), [1]);
    assert_eq!(ids(&store, "compiling"), [4]);
    assert_eq!(ids(&store, "segf*"), [4], "a prefix word");
    assert_eq!(ids(&store, "segfx*"), Vec::<u64>::new());
    assert_eq!(
        ids(&store, "reservat*"),
        [4],
        "a prefix longer than the stem it starts with (reserv)"
    );
    assert_eq!(ids(&store, "resx*"), Vec::<u64>::new());
    assert_eq!(ids(&store, "marb* 240"), [3], "prefixes AND with words");
    assert_eq!(
        ids(&store, "marb* 241"),
        Vec::<u64>::new(),
        "in one message"
    );
    assert_eq!(
        ids(&store, "tool:calc* 9"),
        [2],
        "a prefix of a field's value"
    );
    assert_eq!(ids(&store, "has -orang*"), [1], "an excluded prefix");
    assert_eq!(ids(&store, "\"Final Answer: 24\"*"), [3], "a phrase prefix");
    let hits = store.text_hits("segfault work*", TrajectoryId(4)).unwrap();
    assert_eq!(hits.messages, [0]);
    assert_eq!(hits.words, ["segfault"]);
    assert_eq!(hits.prefixes, ["work"]);
    for query in ["-orang*", "colour:red*"] {
        let message = store.search_text(query).unwrap_err().to_string();
        assert!(message.contains("prefix*"), "{query}: {message}");
    }
}

#[test]
fn a_malformed_query_is_a_clear_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    store.put_trajectories(&fixture()).unwrap();
    for query in ["colour:red", "\"unclosed phrase", "(oranges", "-oranges"] {
        match store.search_text(query) {
            Err(StoreError::Search(SearchError::BadQuery {
                query: typed,
                reason,
            })) => {
                assert_eq!(typed, query);
                let message = StoreError::Search(SearchError::BadQuery {
                    query: typed,
                    reason,
                })
                .to_string();
                assert!(message.contains("tool:NAME"), "{message}");
            }
            other => panic!("`{query}` gave {other:?}"),
        }
    }
    let message = store.search_text("colour:red").unwrap_err().to_string();
    assert!(message.contains("no field `colour`"), "{message}");
}

#[test]
fn rewrites_and_deletes_leave_no_duplicate_or_stale_hit() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    store.put_trajectories(&fixture()).unwrap();
    let mut rewritten = episode(2, "Ann has 9 pears and eats 4.", "9-4", "5", true);
    store.put_trajectories(&[rewritten.clone()]).unwrap();
    store.put_trajectories(&[rewritten.clone()]).unwrap();
    assert_eq!(ids(&store, "oranges"), Vec::<u64>::new());
    assert_eq!(ids(&store, "pears"), [2]);
    assert_eq!(
        store.text_hits("pears", TrajectoryId(2)).unwrap().messages,
        [0]
    );
    rewritten.messages[0].content = "Ann has 9 plums.".into();
    store
        .put_trajectories(&[rewritten.clone(), rewritten])
        .unwrap();
    assert_eq!(ids(&store, "plums"), [2], "the same id twice in one batch");
    let mut edited = store.get(TrajectoryId(1)).unwrap().unwrap();
    edited.messages[0].content = "Tom has 17 kiwis.".into();
    store.put_trajectories(&[edited]).unwrap();
    assert_eq!(ids(&store, "kiwis"), [1]);
    assert_eq!(ids(&store, "apples"), Vec::<u64>::new());
    store.delete_trajectories(&[TrajectoryId(3)]).unwrap();
    assert_eq!(ids(&store, "marbles"), Vec::<u64>::new());
    assert_eq!(ids(&store, "calculator"), [1, 2]);
}

#[test]
fn a_missing_or_stale_index_is_rebuilt_from_the_records() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open(dir.path()).unwrap();
        store.put_trajectories(&fixture()[..2]).unwrap();
    }
    std::fs::remove_dir_all(dir.path().join("search")).unwrap();
    {
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(ids(&store, "oranges"), [2], "rebuilt when missing");
    }
    {
        let options = StoreOptions {
            text_index: false,
            ..StoreOptions::default()
        };
        let store = Store::open_with(dir.path(), options).unwrap();
        store.put_trajectories(&fixture()[2..]).unwrap();
        assert!(
            store.search_text("marbles").is_err(),
            "no index on this handle"
        );
    }
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(
        ids(&store, "marbles"),
        [3],
        "caught up when behind the store"
    );
    assert_eq!(store.text_index_behind().unwrap(), 0);
    assert_eq!(ids(&store, "calculator"), [1, 2, 3]);
    std::fs::write(dir.path().join("search").join("meta.json"), b"not json").unwrap();
    drop(store);
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(ids(&store, "marbles"), [3], "rebuilt when unreadable");
}

#[test]
fn writes_are_indexed_in_the_background_once_they_pause() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    store.put_trajectories(&fixture()[..2]).unwrap();
    store.delete_trajectories(&[TrajectoryId(1)]).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while store.text_index_behind().unwrap() > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "no search was made, yet the index should have caught up by itself"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(ids(&store, "calculator"), [2]);
    drop(store);
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(
        store.text_index_behind().unwrap(),
        0,
        "the catch-up was committed"
    );
}

#[test]
fn queries_combine_full_text_with_the_other_filters() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    store.put_trajectories(&fixture()).unwrap();
    let listed = |filter: Filter| -> Vec<u64> {
        store
            .query(&Query {
                filter,
                ..Query::default()
            })
            .unwrap()
            .into_iter()
            .map(|summary| summary.id.0)
            .collect()
    };
    let text = |query: &str| Filter {
        full_text: Some(query.into()),
        ..Filter::default()
    };
    assert_eq!(listed(text("tool:calculator")), [1, 2, 3]);
    let failing = Filter {
        outcome: Some(Outcome::Fail),
        ..text("calculator")
    };
    assert_eq!(listed(failing.clone()), [3]);
    assert_eq!(store.count(&failing).unwrap(), 1);
    assert!(
        store
            .query(&Query {
                filter: text("nope:x"),
                ..Query::default()
            })
            .is_err()
    );
}

#[test]
fn compaction_keeps_the_index_in_step() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    store.put_trajectories(&fixture()).unwrap();
    store.delete_trajectories(&[TrajectoryId(2)]).unwrap();
    let (store, _) = store.compact().unwrap();
    assert!(dir.path().join("search").join("meta.json").is_file());
    assert_eq!(ids(&store, "calculator"), [1, 3]);
    store.put_trajectories(&fixture()[1..2]).unwrap();
    assert_eq!(ids(&store, "oranges"), [2]);
}

#[test]
fn a_search_lists_what_it_matches_whether_its_hits_are_few_or_many() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let fruit = |n: u64| match n {
        7 | 29 => "plums",
        n if n % 4 == 0 => "pears",
        _ => "figs",
    };
    // Ids fall as they are stored, so key order and stored order are opposite.
    let id = |n: u64| 1_000 - 13 * n;
    let episodes: Vec<Trajectory> = (0..40)
        .map(|n| {
            let question = format!("Sam has {n} apples and some {}.", fruit(n));
            episode(id(n), &question, "1+1", "2", n % 3 != 0)
        })
        .collect();
    store.put_trajectories(&episodes).unwrap();
    let listed = |query: &str, outcome: Option<Outcome>| -> Vec<u64> {
        let filter = Filter {
            full_text: Some(query.into()),
            outcome,
            ..Filter::default()
        };
        let ids: Vec<u64> = store.ids(&filter).unwrap().iter().map(|id| id.0).collect();
        assert_eq!(store.count(&filter).unwrap(), ids.len(), "{query}");
        ids
    };
    let expected = |matches: &dyn Fn(u64) -> bool| -> Vec<u64> {
        (0..40).filter(|&n| matches(n)).map(id).collect()
    };
    // Hits of all, a quarter and a twentieth of the store: the first two are looked up by
    // a pass over the location index, the last one by one.
    assert_eq!(listed("apples", None), expected(&|_| true));
    assert_eq!(listed("pears", None), expected(&|n| fruit(n) == "pears"));
    assert_eq!(listed("plums", None), [id(7), id(29)]);
    assert_eq!(
        listed("pears", Some(Outcome::Pass)),
        expected(&|n| fruit(n) == "pears" && n % 3 != 0)
    );
    assert_eq!(listed("plums", Some(Outcome::Fail)), Vec::<u64>::new());
    store
        .delete_trajectories(&[TrajectoryId(id(7)), TrajectoryId(id(8))])
        .unwrap();
    assert_eq!(listed("plums", None), [id(29)]);
    assert_eq!(listed("apples", None), expected(&|n| n != 7 && n != 8));
}
