//! Rollscope: a terminal workbench for agentic reinforcement learning on language models.

pub mod cli;
pub mod engine;
pub mod formats;
pub mod session;
pub mod store;
pub mod synthetic;
pub mod text;
pub mod trajectory;
pub mod tui;
