//! The model module against reference numbers and its own invariants: fixture matches,
//! gradients, fused kernels against the plain path, generation, the embedded default, bad
//! input, Llama, and the CLI verbs.

#[path = "model/cli.rs"]
mod cli;
#[path = "model/common.rs"]
mod common;
#[path = "model/embedded.rs"]
mod embedded;
#[path = "model/errors.rs"]
mod errors;
#[path = "model/fixtures.rs"]
mod fixtures;
#[path = "model/generation.rs"]
mod generation;
#[path = "model/gradients.rs"]
mod gradients;
#[path = "model/kernels.rs"]
mod kernels;
#[path = "model/llama.rs"]
mod llama;
#[path = "model/loading.rs"]
mod loading;
