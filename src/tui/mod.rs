//! The terminal UI: an Elm-style `App` (a state struct per tab under `state`, `update`
//! without I/O), render functions over `&App` under `view`, and a loop that drains terminal
//! events and engine updates, then draws once.

pub mod action;
pub mod annotate;
pub mod app;
pub mod charts;
pub mod content;
pub mod curate_form;
pub mod cycle;
pub mod filter_expr;
pub mod fork_lines;
pub mod help_page;
pub mod highlight;
mod key_chord;
pub mod keymap;
pub mod launch_form;
pub mod layout;
pub mod memory;
pub mod metric_picker;
pub mod outcome;
pub mod outline;
pub mod prompt;
pub mod render;
pub mod rich;
pub mod search_hits;
pub mod series;
pub mod state;
pub mod tags;
mod terminal;
pub mod theme;
pub mod token_text;
pub mod view;
pub mod wrap;

pub use action::Action;
pub use app::{App, AppConfig, Msg, Screen, Tab};
pub use terminal::{run, session_app_config};
