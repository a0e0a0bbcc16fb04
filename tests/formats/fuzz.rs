//! No input panics an importer: arbitrary bytes, and real files cut and damaged at random.

use super::common::{import_with, options, read, temp_file};
use proptest::prelude::*;
use rollscope::formats::Format;
use strum::IntoEnumIterator;

/// Imports `bytes` detected and as every format; only a panic fails.
fn import_everyhow(bytes: &[u8]) {
    let file = temp_file(bytes, ".data");
    let _ = import_with(file.path(), options(None));
    for format in Format::iter() {
        let _ = import_with(file.path(), options(Some(format)));
    }
}

const REAL_FILES: [&str; 11] = [
    "log_message_deduplication.eval",
    "sharegpt_glaive_toolcall.json",
    "samples_prm800k.jsonl",
    "nemo_gym_single_tool_call_rollouts.jsonl",
    "log_formats.json",
    "samples_math-shepherd.jsonl",
    "openhands_wrong_initial_state.json",
    "openhands_resolver_output.first1.jsonl",
    "mini_swe_agent_local_replay.traj.json",
    "samples_math-aps-tree.first1.jsonl",
    "trl/completions/completions_00001.parquet",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        import_everyhow(&bytes);
    }

    #[test]
    fn json_like_text_never_panics(text in r#"[\[\]{}",:0-9a-z \n\\ки+\-]{0,300}"#) {
        import_everyhow(text.as_bytes());
    }

    #[test]
    fn damaged_real_files_never_panic(
        which in 0..REAL_FILES.len(),
        cut in 0.0..1.0f64,
        damage in proptest::collection::vec((0.0..1.0f64, any::<u8>()), 0..8),
    ) {
        let mut bytes = read(REAL_FILES[which]);
        for (at, byte) in damage {
            let index = (at * bytes.len() as f64) as usize % bytes.len();
            bytes[index] = byte;
        }
        bytes.truncate((cut * bytes.len() as f64) as usize);
        import_everyhow(&bytes);
    }
}
