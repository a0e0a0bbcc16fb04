//! The terminal UI: update tests (messages in, state and commands out), snapshots of every
//! view, small terminals and hostile content, themes and keymaps, and the engine through
//! its real channels against a store in a temporary folder.

#[path = "tui/blind.rs"]
mod blind;
#[path = "tui/cli.rs"]
mod cli;
#[path = "tui/common.rs"]
mod common;
#[path = "tui/content.rs"]
mod content;
#[path = "tui/curate_views.rs"]
mod curate_views;
#[path = "tui/engine.rs"]
mod engine;
#[path = "tui/engine_runs.rs"]
mod engine_runs;
#[path = "tui/fork_tree.rs"]
mod fork_tree;
#[path = "tui/label_kinds.rs"]
mod label_kinds;
#[path = "tui/prompt_keys.rs"]
mod prompt_keys;
#[path = "tui/reading.rs"]
mod reading;
#[path = "tui/remembered.rs"]
mod remembered;
#[path = "tui/rendering.rs"]
mod rendering;
#[path = "tui/robust.rs"]
mod robust;
#[path = "tui/run_charts.rs"]
mod run_charts;
#[path = "tui/search.rs"]
mod search;
#[path = "tui/settings.rs"]
mod settings;
#[path = "tui/snapshots.rs"]
mod snapshots;
#[path = "tui/step_cursor.rs"]
mod step_cursor;
#[path = "tui/token_spelling.rs"]
mod token_spelling;
#[path = "tui/transcript.rs"]
mod transcript;
#[path = "tui/update_annotate.rs"]
mod update_annotate;
#[path = "tui/update_disagree.rs"]
mod update_disagree;
#[path = "tui/update_follow.rs"]
mod update_follow;
#[path = "tui/update_fork.rs"]
mod update_fork;
#[path = "tui/update_nav.rs"]
mod update_nav;
#[path = "tui/update_runs.rs"]
mod update_runs;
#[path = "tui/update_views.rs"]
mod update_views;
