//! Shared helpers: the fixture folder and its reference numbers, small models, SFT data.

use rollscope::formats::gsm8k;
use rollscope::model::embedded::{
    self, EmbeddedSpec, calculator_conversation, calculator_tool, init_folder,
};
use rollscope::model::{LanguageModel, LoadOptions};
use rollscope::run::{RunContext, RunControl};
use rollscope::session::SessionPaths;
use rollscope::store::Store;
use rollscope::train::SftExample;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The tiny Qwen2 fixture folder.
pub fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tiny-qwen2")
}

/// The fixture's reference.json.
pub fn reference() -> Value {
    let text = std::fs::read_to_string(fixture_dir().join("reference.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The fixture model in f32 on the CPU.
pub fn fixture_model() -> LanguageModel {
    LanguageModel::load(&fixture_dir(), &LoadOptions::default()).unwrap()
}

/// A JSON array of integers.
pub fn ids(value: &Value) -> Vec<u32> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|id| id.as_u64().unwrap() as u32)
        .collect()
}

/// A JSON array of numbers.
pub fn floats(value: &Value) -> Vec<f64> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// The embedded default model (its tokenizer, template and architecture) in a narrower
/// shape so tests run in seconds, saved in `dir` and loaded back through the ordinary loader.
pub fn embedded_model(dir: &Path) -> LanguageModel {
    let spec = EmbeddedSpec {
        hidden_size: 64,
        num_hidden_layers: 2,
        intermediate_size: 128,
        ..EmbeddedSpec::default()
    };
    embedded::init_folder(dir, &spec, &LoadOptions::default()).unwrap()
}

/// Scripted calculator conversations (GSM8K problems solved with tool calls), encoded by the
/// model's chat template with their loss masks.
pub fn calculator_examples(model: &LanguageModel, count: usize) -> Vec<SftExample> {
    gsm8k::rows(gsm8k::TRAIN, "train")
        .unwrap()
        .iter()
        .take(count)
        .map(|(_, row)| {
            let encoded = model
                .chat
                .encode(&calculator_conversation(row), &[calculator_tool()])
                .unwrap();
            SftExample::from_chat(&encoded).unwrap()
        })
        .collect()
}

/// Whether `got` is within 1e-3 relative or 1e-6 absolute of `want`.
pub fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= (1e-3 * want.abs()).max(1e-6)
}

/// The relative error of `got` against `want` (absolute when `want` is 0).
pub fn relative_error(got: f64, want: f64) -> f64 {
    if want == 0.0 {
        (got - want).abs()
    } else {
        ((got - want) / want).abs()
    }
}

/// A session under `root` with the embedded default model as its base.
pub fn session(root: &Path) -> SessionPaths {
    let paths = SessionPaths::new(root, "default").unwrap();
    init_folder(
        &paths.models_dir().join("base"),
        &EmbeddedSpec::default(),
        &LoadOptions::default(),
    )
    .unwrap();
    paths
}

/// The session's store through its server: what a test reads after running the binary,
/// whose server may still hold the store.
pub fn served_store(paths: &SessionPaths) -> Store {
    let launcher = rollscope::store::ServerLauncher::rollscope(env!("CARGO_BIN_EXE_rollscope"));
    Store::connect(&paths.store_dir(), launcher).unwrap()
}

/// A run context over the session: its store, tools and a fresh control.
pub fn context(paths: &SessionPaths) -> RunContext {
    let store = Arc::new(Store::open(&paths.store_dir()).unwrap());
    RunContext::new(
        store,
        paths.clone(),
        LoadOptions::default(),
        RunControl::new(),
    )
    .unwrap()
}
