//! Schema versions: old stores migrate (a listing row for every trajectory), newer ones are refused.

use super::*;
use crate::copy_dir::copy_dir;

#[test]
fn a_schema_1_store_gets_a_listing_row_for_every_trajectory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let (store, _) = filled(&path, 30);
    let failed = Query {
        filter: Filter {
            outcome: Some(Outcome::Fail),
            ..Filter::default()
        },
        ..Query::default()
    };
    let expected = store.listed_ids(&failed).unwrap();
    drop(store);
    {
        let db = raw_sled(&path);
        assert_eq!(
            row_bytes(&db),
            30 * ROW_ENTRY_BYTES,
            "a row per trajectory as written"
        );
        let blocks: Vec<_> = db.scan_prefix(b"W").keys().map(Result::unwrap).collect();
        for key in blocks {
            db.remove(key).unwrap();
        }
        db.insert(b"mschema", &1u32.to_be_bytes()).unwrap();
        db.flush().unwrap();
    }
    let store = Store::open(&path).unwrap();
    assert_eq!(
        store.schema_version().unwrap(),
        rollscope::store::SCHEMA_VERSION
    );
    assert_eq!(store.listed_ids(&failed).unwrap(), expected);
    drop(store);
    let db = raw_sled(&path);
    assert_eq!(
        row_bytes(&db),
        30 * ROW_ENTRY_BYTES,
        "the migration wrote them"
    );
}

/// The store's sled database opened directly, once the store just dropped has let it go:
/// sled's flusher thread releases the file lock a moment after the last handle is dropped
/// (the store's own open waits for it the same way).
fn raw_sled(path: &std::path::Path) -> sled::Db {
    for _ in 0..100 {
        match sled::open(path) {
            Err(sled::Error::Io(error)) if error.to_string().contains("could not acquire lock") => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            result => return result.unwrap(),
        }
    }
    panic!(
        "{}: sled's lock still held after two seconds",
        path.display()
    );
}

/// Bytes of a listing row in its block: the low byte of its sequence number, its id, its flags.
const ROW_ENTRY_BYTES: usize = 10;

/// Bytes of every block of listing rows (key prefix `W`).
fn row_bytes(db: &sled::Db) -> usize {
    db.scan_prefix(b"W")
        .map(|entry| entry.unwrap().1.len())
        .sum()
}

#[test]
fn schema_versions_are_checked_and_old_stores_migrate() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let (store, trajectories) = filled(&path, 12);
    drop(store);
    {
        let db = raw_sled(&path);
        db.remove(b"mschema").unwrap();
        for key in db.scan_prefix(b"s").keys() {
            db.remove(key.unwrap()).unwrap();
        }
        db.flush().unwrap();
    }
    let store = Store::open(&path).unwrap();
    assert_eq!(
        store.schema_version().unwrap(),
        rollscope::store::SCHEMA_VERSION
    );
    assert_eq!(
        store.trajectory_count().unwrap(),
        12,
        "summaries rebuilt by the migration"
    );
    assert_eq!(all(&store, Filter::default())[0].id, trajectories[0].id);
    drop(store);
    {
        let db = raw_sled(&path);
        db.insert(b"mschema", &99u32.to_be_bytes()).unwrap();
        db.flush().unwrap();
    }
    assert!(matches!(
        Store::open(&path),
        Err(StoreError::NewerSchema { found: 99, .. })
    ));
}

#[test]
fn run_records_written_before_settings_were_typed_read_typed() {
    use rollscope::trajectory::RunSettings;
    use serde_json::Value;
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/stores/before-typed-settings");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    copy_dir(&fixture.join("store"), &path);
    let store = Store::open(&path).unwrap();
    let before: Vec<Value> = std::fs::read_to_string(fixture.join("runs.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let runs = store.runs().unwrap();
    assert_eq!(runs.len(), before.len());
    let mut seen = std::collections::HashSet::new();
    for old in &before {
        let run = runs.iter().find(|run| run.id == old["id"]).unwrap();
        let config = &old["config"];
        let field = |name: &str| config.get(name).cloned();
        match &run.config {
            RunSettings::Demo { group_size } => {
                assert_eq!(Some(Value::from(*group_size)), field("group_size"));
            }
            RunSettings::Folder(folder) => {
                assert_eq!(field("folder"), Some(Value::from(folder.to_str())))
            }
            RunSettings::Follow(paths) => {
                assert_eq!(field("follow"), Some(serde_json::to_value(paths).unwrap()));
            }
            RunSettings::Eval { tasks, n, pass_k } => {
                assert_eq!(field("tasks"), Some(Value::from(tasks.as_str())));
                assert_eq!(field("n"), Some(Value::from(*n)));
                assert_eq!(field("pass_k"), Some(Value::from(*pass_k)));
            }
            RunSettings::Training(_) | RunSettings::Rollout(_) => {
                let typed = serde_json::to_value(&run.config).unwrap();
                let settings = typed.as_object().and_then(|tagged| tagged.values().next());
                assert!(
                    settings.is_some_and(|settings| holds(settings, config)),
                    "{}: every value the record held, typed",
                    run.id
                );
            }
            RunSettings::None => assert!(config.is_null(), "{}", run.id),
        }
        seen.insert(std::mem::discriminant(&run.config));
        let mut record = serde_json::to_value(run).unwrap();
        record["config"] = config.clone();
        assert_eq!(record, *old, "{}: nothing else changed", run.id);
    }
    assert!(seen.len() >= 6, "the fixture holds six kinds of settings");
    for run in &runs {
        store.put_run(run).unwrap();
        assert_eq!(
            store.get_run(&run.id).unwrap().as_ref(),
            Some(run),
            "typed records round-trip"
        );
    }
}

/// Whether `new` holds every value of `old` (keys added since, with their defaults, aside).
fn holds(new: &serde_json::Value, old: &serde_json::Value) -> bool {
    match (new, old) {
        (serde_json::Value::Object(new), serde_json::Value::Object(old)) => old
            .iter()
            .all(|(key, value)| new.get(key).is_some_and(|new| holds(new, value))),
        _ => new == old,
    }
}
