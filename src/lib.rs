//! Rollscope: a terminal workbench for agentic reinforcement learning on language models.

pub mod agent;
/// Benchmarks: measured speed and memory of the store, model, training, rollouts, exports and the TUI.
pub mod bench;
pub mod cli;
pub mod curate;
pub mod engine;
pub mod formats;
pub mod ingest;
pub mod model;
pub mod run;
pub mod session;
pub mod store;
pub mod synthetic;
pub mod text;
pub mod train;
pub mod trajectory;
pub mod tui;
