//! The `rollscope` binary: parses the command line and runs it.

use clap::Parser;
use rollscope::cli::{self, Cli};

fn main() -> std::process::ExitCode {
    // Large temporaries of training are reused instead of page-faulted in afresh each step;
    // `ROLLSCOPE_MALLOC_DEFAULTS=1` keeps glibc's defaults (to measure what this gives).
    if std::env::var_os("ROLLSCOPE_MALLOC_DEFAULTS").is_none() {
        rollscope::model::keep_freed_memory();
    }
    // candle runs large elementwise ops on a spinning pool of its own beside the rayon pool
    // that matmuls and the model's kernels use; on a few cores the two pools fight for them,
    // so elementwise ops stay on the calling thread unless CANDLE_NUM_THREADS says otherwise.
    if std::env::var_os("CANDLE_NUM_THREADS").is_none() {
        // SAFETY: nothing else runs yet, so no thread reads the environment concurrently.
        unsafe { std::env::set_var("CANDLE_NUM_THREADS", "1") };
    }
    let parsed = Cli::parse();
    match cli::run(parsed) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
